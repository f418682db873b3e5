// Asynchronous copies that complete through per-thread groups rather than an
// mbarrier: cp.async (global -> shared, 4, 8 or 16 bytes) with
// cp_async.commit / cp_async.wait(n) / cp_async.wait_all, and TMA stores
// (cp.async.bulk.tensor shared -> global) with tma.store_commit /
// tma.store_wait(n [, read = true]).
//
// Each copy joins its thread's open group; a commit closes the group and opens
// the next. The scheduler completes the copies at times it picks; a wait
// blocks the warp until, for every waiting lane, at most n of that thread's
// most recent committed groups still have copies in flight (uncommitted
// copies are not waited for, as in PTX). A bulk store completes in two
// stages, so that `read = true` (wait_group.read) can pass once the shared
// source has been read while the global writes are still to come; a kernel
// that reuses the source earlier sees the corruption a GPU would show.
#include "ir/Intrinsics.h"
#include "simulator/CtaExecutor.h"
#include "simulator/Packed.h"

#include <fmt/format.h>

#include <bit>

namespace tilescope::sim {

namespace {
constexpr int kCpAsync = 0, kBulkStore = 1;
} // namespace

bool CtaExecutor::checkTmaAlignment(const Region &global, const Region &shared, llvm::SMLoc loc) {
  // TMA: the box's rows start 16-byte aligned in global memory and are a
  // multiple of 16 bytes; the shared tile is 128-byte aligned.
  const BufferPlan &gb = plan(global.buffer), &sb = plan(shared.buffer);
  int bits = dtypeBits(gb.dtype); // sub-byte elements are packed
  size_t rank = gb.shape.size();
  int64_t innerStart = global.start.back();
  int64_t innerExtent = !global.dimOf.empty() && global.dimOf.back() == static_cast<int>(rank) - 1
                            ? global.extent.back()
                            : 1;
  if (innerStart * bits % 128 != 0)
    return fail(loc, fmt::format("misaligned TMA: the box starts {} bytes into a row of '{}'; "
                                 "global addresses must be 16-byte aligned",
                                 innerStart * bits / 8.0, gb.name));
  if (innerExtent * bits % 128 != 0)
    return fail(loc, fmt::format("misaligned TMA: box rows of {} bytes are not a multiple of 16",
                                 innerExtent * bits / 8.0));
  int64_t sharedBit = sb.sharedBit(bufferFlat(shared, 0)), sharedByte = sharedBit / 8;
  if (sharedBit % 1024 != 0)
    return fail(loc, fmt::format("misaligned TMA: the shared tile starts at byte {} of shared "
                                 "memory; it must be 128-byte aligned",
                                 sharedByte));
  return true;
}

bool CtaExecutor::execAsyncGroupNative(Warp &w, const CallStmt &c, ThreadRange threads, int lane) {
  const std::string &n = c.callee;
  const IntrinsicId id = idOf(c);
  int kind = unitOf(id) == IntrinsicUnit::CpAsync ? kCpAsync : kBulkStore;
  auto &perThread = groups_[kind];
  if (perThread.empty())
    perThread.resize(p_.threads);
  std::vector<AsyncGroup> &mine = perThread[threads.begin];
  if (mine.empty())
    mine.emplace_back(); // the open group
  if (id == IntrinsicId::CpAsyncCommit || id == IntrinsicId::TmaStoreCommit) {
    mine.emplace_back();
    return true;
  }
  std::optional<Region> dst, src;
  if (!copyRegions(c, w, lane, dst, src))
    return false;
  const BufferPlan &db = plan(dst->buffer), &sb = plan(src->buffer);
  MemScope wantDst = kind == kCpAsync ? MemScope::Shared : MemScope::Global;
  MemScope wantSrc = kind == kCpAsync ? MemScope::Global : MemScope::Shared;
  if (db.scope != wantDst || sb.scope != wantSrc)
    return fail(c.loc,
                fmt::format("'{}' copies {} -> {}, not {} -> {}", n, memScopeName(wantSrc),
                            memScopeName(wantDst), memScopeName(sb.scope), memScopeName(db.scope)));
  if (db.dtype != sb.dtype)
    return fail(c.loc,
                fmt::format("'{}' between {} and {}", n, dtypeName(sb.dtype), dtypeName(db.dtype)));
  int64_t elements = dst->elements();
  if (src->elements() != elements)
    return fail(c.loc,
                fmt::format("'{}' copies {} elements into {}", n, src->elements(), elements));
  AsyncCopy unit;
  unit.dst = *dst;
  unit.src = *src;
  unit.loc = c.loc;
  unit.groupKind = kind;
  unit.groupThread = threads.begin;
  unit.groupSeq = static_cast<int64_t>(mine.size()) - 1;
  if (kind == kCpAsync) {
    // cp.async moves 4, 8 or 16 contiguous bytes between addresses aligned
    // to that size, all inside the source.
    // Sub-byte elements are packed, so positions are counted in bits.
    int w = dtypeBits(db.dtype);
    int64_t bits = elements * w, size = bits / 8;
    if (bits != 32 && bits != 64 && bits != 128)
      return fail(c.loc, fmt::format("cp.async copies 4, 8 or 16 bytes, not {}", bits / 8.0));
    for (int64_t i = 0; i < elements; ++i)
      if (!inBounds(*src, i))
        return fail(c.loc, fmt::format("cp.async reads outside '{}'", sb.name));
    int64_t g0 = bufferFlat(*src, 0), s0 = db.sharedBit(bufferFlat(*dst, 0));
    for (int64_t i = 1; i < elements; ++i)
      if (bufferFlat(*src, i) != g0 + i || db.sharedBit(bufferFlat(*dst, i)) != s0 + i * w)
        return fail(c.loc, "cp.async needs contiguous source and destination elements");
    if (g0 * w % bits != 0 || s0 % bits != 0)
      return fail(c.loc, fmt::format("misaligned cp.async of {} bytes: global byte {}, shared "
                                     "byte {}",
                                     size, g0 * w / 8.0, s0 / 8.0));
  } else {
    if (!checkTmaAlignment(*dst, *src, c.loc))
      return false;
    ++mine.back().unread;
  }
  ++mine.back().pending;
  stampAsync(unit, threads);
  enqueue(std::move(unit));
  return true;
}

bool CtaExecutor::execGroupWait(Warp &w, Frame &f, const CallStmt &c) {
  const std::string &n = c.callee;
  const IntrinsicId id = idOf(c);
  int kind = unitOf(id) == IntrinsicUnit::CpAsync ? kCpAsync : kBulkStore;
  uint32_t mask = f.mask;
  int64_t keep = 0;
  bool read = false;
  if (id != IntrinsicId::CpAsyncWaitAll) {
    LaneValues v;
    if (c.args.empty() || !eval(c.args[0].value, w, mask, v))
      return failure_ ? false : fail(c.loc, fmt::format("'{}' needs a group count", n));
    keep = v.lane[std::countr_zero(mask)].i;
    bool uniform = true;
    for (uint32_t m = mask; m; m &= m - 1)
      uniform &= v.lane[std::countr_zero(m)].i == keep;
    if (!uniform)
      return fail(c.loc, fmt::format("'{}' needs the same count in every lane", n));
    if (keep < 0 || keep > 63)
      return fail(c.loc, fmt::format("'{}' takes a count in [0, 63], not {}", n, keep));
  }
  if (const CallArg *r = c.keyword("read")) {
    LaneValues v;
    if (!eval(r->value, w, mask, v))
      return false;
    read = v.lane[std::countr_zero(mask)].i != 0;
  }
  auto &perThread = groups_[kind];
  if (perThread.empty())
    perThread.resize(p_.threads);
  if (id == IntrinsicId::CpAsyncWaitAll) // commit the open group, then wait for everything
    for (uint32_t m = mask; m; m &= m - 1) {
      std::vector<AsyncGroup> &mine = perThread[w.id * 32 + std::countr_zero(m)];
      if (!mine.empty() && mine.back().pending > 0)
        mine.emplace_back();
    }
  w.groupWait = {kind, keep, read, mask};
  if (!groupWaitSatisfied(w)) {
    w.state = Warp::State::WaitBarrier;
    w.blockedAt = &c;
    return true;
  }
  if (race_) // each waiting thread now sees what its finished groups did
    for (uint32_t m = mask; m; m &= m - 1) {
      int64_t t = w.id * 32 + std::countr_zero(m);
      const std::vector<AsyncGroup> &mine = perThread[t];
      for (int64_t s = 0; s + 1 + keep < static_cast<int64_t>(mine.size()); ++s)
        race_->acquire(raceThread(t), mine[s].done);
    }
  w.groupWait = {};
  ++f.pc;
  return true;
}

bool CtaExecutor::groupWaitSatisfied(const Warp &w) const {
  const Warp::GroupWait &g = w.groupWait;
  if (g.kind < 0)
    return true;
  const auto &perThread = groups_[g.kind];
  for (uint32_t m = g.mask; m; m &= m - 1) {
    const std::vector<AsyncGroup> &mine = perThread[w.id * 32 + std::countr_zero(m)];
    // Every committed group but the newest `keep` must be done (the last
    // entry is the open group, which is not waited for).
    for (int64_t s = 0; s + 1 + g.keep < static_cast<int64_t>(mine.size()); ++s)
      if ((g.read ? mine[s].unread : mine[s].pending) > 0)
        return false;
  }
  return true;
}

bool CtaExecutor::completeGroupUnit(size_t index) {
  AsyncCopy &unit = inflight_[index];
  // Race detection: the accesses are the unit's.
  AsyncAgentScope scope(asyncAgent_, unit.agent);
  // Device races: a bulk store writes global memory through the async proxy.
  struct UnitScope {
    bool &flag;
    ~UnitScope() { flag = false; }
  } completing{asyncCompleting_};
  asyncCompleting_ = true;
  ThreadRange none{0, 0};
  int64_t n = unit.src.elements();
  if (unit.groupKind == kBulkStore && !unit.sourceRead) {
    // First stage: the TMA reads the shared tile, as a whole region where
    // no access must be traced one by one and every element is inside and
    // initialised (else element by element, which reports what is not).
    const bool whole = !everyAccessTraced() && p_.buffers[unit.src.buffer].scope == MemScope::Shared &&
                       fastRegion(unit.src) && gatherBits(unit.src, none, unit.staged);
    if (whole)
      countAccess(unit.src, false);
    unit.staged.resize(n);
    for (int64_t i = 0; i < n && !whole; ++i) {
      auto bits = readBits(unit.src.buffer, bufferFlat(unit.src, i), none, unit.loc);
      if (!bits)
        return false;
      unit.staged[i] = *bits;
    }
    unit.sourceRead = true;
    AsyncGroup &g = groups_[kBulkStore][unit.groupThread][unit.groupSeq];
    --g.unread;
    if (race_) // a read-only wait may pass now
      joinInto(g.done, race_->clock(static_cast<uint32_t>(unit.agent)));
    return true;
  }
  AsyncCopy done = std::move(unit);
  inflight_.erase(inflight_.begin() + static_cast<long>(index));
  for (int64_t i = 0; i < n; ++i) {
    uint64_t bits = 0;
    if (done.groupKind == kBulkStore) {
      if (!inBounds(done.dst, i))
        continue; // TMA clips stores at the tensor's edge
      bits = done.staged[i];
    } else {
      auto b = readBits(done.src.buffer, bufferFlat(done.src, i), none, done.loc);
      if (!b)
        return false;
      bits = *b;
    }
    if (!writeBits(done.dst.buffer, bufferFlat(done.dst, i), bits, none, done.loc))
      return false;
  }
  ++stats_.asyncCopies;
  stats_.elementsMoved += n;
  AsyncGroup &g = groups_[done.groupKind][done.groupThread][done.groupSeq];
  --g.pending;
  if (race_ && done.groupKind == kCpAsync)
    joinInto(g.done, race_->clock(static_cast<uint32_t>(done.agent)));
  return true;
}

} // namespace tilescope::sim
