// The ordering graph over the CTAs of a cluster (BarrierProver.h): which
// kernels it takes, and the edges from a wait to the arrivals, copies and
// multicasts other CTAs send to it.
//
// Why the graph may enumerate the ranks: every CTA of a cluster runs the
// same code, and the proofs quantify over the cluster (its first blockIdx
// stays symbolic, with every size), so the C copies of one CTA's events,
// each encoded for its rank, are the whole cluster. Program order holds
// inside each copy; between copies the only orderings are those of the
// barriers: a wait of rank rho completes only after every event its phase
// counts, which, with the phase counts proved exact (checkArrivals,
// checkTransactions, over every sender), includes an event of rank sigma
// that reaches rho in that round. Such an edge is added only where Z3
// proves that the event runs and reaches rho in every execution of the
// wait whose phase is not the one before the first; where it never does
// there is no edge, and anything between is not proved. Nothing else links
// CTAs: cluster barriers in loops and DSMEM reads of a multicast buffer
// keep the graph out of reach (clusterGraphModelled).
#include "verifier/BarrierProver.h"

#include "ir/Printer.h"

#include <fmt/format.h>

#include <set>

namespace tilescope::detail {

std::string BarrierProver::rankText(int64_t r) {
  return r < 0 ? std::string() : fmt::format(" of the CTA of rank {}", r);
}

std::string BarrierProver::clusterScopeText() const {
  if (!perRank_)
    return "";
  return fmt::format(", in every CTA of the cluster (its {} ranks enumerated, each CTA's "
                     "events a copy of the graph)",
                     graphRanks());
}

bool BarrierProver::clusterGraphModelled(std::string &why) {
  if (!clusterCtas_) {
    why = "the cluster's extent is not a constant along one axis";
    return false;
  }
  if (*clusterCtas_ > kMaxClusterRanks) {
    why = fmt::format("the cluster has {} CTAs; the graph enumerates the ranks of clusters of "
                      "at most {}",
                      *clusterCtas_, kMaxClusterRanks);
    return false;
  }
  std::set<std::string> multicastFilled;
  for (const SyncEvent &e : sk_.events) {
    bool clusterBarrier = e.kind == SyncKind::ClusterArrive || e.kind == SyncKind::ClusterWait ||
                          (e.kind == SyncKind::CtaSync && e.scope == ExecScope::Cluster);
    if (clusterBarrier && e.loop >= 0) {
      why = fmt::format("{} in loop {} joins the CTAs of the cluster, which the graph does not "
                        "model",
                        e.what, sk_.loops[size_t(e.loop)].var);
      return false;
    }
    if (e.multicast)
      for (const MemoryAccess &a : e.accesses)
        if (a.write && a.scope == MemScope::Shared)
          multicastFilled.insert(a.buffer);
  }
  for (const SyncEvent &e : sk_.events)
    for (const MemoryAccess &a : e.accesses)
      if (a.remoteCta && multicastFilled.count(a.buffer)) {
        why = fmt::format("{} reaches {} of another CTA through DSMEM, and a multicast fills it",
                          e.what, a.buffer);
        return false;
      }
  // Every loop runs alike in every CTA: its bounds, encoded for the CTA of
  // rank sigma, equal the receiver's (from which the nests are encoded).
  std::map<BuiltinKind, z3::expr> receiverIdx;
  for (size_t l = 0; l < sk_.loops.size(); ++l) {
    if (!loopTrip_[l])
      continue;
    const SkeletonLoop &loop = sk_.loops[l];
    for (int64_t sigma = 0; sigma < *clusterCtas_; ++sigma) {
      z3::expr rank = ctx_.int_val(sigma);
      std::map<BuiltinKind, z3::expr> at{{clusterCtaIdxOf(clusterAxis_), rank},
                                         {blockIdxOf(clusterAxis_),
                                          receiverBlock() - receiver() + rank}};
      z3::expr_vector differ(ctx_);
      for (const Expr &x : {loop.begin, loop.step, loop.trip()}) {
        auto mine = enc_.encode(x, {}), theirs = enc_.encode(x, {}, at);
        if (!mine || !theirs || !mine->is_int() || !theirs->is_int()) {
          differ.push_back(ctx_.bool_val(true));
          continue;
        }
        differ.push_back(*mine != *theirs);
      }
      Query q = solver();
      q.add(z3::mk_or(differ));
      if (decide(q, loop.loc, "a loop alike in every CTA") != z3::unsat) {
        why = fmt::format("loop {} may run differently in the CTA of rank {} of the cluster "
                          "(its bounds read the CTA)",
                          loop.var, sigma);
        return false;
      }
    }
  }
  perRank_ = true;
  return true;
}

std::optional<int64_t> BarrierProver::crossDelta(size_t w, int64_t rho, size_t e, int64_t sigma,
                                                 int64_t d, int64_t extraRounds, bool &unknown) {
  const SyncEvent &wait = sk_.events[w], &ev = sk_.events[e];
  const Pattern &pw = barrierPattern_[w], &pe = barrierPattern_[e];
  z3::expr i = enc_.fresh("i");
  auto [j, n] = roundOf(pw, i);
  z3::expr tau = n + ctx_.int_val(d + extraRounds);
  z3::expr ie = iterOf(pe, j, tau);
  z3::expr waits = firesAt(wait, i, rho) && touches(pe, j) && tau >= 0;
  std::optional<z3::expr> sent;
  {
    RankScope scope(*this, sigma);
    if (auto reached = reaches(ev, ie, ctx_.int_val(rho)))
      sent = fires(ev, ie) && *reached;
  }
  if (!sent) {
    unknown = true;
    return std::nullopt;
  }
  Query never = solver();
  never.add(waits && *sent);
  z3::check_result r = decide(never, wait.loc, "a cross-CTA arrival");
  if (r == z3::unsat)
    return std::nullopt;
  Query always = solver();
  always.add(waits && !*sent);
  if (extraRounds > 0) {
    // An arrival of the phase after the wait's protects it wherever that
    // phase receives arrivals at all (where it receives none, nothing can
    // complete it early).
    bool ok = true;
    auto next = roundTerms(barriers_.at(wait.barrier.array), j, tau, isArrival, ok);
    always.add(receiver() == ctx_.int_val(rho));
    always.add(ok ? anyOf(ctx_, next) : ctx_.bool_val(true));
  }
  if (r != z3::sat || decide(always, wait.loc, "a cross-CTA arrival") != z3::unsat) {
    unknown = true;
    return std::nullopt;
  }
  RankScope scope(*this, rho);
  auto delta = constantDelta(w, e, d, extraRounds);
  unknown = unknown || !delta;
  return delta;
}

} // namespace tilescope::detail
