// The asynchronous tensor-core natives: wgmma (issued by a warpgroup, grouped
// by commit_group, complete at wait_group) and tcgen05 (tensor memory of 128
// lanes x 512 columns per CTA, allocated in TmemAlloc.cpp; mma issued by one
// thread and completed, with one arrival on an mbarrier, when the unit made by
// tcgen05.commit completes at a time the scheduler picks; ld/st between
// tensor memory and a warp's registers).
#include "ir/InstructionRules.h"
#include "ir/Intrinsics.h"
#include "simulator/CtaExecutor.h"

#include <fmt/format.h>

#include <bit>

namespace tilescope::sim {

bool CtaExecutor::execWgmma(Warp &w, const CallStmt &c, ThreadRange threads, int lane) {
  const IntrinsicId n = idOf(c);
  int64_t group = w.id / 4;
  if (n == IntrinsicId::WgmmaFence)
    return true;
  if (n == IntrinsicId::WgmmaMmaAsync) {
    auto call = buildCall(w, c, threads, lane);
    if (!call)
      return false;
    call->warpgroupScope = true;
    stampAsyncMma(*call, group);
    wgmmaOpen_[group].push_back(std::move(*call));
    return true;
  }
  if (n == IntrinsicId::WgmmaCommitGroup) {
    wgmmaCommitted_[group].push_back(std::move(wgmmaOpen_[group]));
    wgmmaOpen_[group].clear();
    return true;
  }
  if (n == IntrinsicId::WgmmaWaitGroup) {
    LaneValues v;
    if (c.args.empty() || !eval(c.args[0].value, w, 1u << lane, v))
      return failure_ ? false : fail(c.loc, "wgmma.wait_group needs a count");
    int64_t keep = v.lane[lane].i;
    if (keep < 0 || keep > 7)
      return fail(c.loc, fmt::format("wgmma.wait_group takes 0 to 7, not {}", keep));
    auto &groups = wgmmaCommitted_[group];
    while (static_cast<int64_t>(groups.size()) > keep) {
      for (const PrimitiveCall &mma : groups.front()) {
        asyncAgent_ = mma.asyncAgent;
        bool ok = executePrimitive(mma);
        asyncAgent_ = -1;
        if (!ok)
          return false;
        if (race_) // the wait acquires the operations it retires
          race_->acquire(raceAgent(threads), race_->clock(static_cast<uint32_t>(mma.asyncAgent)));
      }
      groups.erase(groups.begin());
    }
    return true;
  }
  return fail(c.loc, fmt::format("'{}' is not simulated yet", c.callee));
}

bool CtaExecutor::execTcgen05(Warp &w, const CallStmt &c, ThreadRange threads, int lane) {
  const IntrinsicId n = idOf(c);
  if (tmem_.empty())
    return fail(c.loc, fmt::format("'{}' needs tensor memory, which {} does not have", c.callee,
                                   targetInfo(p_.target).name));
  if (n == IntrinsicId::Tcgen05FenceBeforeThreadSync ||
      n == IntrinsicId::Tcgen05FenceAfterThreadSync || n == IntrinsicId::Tcgen05WaitLd ||
      n == IntrinsicId::Tcgen05WaitSt)
    return true;
  if (n == IntrinsicId::Tcgen05RelinquishAllocPermit) {
    if (!tmemRelinquished_)
      tmemRelinquished_ = {w.id, c.loc};
    return true;
  }
  if (n == IntrinsicId::Tcgen05Alloc || n == IntrinsicId::Tcgen05Dealloc)
    return execTmemAlloc(w, c, lane); // cta_group = 2 forms: execPairAlloc (TmemAlloc.cpp)
  if (n == IntrinsicId::Tcgen05Mma) {
    auto call = buildCall(w, c, threads, lane);
    if (!call)
      return false;
    int64_t group = call->keywords.count("cta_group") ? call->keywords["cta_group"].value.i : 1;
    if (!useCtaGroup(group, c.loc) || (group == 2 && !pairPeer(c.loc)))
      return false;
    stampAsyncMma(*call, -1);
    tcgen05Issued_.push_back(std::move(*call));
    return true;
  }
  if (n == IntrinsicId::Tcgen05Commit) {
    auto bar = barrierRef(c.args.at(0).value, w, lane);
    if (!bar)
      return false;
    if (!barriers_[*bar].live())
      return fail(c.loc,
                  fmt::format("tcgen05.commit to {}, which is not initialised", barrierName(*bar)));
    AsyncCopy unit;
    unit.isCommit = true;
    unit.barrier = *bar;
    unit.loc = c.loc;
    unit.mmas = std::move(tcgen05Issued_);
    tcgen05Issued_.clear();
    stampAsync(unit, threads);
    if (const CallArg *m = c.keyword("multicast")) {
      // One unit runs the MMAs, then arrives on the barrier of every CTA of
      // the mask (the arrivals follow the MMAs, as the commit promises).
      LaneValues mask;
      if (!eval(m->value, w, 1u << lane, mask))
        return false;
      unit.multicastMask = static_cast<uint64_t>(mask.lane[lane].i);
      if (!checkMulticastMask(unit.multicastMask, c.loc))
        return false;
    }
    enqueue(std::move(unit));
    return true;
  }
  if (n == IntrinsicId::Tcgen05Ld || n == IntrinsicId::Tcgen05St) {
    auto call = buildCall(w, c, threads, lane);
    if (!call)
      return false;
    // PTX (tcgen05.ld / tcgen05.st): warp w of a warpgroup reaches only TMEM
    // lanes 32 (w % 4) .. 32 (w % 4) + 31. Under `tilescope race` the race
    // detector reports it (an "out of view" access) with both sides.
    TmemLaneWindow window = tmemLaneWindowOfWarp(w.id);
    int64_t first = window.first, last = window.first + window.count - 1;
    for (const Operand &o : race_ ? std::vector<Operand>() : call->positional) {
      if (!o.isRegion || plan(o.region.buffer).scope != MemScope::Tmem)
        continue;
      const auto &cells = plan(o.region.buffer).tmemCellOf;
      for (int64_t i = 0, e = o.region.elements(); i < e; ++i) {
        int64_t flat = bufferFlat(o.region, i);
        if (flat < 0 || flat >= int64_t(cells.size()))
          continue; // outside the buffer: the access itself reports it
        int64_t laneOf = cells[size_t(flat)].first;
        if (laneOf < first || laneOf > last)
          return fail(c.loc, fmt::format("'{}' by warp {} reaches TMEM lane {} of '{}', but warp "
                                         "{} may access only lanes {} to {} (its warp index "
                                         "modulo 4 picks the quarter)",
                                         c.callee, w.id, laneOf, plan(o.region.buffer).name, w.id,
                                         first, last));
      }
    }
    tcgen05LdSt_ = true; // its TMEM accesses are ordered by the tcgen05 fences
    bool ok = executePrimitive(*call);
    tcgen05LdSt_ = false;
    return ok;
  }
  return fail(c.loc, fmt::format("'{}' is not simulated yet", c.callee));
}

CtaExecutor *CtaExecutor::pairPeer(llvm::SMLoc loc) {
  int64_t size = cluster_ ? static_cast<int64_t>(cluster_->ctas.size()) : 1;
  if ((rank_ ^ 1) >= size) {
    fail(loc, fmt::format("cta_group = 2 needs the CTA pair of ranks {} and {}; the cluster has "
                          "{} CTA{}",
                          rank_ & ~1, rank_ | 1, size, size == 1 ? "" : "s"));
    return nullptr;
  }
  return peer(rank_ ^ 1, loc);
}

// cta_group = 2 (PTX ISA, tcgen05.mma): the pair's CTAs hold A = [A0; A1]
// (each its M/2 rows), B = [B0; B1] (each N/2 of the N rows of the K-major
// B) and D = [D0; D1] (each its M/2 rows, all N columns, in its own tensor
// memory). So each CTA's D += its A x B^T with B gathered from both, pair
// member 0 (the even rank) first.
bool CtaExecutor::executeTcgen05Mma(const PrimitiveCall &mma) {
  auto group = mma.keywords.find("cta_group");
  if (group == mma.keywords.end() || group->second.value.i != 2)
    return executePrimitive(mma);
  CtaExecutor *other = pairPeer(mma.call->loc);
  if (!other)
    return false;
  CtaExecutor *pair[2] = {rank_ % 2 == 0 ? this : other, rank_ % 2 == 0 ? other : this};
  if (mma.positional.size() < 3 || !mma.positional[2].isRegion)
    return fail(mma.call->loc, "tcgen05.mma needs regions d, a and b");
  const Region &b = mma.positional[2].region;
  int64_t rows = b.extent.size() >= 2 ? b.extent[b.extent.size() - 2] : 1;
  int64_t k = b.extent.empty() ? 1 : b.extent.back();
  // The peer's operands and accumulator are reached by this MMA's agent.
  AsyncAgentScope asPeer(other->asyncAgent_, asyncAgent_);
  PrimitiveCall full = mma;
  full.bRows = 2 * rows;
  full.bBits.reserve(2 * rows * k);
  ThreadRange all{0, p_.threads};
  for (CtaExecutor *cta : pair)
    for (int64_t i = 0; i < rows * k; ++i) {
      if (!cta->inBounds(b, i))
        return fail(mma.call->loc,
                    fmt::format("'tcgen05.mma' reads outside '{}'", plan(b.buffer).name));
      auto bits = cta->readBits(b.buffer, cta->bufferFlat(b, i), all, mma.call->loc);
      if (!bits)
        return adoptFailure(*cta);
      full.bBits.push_back(*bits);
    }
  for (CtaExecutor *cta : pair)
    if (!cta->executePrimitive(full))
      return adoptFailure(*cta);
  return true;
}

} // namespace tilescope::sim
