// Tensor-memory allocation: tcgen05.alloc / tcgen05.dealloc by one warp of a
// CTA (cta_group = 1), or collectively by one warp of each CTA of a pair
// (cta_group = 2, PTX: "issue from two warps, one in each of the current CTA
// and its peer CTA"; the first warp blocks until the second arrives). A pair
// allocation takes the same columns in both CTAs' tensor memory, as the
// cta_group::2 MMA needs its accumulator at one address in both.
//
// A kernel uses one .cta_group for all its tcgen05 instructions (PTX does
// not let ::1 and ::2 forms meet in one kernel), so mixing them is an error.
//
// Lifetime: once a warp of the CTA executed tcgen05.relinquish_alloc_permit,
// an alloc of the CTA is an error; a CTA that finishes with columns still
// allocated is an error (every allocation must be freed before exit). With
// race detection, alloc and dealloc write every cell of the allocation, so
// an access by another warp that nothing orders before the dealloc (or
// after the alloc) is a race.
#include "ir/Intrinsics.h"
#include "simulator/CtaExecutor.h"

#include <fmt/format.h>

#include <bit>

namespace tilescope::sim {

bool CtaExecutor::useCtaGroup(int64_t group, llvm::SMLoc loc) {
  if (group != 1 && group != 2)
    return fail(loc, fmt::format("cta_group is 1 or 2, not {}", group));
  if (tcgen05CtaGroup_ == 0) {
    tcgen05CtaGroup_ = static_cast<int>(group);
    tcgen05CtaGroupAt_ = loc;
    return true;
  }
  if (tcgen05CtaGroup_ == group)
    return true;
  return fail(loc, fmt::format("this tcgen05 instruction uses cta_group = {}, but the one at {} "
                               "used {}: the tcgen05 instructions of a kernel all use one "
                               "cta_group (give alloc, dealloc and mma the same one)",
                               group, where(tcgen05CtaGroupAt_), tcgen05CtaGroup_));
}

std::optional<int64_t> CtaExecutor::tmemColumns(Warp &w, const CallStmt &c, int lane,
                                                const BufferPlan &b) {
  // As asked, or what the buffer's layout reaches, rounded up to a power of
  // two of at least 32.
  int64_t need = 0;
  if (const CallArg *cols = c.keyword("cols")) {
    LaneValues v;
    if (!eval(cols->value, w, 1u << lane, v))
      return std::nullopt;
    need = v.lane[lane].i;
    if (need < 32 || need > 512 || !std::has_single_bit(static_cast<uint64_t>(need))) {
      fail(c.loc, fmt::format("tensor memory is allocated in powers of two from 32 to 512 "
                              "columns, not {}",
                              need));
      return std::nullopt;
    }
    return need;
  }
  for (int64_t i = 0; i < b.elements; ++i) {
    int64_t col =
        b.layout ? b.layout->base(i).get(Axis::TCol) : i % (b.shape.empty() ? 1 : b.shape.back());
    need = std::max(need, col + 1);
  }
  need = std::max<int64_t>(32, static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(need))));
  if (need > 512) {
    fail(c.loc, fmt::format("'{}' needs {} tensor-memory columns; there are 512", b.name, need));
    return std::nullopt;
  }
  return need;
}

bool CtaExecutor::columnsFree(int64_t first, int64_t count) const {
  for (int64_t col = first; col < first + count; ++col)
    if (tmemOwner_[col] >= 0)
      return false;
  return true;
}

void CtaExecutor::takeColumns(int buffer, int64_t first, int64_t count, int warp) {
  for (int64_t col = first; col < first + count; ++col)
    tmemOwner_[col] = warp;
  tmemAlloc_[buffer] = {first, count};
}

bool CtaExecutor::allocPermitted(llvm::SMLoc loc) {
  if (!tmemRelinquished_)
    return true;
  return fail(loc, fmt::format("tcgen05.alloc after warp {} gave up the CTA's right to allocate "
                               "tensor memory (tcgen05.relinquish_alloc_permit at {})",
                               tmemRelinquished_->first, where(tmemRelinquished_->second)));
}

void CtaExecutor::raceAllocation(int buffer, int64_t first, int64_t count, int64_t thread,
                                 llvm::SMLoc loc) {
  if (!race_)
    return;
  const BufferPlan &b = plan(buffer);
  for (int64_t lane = 0; lane < 128; ++lane) {
    int64_t flat = b.shape.size() == 2 && lane < b.shape[0] ? lane * b.shape[1] : 0;
    raceAccessAs(raceThread(thread), rank_, RaceSpace::Tmem, buffer, flat, lane * 512 + first,
                 static_cast<int>(count), true, loc);
  }
}

std::optional<Failure> CtaExecutor::unfreedTensorMemory() {
  if (tmemAlloc_.empty())
    return std::nullopt;
  auto [buffer, columns] = *tmemAlloc_.begin();
  auto [warp, at] = tmemAllocBy_[buffer];
  fail(at, fmt::format("the CTA exits with tensor memory '{}' ({} columns, allocated by warp {}) "
                       "never freed: every tcgen05.alloc needs a tcgen05.dealloc before exit",
                       plan(buffer).name, columns.second, warp));
  return failure_;
}

bool CtaExecutor::freeColumns(int buffer, int warp, llvm::SMLoc loc) {
  const BufferPlan &b = plan(buffer);
  auto it = tmemAlloc_.find(buffer);
  if (it == tmemAlloc_.end())
    return fail(loc, fmt::format("tcgen05.dealloc of '{}', which is not allocated", b.name));
  auto [first, count] = it->second;
  if (tmemOwner_[first] != warp)
    return fail(loc, fmt::format("warp {} frees tensor memory '{}' that warp {} allocated", warp,
                                 b.name, tmemOwner_[first]));
  for (int64_t col = first; col < first + count; ++col)
    tmemOwner_[col] = -1;
  tmemAlloc_.erase(it);
  return true;
}

std::optional<int> CtaExecutor::tmemBuffer(Warp &w, const CallStmt &c, int lane) {
  auto r = region(c.args.at(0).value, w, lane);
  if (!r)
    return std::nullopt;
  const BufferPlan &b = plan(r->buffer);
  if (b.scope != MemScope::Tmem) {
    fail(c.loc, fmt::format("'{}' takes a tmem buffer; '{}' is {}", c.callee, b.name,
                            memScopeName(b.scope)));
    return std::nullopt;
  }
  if (tmemAlloc_.count(r->buffer) && idOf(c) == IntrinsicId::Tcgen05Alloc) {
    fail(c.loc, fmt::format("'{}' is already allocated", b.name));
    return std::nullopt;
  }
  return r->buffer;
}

bool CtaExecutor::execTmemAlloc(Warp &w, const CallStmt &c, int lane) {
  LaneValues group;
  group.lane[lane].i = 1;
  const CallArg *g = c.keyword("cta_group");
  if ((g && !eval(g->value, w, 1u << lane, group)) || !useCtaGroup(group.lane[lane].i, c.loc))
    return false;
  auto buffer = tmemBuffer(w, c, lane);
  if (!buffer)
    return false;
  int64_t thread = w.id * 32 + lane;
  if (idOf(c) == IntrinsicId::Tcgen05Dealloc) {
    auto it = tmemAlloc_.find(*buffer);
    if (it != tmemAlloc_.end())
      raceAllocation(*buffer, it->second.first, it->second.second, thread, c.loc);
    return freeColumns(*buffer, w.id, c.loc);
  }
  if (!allocPermitted(c.loc))
    return false;
  auto need = tmemColumns(w, c, lane, plan(*buffer));
  if (!need)
    return false;
  for (int64_t first = 0; first + *need <= 512; first += *need)
    if (columnsFree(first, *need)) {
      takeColumns(*buffer, first, *need, w.id);
      tmemAllocBy_[*buffer] = {w.id, c.loc};
      raceAllocation(*buffer, first, *need, thread, c.loc);
      return true;
    }
  return fail(c.loc,
              fmt::format("no {} free tensor-memory columns for '{}'", *need, plan(*buffer).name));
}

bool CtaExecutor::execPairAlloc(Warp &w, Frame &f, const CallStmt &c) {
  if (f.mask != w.fullMask)
    return fail(c.loc, fmt::format("'{}' must be executed by whole warps, but warp {} reaches "
                                   "it with active mask 0x{:08x}",
                                   c.callee, w.id, f.mask));
  std::map<int64_t, PairAlloc> &pending = cluster_->pairAllocs;
  int64_t pair = rank_ / 2;
  if (w.pairWait) { // the peer's warp completed the operation for both
    pending.erase(pair);
    w.pairWait = false;
    ++f.pc;
    return true;
  }
  if (tmem_.empty())
    return fail(c.loc, fmt::format("'{}' needs tensor memory, which {} does not have", c.callee,
                                   targetInfo(p_.target).name));
  int lane = std::countr_zero(f.mask);
  CtaExecutor *other = pairPeer(c.loc);
  if (!other || !useCtaGroup(2, c.loc))
    return false;
  bool alloc = idOf(c) == IntrinsicId::Tcgen05Alloc;
  if (alloc && !allocPermitted(c.loc))
    return false;
  auto buffer = tmemBuffer(w, c, lane);
  if (!buffer)
    return false;
  int64_t need = 0;
  if (alloc) {
    auto cols = tmemColumns(w, c, lane, plan(*buffer));
    if (!cols)
      return false;
    need = *cols;
  }
  auto it = pending.find(pair);
  if (it == pending.end()) { // the first warp of the pair waits for the other
    pending[pair] = {*buffer, need, rank_, w.id, alloc, c.loc};
    w.pairWait = true;
    w.state = Warp::State::WaitBarrier;
    w.blockedAt = &c;
    return true;
  }
  const PairAlloc &p = it->second;
  if (p.rank == rank_)
    return fail(c.loc, fmt::format("warp {} of CTA rank {} reaches '{}' while warp {} of the same "
                                   "CTA waits at {} for the peer CTA: a cta_group = 2 "
                                   "allocation takes one warp of each CTA of the pair",
                                   w.id, rank_, c.callee, p.warp, where(p.loc)));
  if (p.alloc != alloc || p.buffer != *buffer || p.columns != need)
    return fail(c.loc, fmt::format("'{}' of '{}' ({} columns) meets {} of '{}' ({} columns) by "
                                   "CTA rank {} at {}: the pair's warps must issue the same one",
                                   c.callee, plan(*buffer).name, need,
                                   intrinsicName(p.alloc ? IntrinsicId::Tcgen05Alloc
                                                         : IntrinsicId::Tcgen05Dealloc),
                                   plan(p.buffer).name, p.columns, p.rank, where(p.loc)));
  if (!alloc) {
    if (!freeColumns(*buffer, w.id, c.loc) || !other->freeColumns(*buffer, p.warp, p.loc))
      return adoptFailure(*other);
  } else {
    int64_t first = 0;
    while (first + need <= 512 && !(columnsFree(first, need) && other->columnsFree(first, need)))
      first += need;
    if (first + need > 512)
      return fail(c.loc, fmt::format("no {} tensor-memory columns free in both CTAs of the pair "
                                     "for '{}'",
                                     need, plan(*buffer).name));
    takeColumns(*buffer, first, need, w.id);
    other->takeColumns(*buffer, first, need, p.warp);
    tmemAllocBy_[*buffer] = {w.id, c.loc};
    other->tmemAllocBy_[*buffer] = {p.warp, p.loc};
  }
  it->second.done = true;
  ++f.pc;
  return true;
}

bool CtaExecutor::pairAllocSatisfied(const Warp &w) const {
  if (!w.pairWait)
    return true;
  auto it = cluster_->pairAllocs.find(rank_ / 2);
  return it != cluster_->pairAllocs.end() && it->second.done;
}

} // namespace tilescope::sim
