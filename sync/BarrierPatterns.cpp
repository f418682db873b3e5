#include "sync/BarrierPatterns.h"

#include "ir/Affine.h"

#include <algorithm>

namespace tilescope {

std::optional<IndexPattern> structuralPattern(const BarrierSkeleton &sk, const SyncEvent &ev,
                                              const Expr &index, int64_t size) {
  IndexPattern p;
  p.period = std::max<int64_t>(size, 1);
  if (auto c = constantValue(index)) {
    if (*c < 0 || *c >= p.period)
      return std::nullopt;
    p.ok = p.constant = true;
    p.c = *c;
    return p;
  }
  if (ev.loop < 0 || p.period == 1)
    return std::nullopt;
  const SkeletonLoop &l = sk.loops[size_t(ev.loop)];
  if (l.parent >= 0 || constantValue(l.begin) != 0 || constantValue(l.step) != 1)
    return std::nullopt; // nested: the iteration is not the loop variable
  if (index->kind != ExprKind::Binary || as<Binary>(index).op != BinaryOp::Mod ||
      constantValue(as<Binary>(index).rhs) != p.period)
    return std::nullopt;
  Affine a = Affine::of(as<Binary>(index).lhs);
  if (a.terms.size() != 1 || a.terms.begin()->first != l.var || a.terms.begin()->second != 1 ||
      a.constant < 0)
    return std::nullopt;
  p.ok = true;
  p.c = a.constant % p.period;
  return p;
}

} // namespace tilescope
