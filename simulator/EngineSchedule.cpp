// The CTA executor's scheduling (CtaExecutor.h): when a warp's wait is
// satisfied, asynchronous completions, deadlock reports, the tick loop, and
// the run of a program over sampled CTAs.
#include "simulator/CtaExecutor.h"
#include "simulator/Lanes.h"
#include "simulator/Packed.h"

#include "ir/Budget.h"
#include "ir/DeviceScale.h"
#include "ir/Intrinsics.h"
#include "ir/Printer.h"
#include "ir/ThreadIndex.h"

#include <llvm/ADT/SmallVector.h>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>

namespace tilescope::sim {

namespace {

// The elements of a region in order (index 0, 1, ...) with their buffer
// coordinates advanced one step at a time (the last extent fastest, the
// first wrapping around, as Region::coordOf's divisions give them): the
// per-element copies past a tensor's edge, without two divisions per extent
// per element.
class RegionWalk {
public:
  RegionWalk(const Region &r, const std::vector<int64_t> &shape)
      : r_(r), shape_(shape), coord_(r.start.begin(), r.start.end()), digit_(r.extent.size(), 0) {}
  // The current element's flat index in the buffer, or -1 outside it
  // (CtaExecutor::flatInBounds).
  int64_t flat() const {
    int64_t flat = 0;
    for (size_t d = 0; d < shape_.size(); ++d) {
      if (coord_[d] < 0 || coord_[d] >= shape_[d])
        return -1;
      flat = flat * shape_[d] + coord_[d];
    }
    return flat;
  }
  // Where the region's last dimension runs along the buffer's last one: the
  // current element's column there, and (true when every other coordinate
  // is inside the buffer) the flat index of column 0 of its row.
  bool rowAlongLast() const {
    return !r_.extent.empty() && static_cast<size_t>(r_.dimOf.back()) + 1 == shape_.size();
  }
  bool row(int64_t &flatOfColumn0, int64_t &column) const {
    const size_t last = shape_.size() - 1;
    int64_t flat = 0;
    for (size_t d = 0; d < last; ++d) {
      if (coord_[d] < 0 || coord_[d] >= shape_[d])
        return false;
      flat = flat * shape_[d] + coord_[d];
    }
    flatOfColumn0 = flat * shape_[last];
    column = coord_[last];
    return true;
  }
  void next() {
    for (size_t k = r_.extent.size(); k-- > 0;) {
      if (++digit_[k] < r_.extent[k]) {
        ++coord_[r_.dimOf[k]];
        return;
      }
      coord_[r_.dimOf[k]] -= digit_[k] - 1;
      digit_[k] = 0;
    }
  }

private:
  const Region &r_;
  const std::vector<int64_t> &shape_;
  llvm::SmallVector<int64_t, 6> coord_, digit_;
};

} // namespace

// --- scheduling -----------------------------------------------------------------

bool CtaExecutor::waitSatisfied(const Warp &w) const {
  for (auto [bar, parity] : w.waits)
    if (!barriers_[bar].waitSatisfied(parity))
      return false;
  return groupWaitSatisfied(w) && clusterWaitSatisfied(w) && pairAllocSatisfied(w) &&
         deviceWaitSatisfied(w);
}

bool CtaExecutor::completeAsync(size_t index) {
  if (inflight_[index].groupKind >= 0)
    return completeGroupUnit(index);
  AsyncCopy copy = std::move(inflight_[index]);
  inflight_.erase(inflight_.begin() + static_cast<long>(index));
  AsyncAgentScope scope(asyncAgent_, copy.agent);
  int64_t phaseBefore = copy.barrier >= 0 ? barriers_[copy.barrier].phase() : 0;
  if (copy.isCommit) {
    // A tcgen05.commit: the MMAs issued before it complete, in issue order,
    // then its mbarrier gets one arrival.
    for (const PrimitiveCall &mma : copy.mmas) {
      asyncAgent_ = mma.asyncAgent;
      if (!executeTcgen05Mma(mma))
        return false;
    }
    asyncAgent_ = copy.agent;
    if (copy.barrier < 0)
      return true;
    if (copy.multicastMask)
      return arriveMulticast(copy);
    if (!barrierError(barriers_[copy.barrier].arrive(1), copy.barrier, copy.loc))
      return false;
    releaseTo(copy.barrier, static_cast<uint32_t>(copy.agent), phaseBefore);
    return true;
  }
  ++stats_.asyncCopies;
  // Device races: this copy's reads are the async proxy's.
  struct TmaScope {
    CtaExecutor &cta;
    ~TmaScope() {
      cta.tmaIssue_ = -1;
      cta.asyncCompleting_ = false;
    }
  } tma{*this};
  tmaIssue_ = copy.deviceIssue;
  asyncCompleting_ = true;
  int64_t n = copy.dst.elements();
  const BufferPlan &src = p_.buffers[copy.src.buffer];
  ThreadRange none{0, 0};
  bool whole = copy.src.buffer != copy.dst.buffer && fastRegion(copy.dst) &&
               gatherBits(copy.src, none, bits_) && scatterBits(copy.dst, none, bits_);
  if (whole) {
    countAccess(copy.src, false);
    countAccess(copy.dst, true);
  } else {
    whole = copyClippedSource(copy);
  }
  RegionWalk srcAt(copy.src, src.shape), dstAt(copy.dst, p_.buffers[copy.dst.buffer].shape);
  for (int64_t i = 0; i < n && !whole; ++i, srcAt.next(), dstAt.next()) {
    uint64_t bits = 0;
    // TMA fills elements outside the global tensor with zeros and clips stores.
    if (int64_t from = srcAt.flat(); from >= 0) {
      auto b = readBits(copy.src.buffer, from, none, copy.loc);
      if (!b)
        return false;
      bits = *b;
    } else if (src.scope != MemScope::Global) {
      return fail(copy.loc, "asynchronous copy reads outside its source");
    }
    if (int64_t to = dstAt.flat(); to >= 0) {
      if (!writeBits(copy.dst.buffer, to, bits, none, copy.loc))
        return false;
    } else if (p_.buffers[copy.dst.buffer].scope != MemScope::Global) {
      return fail(copy.loc, "asynchronous copy writes outside its destination");
    }
  }
  stats_.elementsMoved += n;
  if (copy.barrier >= 0) {
    if (!barrierError(barriers_[copy.barrier].completeTx(copy.bytes), copy.barrier, copy.loc))
      return false;
    releaseTo(copy.barrier, static_cast<uint32_t>(copy.agent), phaseBefore);
  }
  return true;
}

// A TMA copy from a global tensor whose box reaches past the tensor's edge
// into a destination that the whole-region path takes: the elements outside
// the tensor are zeros, as on the per-element path below, and the rest is
// read as readBits reads it; the destination is written by scatterBits,
// which decides before it writes anything. Only where the per-element path
// would have no hook to call for a read (no race detector, no devices: a
// global read is not part of the uninitialised-read check) and with the
// same counters: the global bytes of the elements inside the tensor, the
// destination's bytes. False, having changed nothing, otherwise.
bool CtaExecutor::copyClippedSource(const AsyncCopy &copy) {
  const BufferPlan &src = p_.buffers[copy.src.buffer];
  if (copy.src.buffer == copy.dst.buffer || src.scope != MemScope::Global || isPacked(src.dtype) ||
      everyAccessTraced() || devices_ || !fastRegion(copy.dst))
    return false;
  const HostTensor &tensor = tensors_[src.tensor];
  const int64_t n = copy.dst.elements();
  if (copy.src.elements() != n)
    return false;
  bits_.resize(static_cast<size_t>(n));
  int64_t inside = 0;
  RegionWalk at(copy.src, src.shape);
  if (at.rowAlongLast()) {
    // A row of the box at a time: its columns inside the tensor are read,
    // the rest are zeros.
    const int64_t inner = copy.src.extent.back(), width = src.shape.back();
    withElementBytes(dtypeBytes(tensor.dtype), [&](auto size) {
      for (int64_t i = 0; i < n; i += inner) {
        int64_t rowFlat = 0, column = 0;
        const bool rowInside = at.row(rowFlat, column);
        for (int64_t e = 0; e < inner; ++e, at.next()) {
          const bool in = rowInside && column + e >= 0 && column + e < width;
          bits_[i + e] = in ? loadLittle(tensor.bytes.data() + (rowFlat + column + e) * size, size) : 0;
          inside += in;
        }
      }
    });
  } else {
    for (int64_t i = 0; i < n; ++i, at.next()) {
      int64_t from = at.flat();
      bits_[i] = from >= 0 ? tensor.bitsAt(from) : 0;
      inside += from >= 0;
    }
  }
  if (!scatterBits(copy.dst, ThreadRange{0, 0}, bits_))
    return false;
  stats_.globalBytesRead += inside * dtypeBytes(src.dtype);
  countAccess(copy.dst, true);
  return true;
}

Failure CtaExecutor::deadlock() const {
  Failure f;
  f.outcome = RunResult::Outcome::Deadlock;
  f.message = fmt::format("deadlock in CTA ({}, {}, {}): every unfinished warp is blocked and "
                          "nothing is in flight",
                          ctaId_[0], ctaId_[1], ctaId_[2]);
  std::vector<int> shown;
  for (const Warp &w : warps_) {
    if (w.state == Warp::State::Done || !w.blockedAt)
      continue;
    const auto &c = static_cast<const CallStmt &>(*w.blockedAt);
    std::string what = c.scope == ExecScope::Thread
                           ? c.callee
                           : std::string(execScopePrefix(c.scope)) + "." + c.callee;
    if (w.state == Warp::State::WaitBarrier) {
      std::string waits;
      for (auto [bar, parity] : w.waits) {
        std::string one = fmt::format("{} parity {}", barrierName(bar), parity);
        if (waits.find(one) == std::string::npos)
          waits += (waits.empty() ? "" : ", ") + one;
        if (std::find(shown.begin(), shown.end(), bar) == shown.end())
          shown.push_back(bar);
      }
      if (w.waits.empty())
        waits = otherWaitText(w);
      f.notes.push_back(fmt::format("warp {} (threads {}..{}) blocked at {}: {} on {}", w.id,
                                    w.id * 32, std::min<int64_t>(w.id * 32 + 32, p_.threads) - 1,
                                    where(c.loc), what, waits));
    } else {
      size_t arrived = 0, needed = 0;
      for (const auto &[key, r] : rendezvous_)
        if (std::find(r.warps.begin(), r.warps.end(), w.id) != r.warps.end()) {
          arrived = r.warps.size();
          needed = r.needed;
        }
      f.notes.push_back(fmt::format("warp {} (threads {}..{}) blocked at {}: {} waiting for its "
                                    "scope ({} of {} warps arrived)",
                                    w.id, w.id * 32,
                                    std::min<int64_t>(w.id * 32 + 32, p_.threads) - 1, where(c.loc),
                                    what, arrived, needed));
    }
  }
  std::vector<std::string> finished;
  for (const Warp &w : warps_)
    if (w.state == Warp::State::Done)
      finished.push_back(std::to_string(w.id));
  if (!finished.empty()) {
    std::string list;
    for (const std::string &s : finished)
      list += (list.empty() ? "" : ", ") + s;
    f.notes.push_back("finished warps: " + list);
  }
  for (int bar : shown)
    f.notes.push_back(fmt::format("mbarrier {}: {}", barrierName(bar), barriers_[bar].str()));
  return f;
}

std::optional<Failure> CtaExecutor::run() {
  if (auto f = start())
    return f;
  while (true) {
    switch (tick()) {
    case Tick::Progress:
      continue;
    case Tick::Done:
      return finish();
    case Tick::Stuck:
      return deadlock();
    case Tick::Failed:
      return failure_ ? failure_ : Failure{RunResult::Outcome::RuntimeError, "internal error", {}};
    }
  }
}

std::optional<Failure> CtaExecutor::start() {
  if (shared_.capacity() == 0 && regs_.capacity() == 0)
    takeSpareStorage();
  // Poisoned (Poison.h): a read before a write sees garbage, not zeros.
  {
    // Random draws one word per 8 bytes of shared memory, per register and
    // per tensor-memory cell from a splitmix64 stream keyed by the seed and
    // the CTA: a persistent kernel starts every CTA of its constant grid at
    // every size, and a Mersenne twister made that start most of the run.
    uint64_t stream = options_.seed ^ (static_cast<uint64_t>(ctaId_[0]) << 40) ^
                      (static_cast<uint64_t>(ctaId_[1]) << 20) ^ static_cast<uint64_t>(ctaId_[2]) ^
                      0x9E3779B97F4A7C15ull;
    // Drawn in bulk (splitmixFill): the same words in the same order as one
    // draw at a time.
    auto low = [](uint64_t word, int bytes) {
      return bytes >= 8 ? word : word & ((uint64_t{1} << (8 * std::max(bytes, 0))) - 1);
    };
    thread_local std::vector<uint64_t> words;
    PoisonPattern pp = options_.poison;
    const bool random = pp == PoisonPattern::Random;
    // The fixed patterns draw nothing; this generator only fills the signature.
    thread_local std::mt19937_64 fixed;
    // Shared memory: its bytes are the stream's first words, poisoned on
    // first use (poisonShared); the registers' words follow them in the
    // stream.
    sharedRandom_ = random;
    sharedPoisonByte_ = random ? 0 : poisonByte(pp, fixed);
    sharedStream_ = stream;
    if (random && p_.sharedBytes > 0)
      stream += static_cast<uint64_t>((p_.sharedBytes + 7) / 8) * 0x9E3779B97F4A7C15ull;
    // The bytes a previous CTA left (takeSpareStorage) stay until poisoned.
    if (shared_.size() != static_cast<size_t>(p_.sharedBytes))
      shared_.resize(p_.sharedBytes);
    sharedPending_ = !shared_.empty();
    // Registers, written once each (the storage a previous CTA left,
    // takeSpareStorage, is overwritten, not cleared first): a fixed pattern
    // gives every thread the same row (its buffers' words, zeros in the
    // slots no buffer has), built once and copied; Random draws each
    // buffer's registers thread by thread, buffer after buffer.
    const int64_t perThread = p_.regsPerThread;
    const size_t regWords = static_cast<size_t>(p_.threads * perThread);
    if (regs_.size() != regWords)
      regs_.resize(regWords);
    thread_local std::vector<uint64_t> row;
    row.assign(perThread, 0);
    for (const BufferPlan &b : p_.buffers) {
      if (pp == PoisonPattern::Zero || b.scope != MemScope::Reg)
        continue;
      int bytes = std::min(b.elementBytes, 8);
      // A fixed pattern is one word; only Random draws one per register.
      uint64_t word = random ? 0 : poisonWord(pp, bytes, fixed);
      // Random: a slot the loop below draws is marked 1.
      std::fill(row.begin() + b.regBase, row.begin() + b.regBase + std::max<int64_t>(b.regCount, 0),
                random ? uint64_t{1} : word);
    }
    if (!random) {
      for (int64_t t = 0; t < p_.threads; ++t)
        std::memcpy(regs_.data() + t * perThread, row.data(), perThread * sizeof(uint64_t));
    } else {
      if (std::find(row.begin(), row.end(), uint64_t{0}) != row.end())
        std::fill(regs_.begin(), regs_.end(), uint64_t{0}); // slots no buffer draws
      for (const BufferPlan &b : p_.buffers) {
        if (b.scope != MemScope::Reg)
          continue;
        int bytes = std::min(b.elementBytes, 8);
        for (int64_t t = 0; t < p_.threads; ++t)
          splitmixFill(&regs_[t * perThread + b.regBase], size_t(std::max<int64_t>(b.regCount, 0)),
                       stream, low(~uint64_t{0}, bytes));
      }
    }
    if (targetInfo(p_.target).hasTensorMemory) {
      tmem_.assign(128 * 512, random ? 0 : static_cast<uint32_t>(poisonWord(pp, 4, fixed)));
      if (random) {
        words.resize(tmem_.size());
        splitmixFill(words.data(), words.size(), stream);
        for (size_t i = 0; i < tmem_.size(); ++i)
          tmem_[i] = static_cast<uint32_t>(words[i]);
      }
    }
    if (options_.checkUninitialized) {
      // Cleared with the poison (poisonShared).
      if (sharedInit_.size() != static_cast<size_t>(p_.sharedBytes))
        sharedInit_.resize(p_.sharedBytes);
      tmemInit_.assign(tmem_.size(), 0);
    } else {
      sharedInit_.clear();
    }
  }
  barriers_.assign(p_.barrierCount, Mbarrier());
  for (const BarrierPlan &b : p_.barriers)
    if (b.count > 0)
      for (int64_t i = 0; i < b.size; ++i)
        if (auto e = barriers_[b.first + i].init(b.count); e != Mbarrier::Error::None) {
          fail(b.loc, std::string(Mbarrier::errorText(e)));
          return failure_;
        }
  if (!cluster_) { // a cluster of one: the cluster barrier is this CTA's warps
    ownCluster_ = std::make_unique<ClusterState>();
    ownCluster_->ctas = {this};
    ownCluster_->barrierWarps = p_.warps;
    ownCluster_->race = race_;
    joinCluster(ownCluster_.get(), 0);
  }
  if (targetInfo(p_.target).hasTensorMemory)
    tmemOwner_.assign(512, -1);
  if (race_ && ownCluster_) // a cluster's CTAs begin together (runCluster)
    race_->beginCta(ctaId_, p_.threads, p_.sharedBytes, !tmem_.empty(),
                    static_cast<int>(p_.barrierCount));
  // Constants are filled once; every other operation writes its own lanes.
  scratch_.assign(code_->ops.size(), LaneValues());
  for (size_t i = 0; i < code_->ops.size(); ++i)
    if (code_->ops[i].kind == OpKind::Constant)
      scratch_[i] = code_->ops[i].constant;
  builtinFilled_.assign(builtinFilled_.size(), false); // this CTA's builtins
  warps_.assign(p_.warps, Warp());
  for (int64_t i = 0; i < p_.warps; ++i) {
    Warp &w = warps_[i];
    w.id = static_cast<int>(i);
    int64_t lanes = std::min<int64_t>(32, p_.threads - i * 32);
    w.fullMask = lanes == 32 ? 0xFFFFFFFFu : (1u << lanes) - 1;
    w.slots.assign(p_.slots, LaneValues());
    w.slotVersion.assign(p_.slots, 0);
    w.fusedOffsets.assign(code_->fusedAccesses, FusedOffsets());
    w.stack.push_back(Frame{&p_.kernel->body, 0, w.fullMask});
    w.stack.back().code = code_->block(p_.kernel->body);
  }
  return std::nullopt;
}

void CtaExecutor::poisonShared() {
  sharedPending_ = false;
  if (sharedRandom_) {
    thread_local std::vector<uint64_t> words;
    words.resize((shared_.size() + 7) / 8);
    uint64_t state = sharedStream_;
    splitmixFill(words.data(), words.size(), state);
    std::memcpy(shared_.data(), words.data(), shared_.size());
  } else {
    std::memset(shared_.data(), sharedPoisonByte_, shared_.size());
  }
  if (!sharedInit_.empty())
    std::memset(sharedInit_.data(), 0, sharedInit_.size());
}

CtaExecutor::Tick CtaExecutor::tick() {
  std::vector<int> &ready = ready_;
  if (stats_.steps > options_.maxSteps) {
    failure_ = Failure{RunResult::Outcome::StepBudget,
                       fmt::format("step budget of {} warp statements exhausted in CTA ({}, {}, "
                                   "{}); the kernel may not terminate (raise it with --max-steps)",
                                   options_.maxSteps, ctaId_[0], ctaId_[1], ctaId_[2]),
                       {}};
    return Tick::Failed;
  }
  // Time, every 1024 scheduler ticks: options.deadline (wall time) and the
  // command's budget (ir/Budget.h: processor time and wall time).
  if (++ticksSinceClock_ >= 1024) {
    ticksSinceClock_ = 0;
    bool pastOption = options_.deadline != std::chrono::steady_clock::time_point::max() &&
                      std::chrono::steady_clock::now() > options_.deadline;
    Budget *budget = pastOption ? nullptr : activeBudget();
    if (pastOption || (budget && budget->expired())) {
      // The budget's processor time (--timeout-ms) or its wall-time backstop.
      bool cpu = budget && budget->exceeded() == BudgetKind::CpuTime;
      std::string which =
          !budget ? "wall-time budget"
          : cpu   ? fmt::format("CPU-time budget of {} ms", budget->limits().timeoutMs)
                  : fmt::format("wall-time budget of {} ms", budget->limits().wallTimeoutMs);
      failure_ = Failure{
          RunResult::Outcome::TimeBudget,
          fmt::format("{} exhausted in CTA ({}, {}, {}) after {} warp statements; "
                      "the kernel may not terminate{}",
                      which, ctaId_[0], ctaId_[1], ctaId_[2], stats_.steps,
                      budget ? fmt::format(" (raise it with {})", budgetOption(budget->exceeded(), budget->exceededTotal()))
                             : ""),
          {}};
      return Tick::Failed;
    }
  }
  if (devices_ && deviceGateClosed()) { // device.barrier / a collective (Devices.cpp)
    if (inflight_.empty())
      return Tick::Stuck;
    return completeAsync(rng_() % inflight_.size()) ? Tick::Progress : Tick::Failed;
  }
  ready.clear();
  bool allDone = true;
  for (Warp &w : warps_) {
    if (w.state == Warp::State::WaitBarrier && waitSatisfied(w)) {
      w.state = Warp::State::Ready;
      w.blockedAt = nullptr;
    }
    if (w.state == Warp::State::Ready)
      ready.push_back(w.id);
    allDone &= w.state == Warp::State::Done;
  }
  // Every thread has finished: the CTA exits and its shared memory goes back
  // to the SM, so a group copy still touching it (a bulk store that has not
  // read its source: groupKind 1; a cp.async not yet landed: groupKind 0) is
  // an error, as verifier/AsyncDrain.h reports statically.
  if (allDone)
    for (const AsyncCopy &u : inflight_)
      if (u.groupKind == 0 || (u.groupKind == 1 && !u.sourceRead)) {
        bool store = u.groupKind == 1;
        fail(u.loc, fmt::format(
                        "the CTA exits while this {} still {} shared '{}': no {} of thread "
                        "{} retired its group before the kernel ended",
                        intrinsicName(store ? IntrinsicId::TmaStore : IntrinsicId::CpAsync),
                        store ? "reads its source in" : "writes its destination in",
                        plan(store ? u.src.buffer : u.dst.buffer).name,
                        intrinsicName(store ? IntrinsicId::TmaStoreWait : IntrinsicId::CpAsyncWait),
                        u.groupThread));
        return Tick::Failed;
      }
  if (!inflight_.empty() && (ready.empty() || rng_() % 4 == 0)) {
    size_t pick = rng_() % inflight_.size();
    // tcgen05 operations complete in issue order: a commit unit is only
    // taken after every older one.
    if (inflight_[pick].isCommit)
      for (size_t i = 0; i < pick; ++i)
        if (inflight_[i].isCommit) {
          pick = i;
          break;
        }
    return completeAsync(pick) ? Tick::Progress : Tick::Failed;
  }
  if (ready.empty())
    return allDone ? Tick::Done : Tick::Stuck;
  Warp &w = warps_[ready[rng_() % ready.size()]];
  int quantum = 1 + static_cast<int>(rng_() % 64);
  for (int q = 0; q < quantum && w.state == Warp::State::Ready && deviceGate_ < 0;) {
    // Whole iterations of a fused loop where they fit, else one statement:
    // the same steps in the same order either way.
    int ran = runFusedLoop(w, quantum - q);
    if (ran == 0) {
      if (!step(w))
        return Tick::Failed;
      ran = 1;
    }
    q += ran;
  }
  return Tick::Progress;
}

std::optional<Failure> CtaExecutor::finish() {
  if (!rendezvous_.empty())
    return deadlock();
  if (auto f = unfreedTensorMemory())
    return f;
  stats_.stepsPerWarp.resize(warps_.size(), 0);
  for (const Warp &w : warps_)
    stats_.stepsPerWarp[w.id] += w.steps;
  return std::nullopt;
}

// --- the run --------------------------------------------------------------------

std::vector<std::array<int64_t, 3>> sampleCtas(const std::array<int64_t, 3> &grid, int64_t count,
                                               uint64_t seed) {
  std::vector<std::array<int64_t, 3>> out = fixedSampleCtas(grid, count);
  int64_t total = grid[0] * grid[1] * grid[2];
  auto add = [&](std::array<int64_t, 3> c) {
    if (std::find(out.begin(), out.end(), c) == out.end())
      out.push_back(c);
  };
  std::mt19937_64 rng(seed ^ 0x9E3779B97F4A7C15ull);
  while (static_cast<int64_t>(out.size()) < std::min(count, total)) {
    int64_t i = static_cast<int64_t>(rng() % static_cast<uint64_t>(total));
    add({i % grid[0], (i / grid[0]) % grid[1], i / (grid[0] * grid[1])});
  }
  return out;
}

std::vector<std::array<int64_t, 3>> fixedSampleCtas(const std::array<int64_t, 3> &grid,
                                                    int64_t count) {
  int64_t total = grid[0] * grid[1] * grid[2];
  std::vector<std::array<int64_t, 3>> out;
  auto add = [&](std::array<int64_t, 3> c) {
    if (std::find(out.begin(), out.end(), c) == out.end())
      out.push_back(c);
  };
  if (count <= 0 || count >= total) {
    for (int64_t z = 0; z < grid[2]; ++z)
      for (int64_t y = 0; y < grid[1]; ++y)
        for (int64_t x = 0; x < grid[0]; ++x)
          out.push_back({x, y, z});
    return out;
  }
  // The first corner, then the opposite one (two samples differ in every
  // dimension: Coverage.h infers tiles from them), then the others.
  for (int corner : {0, 7, 1, 2, 3, 4, 5, 6}) {
    if (static_cast<int64_t>(out.size()) >= count)
      break;
    add({corner & 1 ? grid[0] - 1 : 0, corner & 2 ? grid[1] - 1 : 0, corner & 4 ? grid[2] - 1 : 0});
  }
  return out;
}

RunResult runProgram(const Program &program, std::vector<HostTensor> &tensors,
                     const EngineOptions &options) {
  RunResult result;
  auto start = std::chrono::steady_clock::now();
  std::clock_t cpuStart = std::clock();
  int64_t perCta = program.sharedBytes + program.threads * program.regsPerThread * 8 +
                   program.warps * (program.slots * static_cast<int64_t>(sizeof(LaneValues)));
  if (perCta + program.hostBytes() > options.memoryCapBytes) {
    result.outcome = RunResult::Outcome::MemoryCap;
    result.message = fmt::format("the simulated state needs {} bytes per CTA plus {} bytes of "
                                 "layout tables, over the memory cap of {} bytes",
                                 perCta, program.hostBytes(), options.memoryCapBytes);
    return result;
  }
  std::vector<std::array<int64_t, 3>> ctas =
      options.ctas.empty() ? sampleCtas(program.grid, 0, options.seed) : options.ctas;
  std::mt19937_64 rng(options.seed);
  std::unique_ptr<RaceDetector> race;
  if (options.detectRaces)
    race = std::make_unique<RaceDetector>();
  if (program.clusterSize() > 1) {
    runClusters(program, tensors, options, ctas, rng, race.get(), result);
    ctas.clear();
  }
  CtaExecutor::RegionCaches caches;
  for (const auto &cta : ctas) {
    CtaExecutor exec(program, tensors, options, result.stats, cta, rng);
    exec.attachRaceDetector(race.get());
    exec.shareCaches(&caches);
    auto failure = exec.run();
    // A CTA that stopped the run ran too (up to its failure): `oob on 1 CTA:
    // runtime-error`, not `on 0 CTAs`.
    ++result.stats.ctas;
    if (auto f = failure) {
      result.outcome = f->outcome;
      result.message = std::move(f->message);
      result.notes = std::move(f->notes);
      break;
    }
    if (options.afterUnit)
      options.afterUnit(cta);
  }
  if (race)
    result.races = describeRaces(*race, program, options);
  result.stats.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.stats.cpuSeconds = static_cast<double>(std::clock() - cpuStart) / CLOCKS_PER_SEC;
  return result;
}

} // namespace tilescope::sim
