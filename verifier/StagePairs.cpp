#include "verifier/StagePairs.h"

namespace tilescope {
namespace {

// The outermost loop around event loop `l`.
const SkeletonLoop &outermost(const BarrierSkeleton &sk, int l) {
  while (sk.loops[size_t(l)].parent >= 0)
    l = sk.loops[size_t(l)].parent;
  return sk.loops[size_t(l)];
}

bool sameOuterLoop(const BarrierSkeleton &sk, int la, int lb) {
  if (la < 0 || lb < 0)
    return false;
  const SkeletonLoop &a = outermost(sk, la), &b = outermost(sk, lb);
  return equal(a.begin, b.begin) && equal(a.end, b.end) && equal(a.step, b.step);
}

} // namespace

bool isStagePair(const BarrierSkeleton &sk, const SyncEvent &a, const MemoryAccess &x,
                 const SyncEvent &b, const MemoryAccess &y) {
  if (a.role == b.role || x.buffer != y.buffer || x.write == y.write)
    return false;
  if (x.scope == MemScope::Global || x.scope == MemScope::Reg || x.remoteCta || y.remoteCta)
    return false;
  return sameOuterLoop(sk, a.loop, b.loop);
}

} // namespace tilescope
