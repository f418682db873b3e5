#include "verifier/ClusterLifetime.h"

#include "verifier/AsyncDrain.h"

#include "ir/Printer.h"

#include <fmt/format.h>

#include <set>
#include <string>

namespace tilescope {

namespace {

bool clusterOfSeveral(const BarrierSkeleton &sk) {
  for (const Expr &e : sk.cluster) {
    std::optional<int64_t> n = constantValue(e);
    if (!n || *n > 1)
      return true;
  }
  return false;
}

// What of a peer CTA the event reaches, or "" when it stays in its own CTA.
std::string peerReach(const SyncEvent &e) {
  if (e.remoteCta)
    return fmt::format("arrives on the barrier {} of CTA rank {}", e.barrier.array,
                       print(e.remoteCta));
  if (e.multicast)
    return fmt::format("signals the barrier {} of every CTA of the mask {}", e.barrier.array,
                       print(e.multicast));
  for (const MemoryAccess &a : e.accesses)
    if (a.remoteCta)
      return fmt::format("{} the shared buffer {} of CTA rank {}", a.write ? "writes" : "reads",
                         a.buffer, print(a.remoteCta));
  return "";
}

bool arrives(const SyncEvent &e) {
  return e.kind == SyncKind::ClusterArrive ||
         (e.kind == SyncKind::CtaSync && e.scope == ExecScope::Cluster);
}

bool waits(const SyncEvent &e) {
  return e.kind == SyncKind::ClusterWait ||
         (e.kind == SyncKind::CtaSync && e.scope == ExecScope::Cluster);
}

// Whether barrier event b runs whenever e does, in e's loop or around it: its
// loop chain is a prefix of e's and it has no guard e does not have.
bool runsWith(const BarrierSkeleton &sk, const SyncEvent &b, const SyncEvent &e) {
  if (!runsAfterLastIteration(sk, b, e))
    return false;
  std::set<std::string> eg = guardTexts(e);
  for (const std::string &g : guardTexts(b))
    if (!eg.count(g))
      return false;
  return true;
}

} // namespace

void checkClusterLifetime(const BarrierSkeleton &sk, StructuralResult &out) {
  if (!clusterOfSeveral(sk))
    return;
  std::set<const char *> seen; // one statement may give several events (a copy, its bytes)
  for (const SyncEvent &e : sk.events) {
    std::string reach = peerReach(e);
    if (reach.empty() || !seen.insert(e.loc.getPointer()).second)
      continue;
    ThreadSet cover = coverOf(e);
    // Started: a wait of the cluster barrier by e's threads before e, after
    // their arrival (a phase completes when every thread of the cluster that
    // has not exited arrived: the peer has run past its inits).
    bool started = false, alive = false;
    for (const SyncEvent &w : sk.events) {
      if (!waits(w) || w.order > e.order || !cover.subsetOf(coverOf(w)) || !runsWith(sk, w, e))
        continue;
      for (const SyncEvent &a : sk.events)
        started = started || (arrives(a) && a.order <= w.order &&
                              coverOf(w).subsetOf(coverOf(a)) && runsWith(sk, a, w));
    }
    // Alive: an arrival by e's threads after e, then a wait, both running
    // whenever e does (a barrier outside e's loops runs after its last
    // iteration).
    for (const SyncEvent &a : sk.events) {
      if (!arrives(a) || a.order <= e.order || !cover.subsetOf(coverOf(a)) || !runsWith(sk, a, e))
        continue;
      for (const SyncEvent &w : sk.events)
        alive = alive || (waits(w) && w.order >= a.order && runsWith(sk, w, a));
    }
    if (!started)
      out.findings.push_back(
          {ProtocolViolationKind::ClusterLifetime,
           e.loc,
           fmt::format("{} by {} {} with no cluster barrier (cluster.sync, or barrier.cluster."
                       "arrive then barrier.cluster.wait by these threads) before it on every run: the peer CTA "
                       "may not have started or initialised its barriers yet",
                       e.what, e.threads.describe(), reach),
           {},
           false,
           false});
    if (!alive)
      out.notProved.push_back(
          {e.loc, fmt::format("cluster lifetime: {} {}, and no cluster barrier follows it on every "
                              "run: the peer CTA may have exited, its shared memory released, "
                              "before it lands",
                              e.what, reach)});
  }
}

} // namespace tilescope
