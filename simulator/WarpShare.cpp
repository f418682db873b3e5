// Warpgroup tile primitives that each warp runs on its own (CtaExecutor.h,
// splitsPerWarp): wg.copy, wg.cast and wg.fill lower to per-thread loads,
// stores and conversions with no barrier (dispatch/DispatchTable.cpp: the
// owner loop of a register tile, or a loop spreading a memory tile's
// elements over the warpgroup's 128 threads), so nothing makes one warp wait
// for another there, and a missing barrier around them is a race that the
// simulator's schedules and the race detector can meet.
#include "simulator/CtaExecutor.h"

#include "ir/Intrinsics.h"

#include <algorithm>

namespace tilescope::sim {

bool CtaExecutor::splitsPerWarp(const CallStmt &c) const {
  IntrinsicId id = idOf(c);
  if (c.scope != ExecScope::Warpgroup ||
      (id != IntrinsicId::Copy && id != IntrinsicId::Cast && id != IntrinsicId::Fill))
    return false;
  // Buffers only a rendezvous reads as the lowering does: a register tile
  // without a layout (private to every thread: no owner loop) and tensor
  // memory (tcgen05.ld / st, warp-collective).
  for (const CallArg &a : c.args) {
    Expr base = a.value;
    while (base->kind == ExprKind::Index)
      base = as<Index>(base).base;
    auto it = base->kind == ExprKind::Var ? p_.names.find(base.get()) : p_.names.end();
    if (it == p_.names.end() || it->second.kind != NameRef::Buffer)
      continue;
    const BufferPlan &b = p_.buffers[it->second.index];
    if (b.privateRegs() || b.scope == MemScope::Tmem)
      return false;
  }
  return true;
}

void CtaExecutor::shareOf(const Region &dst, const Region *src, int64_t i, int64_t dstFlat,
                          int64_t srcFlat, ThreadRange warp, std::vector<int64_t> &out) const {
  out.clear();
  const int64_t group = warp.begin / 128 * 128;
  auto owned = [&](const Region &r) {
    const BufferPlan &b = p_.buffers[r.buffer];
    return b.scope == MemScope::Reg && !b.privateRegs();
  };
  if (owned(dst) && dstFlat >= 0) {
    const BufferPlan &b = p_.buffers[dst.buffer];
    for (int32_t k = b.ownerStart[dstFlat]; k < b.ownerStart[dstFlat + 1]; ++k)
      if (warp.contains(b.owners[k].first))
        out.push_back(b.owners[k].first);
    return;
  }
  if (!owned(dst) && src && owned(*src) && srcFlat >= 0) {
    const BufferPlan &b = p_.buffers[src->buffer];
    for (int32_t k = b.ownerStart[srcFlat]; k < b.ownerStart[srcFlat + 1]; ++k) {
      int64_t t = b.owners[k].first;
      if (t < group || t >= group + 128)
        continue;
      if (warp.contains(t))
        out.push_back(t);
      return; // the first replica in the warpgroup stores it
    }
    return;
  }
  // Spread over the warpgroup (or an element outside its tile: the thread
  // the spread gives it reports the error).
  int64_t spread = std::min<int64_t>(128, p_.threads - group);
  if (int64_t t = group + i % spread; warp.contains(t))
    out.push_back(t);
}

const std::vector<CtaExecutor::ShareElement> &
CtaExecutor::warpShare(const Region &dst, const Region *src, int64_t n, ThreadRange warp) {
  std::vector<int64_t> key = {warp.begin, warp.end};
  for (const Region *r : {&dst, src})
    if (r)
      appendRegionKey(key, *r);
    else
      key.push_back(-2);
  auto [it, fresh] = caches_->warpShares.try_emplace(std::move(key));
  if (fresh) {
    // The elements' flat indices (-1 outside the buffer), in bulk where the
    // region lies inside its buffer.
    auto flatsOf = [&](const Region *r, std::vector<int64_t> &flats) {
      if (!r)
        return;
      if (insideBuffer(*r)) {
        regionFlats(*r, flats);
        return;
      }
      flats.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        flats[static_cast<size_t>(i)] = flatInBounds(*r, i);
    };
    std::vector<int64_t> dstFlats, srcFlats, doers;
    flatsOf(&dst, dstFlats);
    flatsOf(src, srcFlats);
    for (int64_t i = 0; i < n; ++i) {
      int64_t d = dstFlats[static_cast<size_t>(i)], f = src ? srcFlats[static_cast<size_t>(i)] : -1;
      shareOf(dst, src, i, d, f, warp, doers);
      for (int64_t t : doers)
        it->second.push_back({i, t, d, f});
    }
  }
  return it->second;
}

} // namespace tilescope::sim
