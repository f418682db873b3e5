// The engine's side of race detection: the thin hooks Engine.cpp,
// Primitives.cpp and AsyncMma.cpp call at memory accesses and
// synchronisation (each a no-op without a detector), and the rendering of
// the races found. The happens-before logic lives in RaceDetector.
#include "simulator/CtaExecutor.h"

#include "ir/InstructionRules.h"
#include "ir/ThreadIndex.h"

#include <fmt/format.h>

#include <bit>

namespace tilescope::sim {

void CtaExecutor::raceAccess(RaceSpace space, int buffer, int64_t flat, int64_t address, int units,
                             bool write, ThreadRange threads, llvm::SMLoc loc) {
  if (options_.checkUninitialized && space != RaceSpace::Global) {
    auto agent = [&] {
      return asyncAgent_ >= 0 || threads.end <= threads.begin
                 ? std::string("an asynchronous operation")
                 : fmt::format("thread {}", threads.begin);
    };
    initAccess(space, buffer, flat, address, units, write, agent, loc);
  }
  if (!race_)
    return;
  uint32_t agent = raceAgent(threads);
  if (tcgen05LdSt_ && space == RaceSpace::Tmem && asyncAgent_ < 0)
    agent = race_->tcgen05Agent(agent, loc);
  // A warp reaches only the tensor-memory lanes of its subpartition
  // (ir/InstructionRules.h); the tensor core (an asynchronous operation)
  // reaches all. A cell is lane * 512 + column.
  if (space == RaceSpace::Tmem && asyncAgent_ < 0) {
    TmemLaneWindow window =
        tmemLaneWindowOfWarp(threadBuiltinValue(BuiltinKind::warpid, threads.begin));
    int64_t lane = address / 512;
    if (lane < window.first || lane >= window.first + window.count)
      race_->outOfView({space, buffer, flat, address, units, rank_}, write, agent, loc);
  }
  race_->access({space, buffer, flat, address, units, rank_}, write, agent, loc);
}

void CtaExecutor::raceAccessAs(uint32_t agent, int rank, RaceSpace space, int buffer, int64_t flat,
                               int64_t address, int units, bool write, llvm::SMLoc loc) {
  if (options_.checkUninitialized && space != RaceSpace::Global && cluster_ &&
      rank < static_cast<int>(cluster_->ctas.size()))
    cluster_->ctas[rank]->initAccess(
        space, buffer, flat, address, units, write,
        [&] {
          return fmt::format("thread {} of CTA rank {}", agent % p_.threads, agent / p_.threads);
        },
        loc);
  if (race_)
    race_->access({space, buffer, flat, address, units, rank}, write, agent, loc);
}

void CtaExecutor::initAccess(RaceSpace space, int buffer, int64_t flat, int64_t address, int units,
                             bool write, llvm::function_ref<std::string()> agent, llvm::SMLoc loc) {
  std::vector<uint8_t> &bits = space == RaceSpace::Shared ? sharedInit_ : tmemInit_;
  if (address < 0 || address + units > static_cast<int64_t>(bits.size()))
    return; // the access itself fails elsewhere
  if (space == RaceSpace::Shared)
    readyShared();
  if (write) {
    std::fill_n(bits.begin() + address, units, uint8_t{1});
    return;
  }
  bool unset = false;
  for (int i = 0; i < units; ++i)
    unset |= bits[address + i] == 0;
  if (!unset)
    return;
  std::vector<UninitializedRead> &found = stats_.uninitializedReads;
  const BufferPlan &b = p_.buffers[buffer];
  for (UninitializedRead &r : found)
    if (r.key == loc.getPointer() && r.buffer == b.name) {
      ++r.count;
      return;
    }
  if (found.size() >= 16)
    return;
  UninitializedRead r;
  r.space = space == RaceSpace::Shared ? "shared" : "tmem";
  r.buffer = b.name;
  std::string element;
  for (int64_t x : unflattenIndex(b.shape, flat))
    element += (element.empty() ? "" : ", ") + std::to_string(x);
  r.element = "[" + element + "]";
  r.location = where(loc);
  r.agent = agent();
  r.cta = ctaId_;
  r.count = 1;
  r.key = loc.getPointer();
  found.push_back(std::move(r));
}

void CtaExecutor::stampAsync(AsyncCopy &unit, ThreadRange threads) {
  if (devices_ && !unit.isCommit && unit.groupKind < 0)
    unit.deviceIssue = ++deviceStamp_;
  if (!race_)
    return;
  // A commit unit signals after every tcgen05 operation issued before it.
  if (unit.isCommit) {
    unit.agent = static_cast<int>(
        race_->issueAsync(AsyncKind::Tcgen05Commit, raceAgent(threads), unit.loc, &tcgen05Pipe_));
    return;
  }
  AsyncKind kind = unit.groupKind == 0   ? AsyncKind::CpAsync
                   : unit.groupKind == 1 ? AsyncKind::TmaStore
                                         : AsyncKind::TmaCopy;
  // A multicast copy lands here but was issued by a peer's thread.
  uint32_t issuer = remoteIssuer_ >= 0 ? static_cast<uint32_t>(remoteIssuer_) : raceAgent(threads);
  unit.agent = static_cast<int>(race_->issueAsync(kind, issuer, unit.loc));
}

void CtaExecutor::stampAsyncMma(PrimitiveCall &mma, int64_t warpgroup) {
  if (!race_)
    return;
  // MMAs of one pipe run in issue order: each starts after the ones before.
  VectorClock &pipe = warpgroup < 0 ? tcgen05Pipe_ : wgmmaPipe_[warpgroup];
  uint32_t agent = race_->issueAsync(warpgroup < 0 ? AsyncKind::Tcgen05Mma : AsyncKind::Wgmma,
                                     raceAgent(mma.threads), mma.call->loc, &pipe);
  mma.asyncAgent = static_cast<int>(agent);
  pipe = race_->clock(agent);
}

void CtaExecutor::releaseTo(int barrier, uint32_t agent, int64_t phaseBefore) {
  if (race_)
    race_->mbarrierRelease(barrier, agent, phaseBefore, barriers_[barrier].phase() != phaseBefore,
                           rank_);
}

void CtaExecutor::acquireFrom(Warp &w, uint32_t mask) {
  if (!race_)
    return;
  // w.waits holds one (barrier, parity) per active lane, in lane order.
  size_t i = 0;
  for (uint32_t m = mask; m && i < w.waits.size(); m &= m - 1, ++i) {
    auto [bar, parity] = w.waits[i];
    race_->mbarrierAcquire(raceThread(w.id * 32 + std::countr_zero(m)), bar, parity, rank_);
  }
}

namespace {

std::string agentText(const RaceDetector &race, const RaceSide &s, bool showCta,
                      const EngineOptions &options) {
  auto where = [&](llvm::SMLoc loc) {
    return options.where ? options.where(loc) : std::string("<unknown>");
  };
  std::string cta;
  if (showCta) {
    auto id = race.ctaId(s.cta);
    cta = fmt::format(" of CTA ({}, {}, {})", id[0], id[1], id[2]);
  }
  if (s.async)
    return fmt::format("{} issued by thread {}{} at {}", asyncKindName(s.kind), s.issuer, cta,
                       where(s.issuedAt));
  return threadName(s.agent) + cta;
}

} // namespace

std::vector<DetectedRace> describeRaces(const RaceDetector &race, const Program &program,
                                        const EngineOptions &options) {
  std::vector<DetectedRace> out;
  auto where = [&](llvm::SMLoc loc) {
    return options.where ? options.where(loc) : std::string("<unknown>");
  };
  for (const Race &r : race.races()) {
    DetectedRace f;
    const BufferPlan &b = program.buffers[r.object];
    f.kind = std::string(raceTypeName(r.kind));
    f.space = std::string(memScopeName(r.space));
    f.buffer = b.name;
    std::vector<int64_t> idx = unflattenIndex(b.shape, r.element);
    for (size_t i = 0; i < idx.size(); ++i)
      f.element += (i ? ", " : "") + std::to_string(idx[i]);
    f.element = "[" + f.element + "]";
    f.address = r.address;
    // Name the CTAs when they differ (two CTAs, or a peer reaching this
    // CTA's memory).
    bool crossCta = r.first.cta != r.second.cta || r.second.cta != r.cta;
    f.first = {agentText(race, r.first, crossCta, options), r.first.write, where(r.first.loc),
               race.ctaId(r.first.cta)};
    f.second = {agentText(race, r.second, crossCta, options), r.second.write, where(r.second.loc),
                race.ctaId(r.second.cta)};
    f.cta = race.ctaId(r.cta);
    std::string detail =
        r.space == RaceSpace::Shared ? fmt::format(" (byte {})", r.address)
        : r.space == RaceSpace::Tmem
            ? fmt::format(" (lane {}, column {})", r.address / 512, r.address % 512)
            : std::string();
    auto cta = race.ctaId(r.cta);
    std::string head = fmt::format("{} on {} {}{}{} in CTA ({}, {}, {})", f.kind, f.space, b.name,
                                   f.element, detail, cta[0], cta[1], cta[2]);
    auto access = [](const DetectedRace::Access &a) { return a.write ? "write" : "read"; };
    // "thread 5 (warp 0, lane 5) at f:3:4"; an operation's agent names its place already.
    auto who = [](const RaceSide &s, const DetectedRace::Access &a) {
      return s.async ? a.agent : a.agent + " at " + a.location;
    };
    switch (r.kind) {
    case RaceType::DataRace:
    case RaceType::AsyncRace:
      f.text = fmt::format("{}: {} by {} and {} by {} are not ordered", head, access(f.first),
                           who(r.first, f.first), access(f.second), who(r.second, f.second));
      break;
    case RaceType::MissingProxyFence:
      f.text = r.space == RaceSpace::Global
                   ? fmt::format("{}: the write by {} is read through the async proxy by {} with "
                                 "no fence.proxy.async(space = \"global\") by the writer after "
                                 "it or by the copy's issuer after it observed it",
                                 head, who(r.first, f.first), who(r.second, f.second))
                   : fmt::format("{}: the write by {} is read through the async proxy by {} with "
                                 "no fence.proxy.async by the writer in between",
                                 head, who(r.first, f.first), who(r.second, f.second));
      break;
    case RaceType::OutOfView: {
      int64_t subpartition = threadBuiltinValue(BuiltinKind::wid_in_wg, r.second.agent);
      f.text = fmt::format("{}: {} by {}, but warp {} reaches only tensor-memory lanes {} to {}",
                           head, access(f.second), who(r.second, f.second), warpOf(r.second.agent),
                           subpartition * kThreadsPerWarp, subpartition * kThreadsPerWarp + 31);
      break;
    }
    }
    out.push_back(std::move(f));
  }
  return out;
}

} // namespace tilescope::sim
