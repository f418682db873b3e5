#include "verifier/StagePairs.h"

#include "ir/Visitor.h"

#include <algorithm>
#include <set>

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

bool fillAndRead(const MemoryAccess &x, const MemoryAccess &y) {
  if (x.buffer != y.buffer || x.write == y.write)
    return false;
  return x.scope != MemScope::Global && x.scope != MemScope::Reg && !x.remoteCta && !y.remoteCta;
}

// Whether some thread of `threads` belongs to process p.
bool meets(const ThreadSet &threads, const ThreadSet &p) {
  for (int64_t t = 0; t < p.launchThreads(); ++t)
    if (p.contains(t) && threads.contains(t))
      return true;
  return false;
}

} // namespace

bool isStagePair(const BarrierSkeleton &sk, const SyncEvent &a, const MemoryAccess &x,
                 const SyncEvent &b, const MemoryAccess &y) {
  if (a.role == b.role || !fillAndRead(x, y))
    return false;
  return sameOuterLoop(sk, a.loop, b.loop);
}

bool isProcessStagePair(const BarrierSkeleton &sk, const std::vector<ThreadSet> &processes,
                        const SyncEvent &a, const MemoryAccess &x, const SyncEvent &b,
                        const MemoryAccess &y) {
  if (a.role != b.role || a.role < 0 || !fillAndRead(x, y) || !sameOuterLoop(sk, a.loop, b.loop))
    return false;
  for (const ThreadSet &p : processes)
    if (meets(a.threads, p) && meets(b.threads, p))
      return false;
  return true;
}

BarrierSkeleton hoistInnerAccesses(const BarrierSkeleton &skeleton) {
  BarrierSkeleton out = skeleton;
  // Loops that hold (at any depth) an event other than a plain access.
  std::vector<bool> synchronises(out.loops.size(), false);
  for (const SyncEvent &e : out.events)
    if (e.kind != SyncKind::Access)
      for (int l = e.loop; l >= 0; l = out.loops[size_t(l)].parent)
        synchronises[size_t(l)] = true;
  auto reads = [](const Expr &e, const std::string &var) {
    return e && namesUsed(e).count(var) > 0;
  };
  for (SyncEvent &e : out.events) {
    // Register tiles stay where they are: the wgmma and tcgen05 checks walk
    // their loops, and no stage is a register.
    if (e.kind != SyncKind::Access ||
        std::any_of(e.accesses.begin(), e.accesses.end(),
                    [](const MemoryAccess &a) { return a.scope == MemScope::Reg; }))
      continue;
    while (e.loop >= 0 && out.loops[size_t(e.loop)].parent >= 0 && !synchronises[size_t(e.loop)]) {
      const std::string &var = out.loops[size_t(e.loop)].var;
      bool free = true;
      for (const Expr &g : e.guards)
        free = free && !reads(g, var);
      for (const MemoryAccess &a : e.accesses)
        free = free && !reads(a.stage, var);
      if (!free)
        break;
      e.loop = out.loops[size_t(e.loop)].parent;
    }
  }
  return out;
}

} // namespace tilescope
