#include "verifier/Tcgen05Fences.h"

#include "verifier/AsyncDrain.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <set>
#include <string>
#include <vector>

namespace tilescope {

namespace {

bool asyncTcgen05(const SyncEvent &e) {
  return e.call == IntrinsicId::Tcgen05Mma || e.call == IntrinsicId::Tcgen05Ld ||
         e.call == IntrinsicId::Tcgen05St;
}

bool acquires(const SyncEvent &e) {
  return e.kind == SyncKind::MbarWait || e.kind == SyncKind::CtaSync ||
         e.kind == SyncKind::NamedSync || e.kind == SyncKind::ClusterWait;
}

bool arrivesOnMbarrier(const SyncEvent &e) {
  return e.kind == SyncKind::MbarArrive || e.kind == SyncKind::MbarExpectTx ||
         e.kind == SyncKind::Tcgen05Commit || e.kind == SyncKind::TxDelivery;
}

bool releases(const SyncEvent &e) {
  return (arrivesOnMbarrier(e) && e.kind != SyncKind::TxDelivery) ||
         e.kind == SyncKind::CtaSync || e.kind == SyncKind::NamedSync ||
         e.kind == SyncKind::NamedArrive || e.kind == SyncKind::ClusterArrive;
}

bool intersects(const ThreadSet &a, const ThreadSet &b) {
  for (int64_t t = 0; t < a.launchThreads(); ++t)
    if (a.contains(t) && b.contains(t))
      return true;
  return false;
}

bool isPrefix(const std::vector<int> &a, const std::vector<int> &b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

bool inLoop(const std::vector<int> &chain, int loop) {
  return std::find(chain.begin(), chain.end(), loop) != chain.end();
}

class FenceCheck {
public:
  FenceCheck(const BarrierSkeleton &sk, StructuralResult &out) : sk_(sk), out_(out) {}

  void run() {
    for (const SyncEvent &op : sk_.events) {
      if (!asyncTcgen05(op) || buffers(op).empty())
        continue;
      checkAfter(op);
      if (op.call != IntrinsicId::Tcgen05Mma)
        checkBefore(op);
    }
  }

private:
  // The operation's shared and tensor-memory accesses.
  static std::vector<const MemoryAccess *> buffers(const SyncEvent &e) {
    std::vector<const MemoryAccess *> r;
    for (const MemoryAccess &a : e.accesses)
      if (a.scope == MemScope::Shared || a.scope == MemScope::Tmem)
        r.push_back(&a);
    return r;
  }

  // Whether some event of threads meeting `who` conflicts with op's
  // accesses (the same buffer, a write on either side).
  bool conflictsAmong(const SyncEvent &op, const ThreadSet &who, const SyncEvent *self) const {
    for (const SyncEvent &q : sk_.events) {
      if (&q != self && !intersects(q.threads, who))
        continue;
      for (const MemoryAccess &qa : q.accesses)
        for (const MemoryAccess *oa : buffers(op))
          if (qa.buffer == oa->buffer && qa.scope != MemScope::Reg && (qa.write || oa->write))
            return true;
    }
    return false;
  }

  // Whether an acquiring synchronisation s can order another thread's
  // access before op: a barrier always; a wait when the threads arriving on
  // its mbarrier (or the TMA delivering to it) make a conflicting access.
  bool mattersBefore(const SyncEvent &s, const SyncEvent &op) const {
    if (s.kind != SyncKind::MbarWait)
      return true;
    for (const SyncEvent &p : sk_.events)
      if (arrivesOnMbarrier(p) && p.barrier.array == s.barrier.array &&
          conflictsAmong(op, p.threads, &p))
        return true;
    return false;
  }

  // Whether a releasing synchronisation r can order op before another
  // thread's access: a barrier always; an arrival when the threads waiting
  // on its mbarrier make a conflicting access.
  bool mattersAfter(const SyncEvent &r, const SyncEvent &op) const {
    if (!arrivesOnMbarrier(r))
      return true;
    for (const SyncEvent &w : sk_.events)
      if (w.kind == SyncKind::MbarWait && w.barrier.array == r.barrier.array &&
          conflictsAmong(op, w.threads, nullptr))
        return true;
    return false;
  }

  // Whether fence f runs whenever op does, by all of op's threads, in op's
  // loops or around them, with no guard op lacks.
  bool fenceRunsWith(const SyncEvent &f, const SyncEvent &op) const {
    if (!op.threads.subsetOf(f.threads) || !isPrefix(sk_.loopChain(f), sk_.loopChain(op)))
      return false;
    std::set<std::string> og = guardTexts(op);
    for (const std::string &g : guardTexts(f))
      if (!og.count(g))
        return false;
    return true;
  }

  // Whether synchronisation s falls outside the stretch between fence f
  // and op (f before op when `fenceFirst`): not between them in program
  // order, and not in a loop of op's that f is outside of.
  bool outsideStretch(const SyncEvent &s, const SyncEvent &f, const SyncEvent &op,
                      bool fenceFirst) const {
    int lo = fenceFirst ? f.order : op.order, hi = fenceFirst ? op.order : f.order;
    if (s.order > lo && s.order < hi)
      return false;
    std::vector<int> oc = sk_.loopChain(op), sc = sk_.loopChain(s);
    size_t fenceDepth = sk_.loopChain(f).size();
    for (size_t d = fenceDepth; d < oc.size(); ++d)
      if (inLoop(sc, oc[d]))
        return false;
    return true;
  }

  bool sharesLoop(const SyncEvent &a, const SyncEvent &b) const {
    std::vector<int> ca = sk_.loopChain(a), cb = sk_.loopChain(b);
    return !ca.empty() && !cb.empty() && ca.front() == cb.front();
  }

  // Of the synchronisations of op's threads that may precede op (before) or
  // follow it (!before) in their program order, in loops across the back
  // edge too, that no fence of the kind covers and that matter for op: the
  // nearest one in that direction (in the same iteration first).
  const SyncEvent *unfenced(const SyncEvent &op, bool before) const {
    const SyncEvent *best = nullptr;
    auto distance = [&](const SyncEvent &s) {
      int d = before ? op.order - s.order : s.order - op.order;
      return d > 0 ? d : INT_MAX / 2 - d;
    };
    IntrinsicId kind = before ? IntrinsicId::Tcgen05FenceAfterThreadSync
                              : IntrinsicId::Tcgen05FenceBeforeThreadSync;
    for (const SyncEvent &s : sk_.events) {
      if (!(before ? acquires(s) : releases(s)) || !intersects(s.threads, op.threads))
        continue;
      bool ordered = before ? s.order < op.order : s.order > op.order;
      if (!ordered && !sharesLoop(s, op))
        continue;
      bool covered = false;
      for (const SyncEvent &f : sk_.events)
        if (f.kind == SyncKind::Tcgen05Fence && f.call == kind &&
            (before ? f.order < op.order : f.order > op.order) && fenceRunsWith(f, op) &&
            outsideStretch(s, f, op, before))
          covered = true;
      if (!covered && (!best || distance(s) < distance(*best)) &&
          (before ? mattersBefore(s, op) : mattersAfter(s, op)))
        best = &s;
    }
    return best;
  }

  void checkAfter(const SyncEvent &op) {
    if (const SyncEvent *s = unfenced(op, true))
      out_.findings.push_back(
          {ProtocolViolationKind::Tcgen05Discipline, op.loc,
           fmt::format("missing tcgen05.fence_after_thread_sync: {} by {} follows {} with no "
                       "tcgen05.fence_after_thread_sync between them, so it is not ordered "
                       "after that synchronisation and may act before what it made visible "
                       "(PTX orders an asynchronous tcgen05 operation after its thread's "
                       "synchronisation only through that fence)",
                       op.what, op.threads.describe(), s->what),
           {{s->loc, fmt::format("the {} it is not ordered after", s->what)}},
           false});
  }

  void checkBefore(const SyncEvent &op) {
    if (const SyncEvent *r = unfenced(op, false))
      out_.findings.push_back(
          {ProtocolViolationKind::Tcgen05Discipline, op.loc,
           fmt::format("missing tcgen05.fence_before_thread_sync: {} by {} is followed by {} "
                       "with no tcgen05.fence_before_thread_sync between them, so it is not "
                       "ordered before that synchronisation and may still touch tensor memory "
                       "after it (PTX orders an asynchronous tcgen05 operation before its "
                       "thread's synchronisation only through that fence)",
                       op.what, op.threads.describe(), r->what),
           {{r->loc, fmt::format("the {} it is not ordered before", r->what)}},
           false});
  }

  const BarrierSkeleton &sk_;
  StructuralResult &out_;
};

} // namespace

void checkTcgen05Fences(const BarrierSkeleton &skeleton, StructuralResult &out) {
  FenceCheck(skeleton, out).run();
}

} // namespace tilescope
