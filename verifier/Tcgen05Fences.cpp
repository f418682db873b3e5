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
         e.kind == SyncKind::NamedSync || e.kind == SyncKind::ClusterWait ||
         e.kind == SyncKind::WarpSync;
}

bool arrivesOnMbarrier(const SyncEvent &e) {
  return e.kind == SyncKind::MbarArrive || e.kind == SyncKind::MbarExpectTx ||
         e.kind == SyncKind::Tcgen05Commit || e.kind == SyncKind::TxDelivery;
}

bool releases(const SyncEvent &e) {
  return (arrivesOnMbarrier(e) && e.kind != SyncKind::TxDelivery) ||
         e.kind == SyncKind::CtaSync || e.kind == SyncKind::NamedSync ||
         e.kind == SyncKind::NamedArrive || e.kind == SyncKind::ClusterArrive ||
         e.kind == SyncKind::WarpSync;
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
      check(op, true);
      if (op.call != IntrinsicId::Tcgen05Mma)
        check(op, false);
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

  static bool guardsWithin(const SyncEvent &f, const SyncEvent &e) {
    std::set<std::string> eg = guardTexts(e);
    for (const std::string &g : guardTexts(f))
      if (!eg.count(g))
        return false;
    return true;
  }

  // Whether fence f stands between synchronisation s and op on every run
  // on which both do, for op's threads (`fenceFirst`: f orders op after s,
  // an after fence; else op before s, a before fence). f is executed by all
  // of op's threads. Beside s: in s's loop body right after it (before it),
  // under no guard s lacks, with op not in between: every execution of s
  // is followed by f (preceded, for a before fence). Or beside op: in op's
  // loops or around them (its loop chain a prefix of op's), with no guard
  // (condition over sizes or loop variables) that both op and s lack, and
  // either in one pass of the code: f between s and op
  // in program order (f before op, s not between them); or across the back
  // edge of f's innermost loop: s and f after op in its body, s before f
  // (an after fence at the end of the body covers a wait there for the
  // next iteration's op; mirrored for a before fence at the top of the body
  // and a release before it). In both, s lies in no loop of op's that f is
  // outside of (a later iteration of it would put s on the wrong side of f).
  bool fenceBetween(const SyncEvent &f, const SyncEvent &s, const SyncEvent &op,
                    bool fenceFirst) const {
    std::vector<int> fc = sk_.loopChain(f), oc = sk_.loopChain(op), sc = sk_.loopChain(s);
    if (!op.threads.subsetOf(f.threads))
      return false;
    // Beside s: f in s's loop body, after s (before it, for a before
    // fence), under no guard s lacks, and op not between them.
    int lo = fenceFirst ? s.order : f.order, hi = fenceFirst ? f.order : s.order;
    if (sc == fc && lo < hi && guardsWithin(f, s) && !(op.order > lo && op.order < hi))
      return true;
    if (!isPrefix(fc, oc))
      return false;
    if (!guardsWithin(f, op) && !(sc == fc && guardsWithin(f, s)))
      return false;
    for (size_t d = fc.size(); d < oc.size(); ++d)
      if (inLoop(sc, oc[d]))
        return false;
    // `a` before `b` in program order, seen from op's side of f.
    auto precedes = [&](const SyncEvent &a, const SyncEvent &b) {
      return fenceFirst ? a.order < b.order : a.order > b.order;
    };
    if (precedes(f, op)) // one pass: s, f, op (mirrored: op, f, s)
      return !(precedes(f, s) && precedes(s, op));
    // across the back edge: op, s, f, then op again (mirrored: op, f, s, op)
    return !fc.empty() && precedes(op, s) && precedes(s, f) && inLoop(sc, fc.back());
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
        if (f.kind == SyncKind::Tcgen05Fence && f.call == kind && fenceBetween(f, s, op, before))
          covered = true;
      if (!covered && (!best || distance(s) < distance(*best)) &&
          (before ? mattersBefore(s, op) : mattersAfter(s, op)))
        best = &s;
    }
    return best;
  }

  // A finding at op when a synchronisation that matters for it lacks its
  // fence: after fences (`before`: the synchronisation precedes op) or
  // before fences.
  void check(const SyncEvent &op, bool before) {
    const SyncEvent *s = unfenced(op, before);
    if (!s)
      return;
    std::string_view fence = before ? "after" : "before";
    std::string message = fmt::format(
        "missing tcgen05.fence_{0}_thread_sync: {1} by {2} {3} {4} with no "
        "tcgen05.fence_{0}_thread_sync between them, so it is not ordered {0} that "
        "synchronisation and {5} (PTX orders an asynchronous tcgen05 operation {0} its thread's "
        "synchronisation only through that fence)",
        fence, op.what, op.threads.describe(), before ? "follows" : "is followed by", s->what,
        before ? "may act before what it made visible"
               : "may still touch tensor memory after it");
    out_.findings.push_back({ProtocolViolationKind::Tcgen05Discipline, op.loc, std::move(message),
                             {{s->loc, fmt::format("the {} it is not ordered {}", s->what, fence)}},
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
