// The barrier proofs over the ordering graph (BarrierProver.h): deadlock
// cycles, parity aliasing, waiting warps kept in step.
#include "verifier/BarrierProver.h"

#include "ir/Affine.h"
#include "ir/ConcreteEval.h"
#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "verifier/AsyncDrain.h"
#include "verifier/BarrierFallback.h"
#include "verifier/TmemProtocol.h"
#include "ir/ThreadIndex.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

namespace tilescope::detail {

void BarrierProver::buildGraph() {
  for (size_t e = 0; e < sk_.events.size(); ++e) {
    const SyncEvent &ev = sk_.events[e];
    if (ev.loop >= 0 && loopClass_[size_t(ev.loop)] >= 0) {
      nodeOf_[e] = int(nodes_.size());
      nodes_.push_back(e);
    } else if (ev.loop >= 0 && !ev.barrier.array.empty() && graphComplete_) {
      graphComplete_ = false;
      graphGap_ = fmt::format("{} (line order {}) is in a loop without a modelled trip count",
                              ev.what, ev.order);
    }
  }
  // In the per-rank graph of a cluster (clusterGraphModelled), the events of
  // rank r are nodes r * N0 .. r * N0 + N0 - 1.
  size_t N0 = nodes_.size();
  baseNodes_ = N0;
  for (int64_t r = 1; r < graphRanks(); ++r)
    for (size_t b = 0; b < N0; ++b)
      nodes_.push_back(nodes_[b]);
  // A shifted release (matchShiftedRelease) at iteration x follows the
  // statements before it in iteration x, but it does not run at iteration
  // 0 (where a wait that passes at once, phase -1, meets it) and the
  // release after the loop (its iteration trip) has no iteration trip to
  // follow. Those edges are kept for the deadlock cycles (true at every
  // iteration that runs, and a cycle needs them), not for the orderings the
  // safety proofs (aliasing, stages) rely on.
  struct Edge {
    size_t a, b;
    int64_t w;
    bool cycleOnly;
    bool programOrder = true;
  };
  std::vector<Edge> edges;
  // Program order is within one CTA: the same edges in every rank.
  auto edge = [&](size_t a, size_t b, int64_t w) {
    bool cycleOnly = w == 0 && shifted_.count(&sk_.events[nodes_[a]]);
    for (int64_t r = 0; r < graphRanks(); ++r)
      edges.push_back({a + size_t(r) * N0, b + size_t(r) * N0, w, cycleOnly});
  };
  for (size_t a = 0; a < N0; ++a)
    for (size_t b = 0; b < N0; ++b) {
      const SyncEvent &later = sk_.events[nodes_[a]], &earlier = sk_.events[nodes_[b]];
      if (later.role != earlier.role || later.loop != earlier.loop)
        continue;
      // Program order, for threads that ran the earlier event; or a barrier
      // that joins its threads (cta.sync) after an event of some of them:
      // it completes only once each of them has arrived, after that event.
      // Without the latter, a producer warp's wait before an all-thread
      // cta.sync in a loop both roles share was ordered before nothing the
      // cta.sync follows, and the deadlock through it went unseen.
      if (!later.threads.subsetOf(coverOf(earlier)) &&
          !(joinsItsThreads(later) && later.guards.empty() &&
            earlier.threads.subsetOf(later.threads)))
        continue;
      bool asyncUnwaited = earlier.kind == SyncKind::WgmmaMma && !waitedAfter(nodes_[b], nodes_[a]);
      if (later.order > earlier.order && !asyncUnwaited)
        edge(a, b, 0);
      if (!(earlier.kind == SyncKind::WgmmaMma && !waitedAfter(nodes_[b], SIZE_MAX)))
        edge(a, b, -1);
      else if (auto lag = groupsInFlight(nodes_[b], nodes_[a]))
        edge(a, b, -*lag); // wgmma groups kept in flight: retired n iterations later
    }
  // A wait needs the events completing its phase: in a cluster, those of
  // every CTA that sends to the wait's (crossDelta).
  for (const auto &[w, d] : waitShift_) {
    if (!nodeOf_.count(w))
      continue;
    const SyncEvent &wait = sk_.events[w];
    const BarrierInfo &info = barriers_.at(wait.barrier.array);
    for (size_t e : info.events) {
      const SyncEvent &ev = sk_.events[e];
      if (!completesPhase(ev.kind) || !nodeOf_.count(e))
        continue;
      bool sameClass = loopClass_[size_t(ev.loop)] == loopClass_[size_t(wait.loop)];
      // An edge not decided leaves the graph incomplete: a missing path is
      // then no evidence of a missing order (checkArrivalOrder).
      auto gap = [&](std::string why) {
        if (graphComplete_)
          graphGap_ = std::move(why);
        graphComplete_ = false;
      };
      for (int64_t rho = perRank_ ? 0 : -1; rho < (perRank_ ? graphRanks() : 0); ++rho) {
        if (!ev.crossCta() || !perRank_) {
          // Without the per-rank graph (run() does not build it then), a
          // cross-CTA event would be read as the receiver's own.
          if (ev.crossCta())
            gap(fmt::format("{} comes from another CTA of the cluster, and the graph does not "
                            "link the CTAs",
                            ev.what));
          if (!sameClass) {
            gap(fmt::format("{} and {} are in loops whose trip counts are not proved equal",
                            wait.what, ev.what));
            continue;
          }
          RankScope scope(*this, rho);
          if (auto delta = constantDelta(w, e, d)) {
            edges.push_back({nodeAt(w, rho), nodeAt(e, rho), *delta, false, false});
            continue;
          }
          gap(fmt::format("the iteration distance between {} and {} is not constant", wait.what,
                          ev.what));
          report_.notProved.push_back(
              {wait.loc, fmt::format("the iteration distance between this wait and {} is not "
                                     "constant; deadlock freedom through it is not proved",
                                     ev.what)});
          continue;
        }
        for (int64_t sigma = 0; sigma < graphRanks(); ++sigma) {
          bool unknown = !sameClass;
          std::optional<int64_t> delta;
          if (sameClass)
            delta = crossDelta(w, rho, e, sigma, d, 0, unknown);
          if (delta)
            edges.push_back({nodeAt(w, rho), nodeAt(e, sigma), *delta, false, false});
          if (!unknown)
            continue;
          gap(fmt::format("whether {} of the CTA of rank {} completes the phase {} of the CTA "
                          "of rank {} waits for is not proved",
                          ev.what, sigma, wait.what, rho));
          report_.notProved.push_back(
              {wait.loc, fmt::format("whether {} of the CTA of rank {} completes the phase "
                                     "this wait of the CTA of rank {} waits for, at a constant "
                                     "iteration distance, in every execution, is not proved; "
                                     "deadlock freedom through it is not proved",
                                     ev.what, sigma, rho)});
        }
      }
    }
  }
  closePaths(edges, false, D_, next_);
  closeEveryThreadPaths(edges);
  if (std::any_of(edges.begin(), edges.end(), [](const Edge &e) { return e.cycleOnly; }))
    closePaths(edges, true, cycleD_, cycleNext_);
  else
    cycleD_ = D_, cycleNext_ = next_;
}

bool BarrierProver::joinsItsThreads(const SyncEvent &e) const {
  if (e.kind == SyncKind::CtaSync)
    return true;
  if (e.kind != SyncKind::NamedSync || e.namedId < 0 ||
      e.namedThreads != int64_t(e.threads.count()))
    return false;
  for (const SyncEvent &o : sk_.events)
    if (&o != &e && o.namedId == e.namedId &&
        (o.kind == SyncKind::NamedSync || o.kind == SyncKind::NamedArrive))
      return false; // another use of the id may complete its generation
  return true;
}

template <class Edges> void BarrierProver::closeEveryThreadPaths(const Edges &edges) {
  struct StateEdge {
    size_t a, b;
    int64_t w;
    bool cycleOnly;
  };
  std::vector<StateEdge> states;
  auto at = [](size_t n, bool every) { return 2 * n + (every ? 1 : 0); };
  auto own = [&](size_t n) { return 2 * nodes_.size() + n; };
  for (const auto &e : edges) {
    if (e.cycleOnly)
      continue;
    const SyncEvent &later = sk_.events[nodes_[e.a]], &earlier = sk_.events[nodes_[e.b]];
    if (!e.programOrder || joinsItsThreads(earlier)) {
      for (bool every : {false, true})
        states.push_back({at(e.a, every), at(e.b, true), e.w, false});
      continue;
    }
    // Only an MMA's completion is the collective's (wgmma, a tile gemm
    // dispatched to one: it retires for the whole warpgroup); other
    // accesses, tile primitives included, are each thread's own.
    bool mma = earlier.kind == SyncKind::WgmmaMma ||
               (earlier.scope == ExecScope::Warpgroup &&
                (earlier.call == IntrinsicId::Gemm || earlier.call == IntrinsicId::GemmAsync));
    ThreadSet units = mma ? later.threads.widened(128) : later.threads;
    bool every = earlier.threads.subsetOf(units);
    // The MMA's retirement for the whole warpgroup orders the MMA's own
    // operand reads, not what the other warps did before issuing it (PTX
    // gives wgmma no ordering between the warps of a warpgroup): such a path
    // ends at the MMA (its `own` state, which has no edges out).
    bool ownOnly = every && !earlier.threads.subsetOf(later.threads);
    states.push_back({at(e.a, true), ownOnly ? own(e.b) : at(e.b, every), e.w, false});
    states.push_back({at(e.a, false), at(e.b, false), e.w, false});
  }
  // Joining barriers split by thread (a named barrier per warpgroup, under
  // `if wgid == ...`; warp.sync, which joins each warp's lanes): a after b
  // for every thread of b when each thread of b passes, after b, a joining
  // barrier that some thread of a passes before a (same iteration: w = 0;
  // b in the iteration before: w = -1).
  size_t N = nodes_.size();
  for (size_t a = 0; a < N; ++a)
    for (size_t b = 0; b < N; ++b) {
      const SyncEvent &later = sk_.events[nodes_[a]], &earlier = sk_.events[nodes_[b]];
      if (a == b || later.role != earlier.role || later.loop != earlier.loop ||
          rankOfNode(a) != rankOfNode(b))
        continue;
      for (int64_t w : {0, -1}) {
        if (w == 0 && (later.order <= earlier.order || shifted_.count(&later)))
          continue;
        ThreadSet joined(sk_.threads);
        for (size_t j : nodes_) {
          const SyncEvent &J = sk_.events[j];
          bool warps = J.kind == SyncKind::WarpSync;
          if (J.role != later.role || J.loop != later.loop || !J.guards.empty() ||
              !(warps || joinsItsThreads(J)))
            continue;
          bool between = w == 0 ? earlier.order < J.order && J.order < later.order
                                : earlier.order < J.order || J.order < later.order;
          if (!between)
            continue;
          if (warps) {
            // warp.sync joins the lanes of each warp that runs it whole: a
            // warp's threads are joined when one of its lanes runs `a`.
            for (int64_t w0 = 0; w0 < sk_.threads; w0 += 32) {
              bool whole = true, meets = false;
              for (int64_t t = w0; t < std::min<int64_t>(w0 + 32, sk_.threads); ++t) {
                whole = whole && J.threads.contains(t);
                meets = meets || later.threads.contains(t);
              }
              if (whole && meets)
                for (int64_t t = w0; t < std::min<int64_t>(w0 + 32, sk_.threads); ++t)
                  joined.add(t);
            }
            continue;
          }
          bool meets = false;
          for (int64_t t = 0; t < sk_.threads && !meets; ++t)
            meets = J.threads.contains(t) && later.threads.contains(t);
          if (meets)
            for (int64_t t = 0; t < sk_.threads; ++t)
              if (J.threads.contains(t))
                joined.add(t);
        }
        if (earlier.threads.subsetOf(joined))
          states.push_back({at(a, true), at(b, true), w, false});
      }
    }
  std::vector<std::vector<int>> next;
  closePaths(states, false, everyD_, next, 3 * N);
}

std::optional<int64_t> BarrierProver::groupsInFlight(size_t mma, size_t later) const {
  const SyncEvent &m = sk_.events[mma];
  const SyncEvent *commit = nullptr;
  for (const SyncEvent &e : sk_.events)
    if (!commit && e.kind == SyncKind::WgmmaCommit && e.role == m.role && e.loop == m.loop &&
        e.order > m.order && e.guards.empty())
      commit = &e;
  if (!commit)
    return std::nullopt;
  std::optional<int64_t> best;
  for (const SyncEvent &e : sk_.events) {
    if (e.kind != SyncKind::WgmmaWait || e.role != m.role || e.loop != m.loop ||
        e.order < commit->order || e.order > sk_.events[later].order || !e.guards.empty())
      continue;
    if (auto n = constantValue(e.amount); n && *n >= 1 && (!best || *n < *best))
      best = *n;
  }
  return best;
}

bool BarrierProver::waitedAfter(size_t mma, size_t before) const {
  const SyncEvent &m = sk_.events[mma];
  // The commit that closes the MMA's group (the first unguarded one after it).
  const SyncEvent *commit = nullptr;
  for (const SyncEvent &e : sk_.events)
    if (!commit && e.kind == SyncKind::WgmmaCommit && e.role == m.role && e.loop == m.loop &&
        e.order > m.order && e.guards.empty())
      commit = &e;
  for (const SyncEvent &e : sk_.events) {
    if (e.kind != SyncKind::WgmmaWait || e.role != m.role || e.loop != m.loop ||
        e.order <= m.order || (before != SIZE_MAX && e.order >= sk_.events[before].order))
      continue;
    auto n = constantValue(e.amount);
    if (n.value_or(1) == 0)
      return true;
    // wait_group(n) retires every group but the n most recent: the MMA's
    // group is retired when at least n unguarded commits of the same
    // iteration lie between the one closing it and the wait (a commit
    // without a wgmma still opens an empty group, so each counts).
    if (!n || !commit || !e.guards.empty() || commit->order > e.order)
      continue;
    int64_t later = std::count_if(sk_.events.begin(), sk_.events.end(), [&](const SyncEvent &c) {
      return c.kind == SyncKind::WgmmaCommit && c.role == m.role && c.loop == m.loop &&
             c.order > commit->order && c.order < e.order && c.guards.empty();
    });
    if (later >= *n)
      return true;
  }
  return false;
}

std::optional<int64_t> BarrierProver::constantDelta(size_t w, size_t e, int64_t d,
                                                    int64_t extraRounds) {
  const Pattern &pw = barrierPattern_[w], &pe = barrierPattern_[e];
  if (!pw.constant && !pe.constant && pw.c == pe.c && pw.period == pe.period)
    return (d + extraRounds) * pw.period + pe.shift - pw.shift;
  if (pw.constant && pe.constant && pw.c == pe.c)
    return d + extraRounds;
  z3::expr i = enc_.fresh("i");
  auto [j, n] = roundOf(pw, i);
  z3::expr ie = iterOf(pe, j, n + ctx_.int_val(d + extraRounds));
  z3::expr delta = ie - i;
  Query s = solver();
  s.add(fires(sk_.events[w], i) && touches(pe, j));
  z3::expr probe = enc_.fresh("delta");
  s.add(probe == delta);
  if (s.check() != z3::sat)
    return std::nullopt;
  int64_t v = ProtoEncoder::value(s.get_model(), probe);
  Query t = solver();
  t.add(fires(sk_.events[w], i) && touches(pe, j) && delta != ctx_.int_val(v));
  if (t.check() != z3::unsat)
    return std::nullopt;
  return v;
}

std::vector<size_t> BarrierProver::cycleThrough(size_t a) {
  std::vector<size_t> path{a};
  size_t cur = a;
  for (size_t steps = 0; steps < nodes_.size() + 1; ++steps) {
    int nx = cycleNext_[cur][a];
    if (nx < 0)
      break;
    if (size_t(nx) == a)
      return path;
    path.push_back(size_t(nx));
    cur = size_t(nx);
  }
  return path;
}

void BarrierProver::findDeadlockCycles() {
  std::set<std::set<size_t>> seen;
  bool any = false;
  for (size_t a = 0; a < nodes_.size(); ++a) {
    if (cycleD_[a][a] < 0 || sk_.events[nodes_[a]].kind != SyncKind::MbarWait)
      continue;
    std::vector<size_t> cycle = cycleThrough(a);
    std::set<size_t> key(cycle.begin(), cycle.end());
    if (!seen.insert(key).second)
      continue;
    any = true;
    // A witness iteration where every event of the cycle runs.
    z3::expr i = enc_.fresh("i");
    Query s = solver();
    for (size_t node : cycle)
      s.add(firesAt(sk_.events[nodes_[node]], i, rankOfNode(node)));
    std::optional<z3::model> m;
    s.prefer(i);
    if (check(s, m, sk_.events[nodes_[a]].loc, "deadlock witness") != z3::sat)
      continue;
    const SyncEvent &first = sk_.events[nodes_[a]];
    std::string chain;
    std::vector<std::pair<llvm::SMLoc, std::string>> notes;
    for (size_t k = 0; k < cycle.size(); ++k) {
      const SyncEvent &e = sk_.events[nodes_[cycle[k]]];
      const SyncEvent &nx = sk_.events[nodes_[cycle[(k + 1) % cycle.size()]]];
      std::string by = e.threads.describe() + rankText(rankOfNode(cycle[k]));
      int64_t nxRank = rankOfNode(cycle[(k + 1) % cycle.size()]);
      if (e.kind == SyncKind::MbarWait && (nx.role != e.role || nxRank != rankOfNode(cycle[k])))
        notes.push_back(
            {e.loc, fmt::format("{} by {} waits on {} for a phase completed only by the "
                                "{}{} below",
                                e.what, by, e.barrier.array, nx.what, rankText(nxRank))});
      else if (e.kind == SyncKind::MbarWait)
        notes.push_back({e.loc, fmt::format("{} by {} waits on {}", e.what, by, e.barrier.array)});
      else
        notes.push_back({e.loc, fmt::format("{} by {} runs only after the wait below", e.what, by)});
    }
    RankScope scope(*this, rankOfNode(a));
    auto [j, n] = roundOf(barrierPattern_[nodes_[a]], i);
    int64_t d = waitShift_.count(nodes_[a]) ? waitShift_[nodes_[a]] : 0;
    auto parity = at(first.parity, first, i);
    finding(ProtocolViolationKind::Deadlock, first.loc,
            fmt::format("deadlock: at {} this wait on {}[{}] (parity {}) by {} waits for phase {}, "
                        "whose arrivals come after this same wait through a cycle of {} waits and "
                        "arrivals (for {})",
                        iterationText(*m, first, i), first.barrier.array, ProtoEncoder::text(*m, j),
                        parity ? ProtoEncoder::text(*m, z3::mod(*parity, 2)) : "-1",
                        sk_.roles[size_t(first.role)].describe() + rankText(rankOfNode(a)),
                        ProtoEncoder::text(*m, n + ctx_.int_val(d)), cycle.size(), sizes(*m)),
            notes);
  }
  if (!nodes_.empty())
    result("deadlock freedom (waits and arrivals in loops)", !any,
           any ? "violated"
               : "proved for all sizes: no cycle of waits and arrivals" + clusterScopeText());
}

void BarrierProver::checkAliasing() {
  for (const auto &[w, d] : waitShift_) {
    if (!nodeOf_.count(w))
      continue;
    for (int64_t rho = perRank_ ? 0 : -1; rho < (perRank_ ? graphRanks() : 0); ++rho)
      checkAliasing(w, d, rho);
  }
}

void BarrierProver::checkAliasing(size_t w, int64_t d, int64_t rho) {
  const SyncEvent &wait = sk_.events[w];
  const BarrierInfo &info = barriers_.at(wait.barrier.array);
  bool guarded = false;
  for (size_t e : info.events) {
    const SyncEvent &ev = sk_.events[e];
    if (!isArrival(ev.kind) || !nodeOf_.count(e))
      continue;
    // An arrival of phase t + 1 ordered after the wait: in a cluster, one
    // of any CTA that arrives on the wait's barrier in every such phase.
    for (int64_t sigma = perRank_ && ev.crossCta() ? 0 : rho;
         sigma < (perRank_ && ev.crossCta() ? graphRanks() : rho + 1); ++sigma) {
      std::optional<int64_t> delta;
      if (perRank_ && ev.crossCta()) {
        bool unknown = false;
        delta = crossDelta(w, rho, e, sigma, d, 1, unknown);
      } else {
        RankScope scope(*this, rho);
        delta = constantDelta(w, e, d, 1);
      }
      int64_t path = D_[nodeAt(e, sigma)][nodeAt(w, rho)];
      if (delta && path != kNoPath && *delta + path >= 0)
        guarded = true;
    }
  }
  if (guarded)
    return;
  z3::expr i = enc_.fresh("i");
  auto [j, n] = roundOf(barrierPattern_[w], i);
  bool ok = true;
  auto next = roundTerms(info, j, n + ctx_.int_val(d + 1), isArrival, ok);
  Query s = solver();
  s.add(firesAt(wait, i, rho) && anyOf(ctx_, next));
  if (rho >= 0)
    s.add(receiver() == ctx_.int_val(rho));
  std::optional<z3::model> m;
  s.prefer(i);
  if (check(s, m, wait.loc, "aliasing") != z3::sat)
    return;
  RankScope scope(*this, rho);
  z3::expr phase = n + ctx_.int_val(d);
  auto parity = at(wait.parity, wait, i);
  finding(
      ProtocolViolationKind::ParityAliasing, wait.loc,
      fmt::format("parity aliasing: at {} this wait on {}[{}] (parity {}) by {} waits for {}, "
                  "but nothing orders the arrivals of phase {} ({}) after it, so phase {} can "
                  "complete first and the wait then refers to a phase two behind (for {})",
                  iterationText(*m, wait, i), wait.barrier.array, ProtoEncoder::text(*m, j),
                  parity ? ProtoEncoder::text(*m, z3::mod(*parity, 2)) : "-1",
                  sk_.roles[size_t(wait.role)].describe() + rankText(rho),
                  m->eval(phase < 0, true).is_true() ? phaseText(-1)
                                                     : "phase " + ProtoEncoder::text(*m, phase),
                  ProtoEncoder::text(*m, phase + 1), termList(*m, next, "arrivals"),
                  ProtoEncoder::text(*m, phase + 1), sizes(*m)));
}

void BarrierProver::checkArrivalOrder() {
  bool any = false, open = false, checked = false;
  for (size_t a = 0; a < nodes_.size(); ++a) {
    size_t e = nodes_[a];
    const SyncEvent &ev = sk_.events[e];
    // An expect_tx that comes with an arrival (arrive.expect_tx) is that
    // arrival's: asked once.
    bool withArrival = ev.kind == SyncKind::MbarExpectTx && e > 0 &&
                       sk_.events[e - 1].loc == ev.loc &&
                       sk_.events[e - 1].kind == SyncKind::MbarArrive;
    if (ev.barrier.array.empty() ||
        !(isArrival(ev.kind) || (ev.kind == SyncKind::MbarExpectTx && !withArrival)))
      continue;
    checked = true;
    // Node a is the event in the CTA of rank sigma (the per-rank graph;
    // -1 without). A local arrival counts on sigma's barrier, a remote
    // arrival on that of every rank it may reach: each is asked.
    int64_t sigma = rankOfNode(a);
    bool remote = ev.crossCta();
    if (remote && !perRank_) {
      // Not reached: run() builds no graph for cross-CTA events in loops
      // without the ranks. Should it ever be, the arrival is not decided.
      open = true;
      report_.notProved.push_back(
          {ev.loc, fmt::format("the order of {} on the barrier of another CTA is not modelled",
                               ev.what)});
      continue;
    }
    for (int64_t r = remote ? 0 : sigma; r < (remote ? graphRanks() : sigma + 1); ++r) {
      bool undecided = false;
      auto message = arrivalAhead(a, r, undecided);
      if (!message && !undecided)
        continue;
      if (graphComplete_ && !undecided) {
        any = true;
        finding(ProtocolViolationKind::OverArrival, ev.loc, *message);
        continue;
      }
      open = true;
      report_.notProved.push_back(
          {ev.loc, undecided
                       ? fmt::format("which CTA's barrier {} reaches is not encoded; its order "
                                     "after the phase before is not proved",
                                     ev.what)
                       : fmt::format("{} (not a finding: the ordering graph is not complete, {})",
                                     message->substr(message->find(": ") + 2), graphGap_)});
    }
  }
  if (checked)
    result("each round's arrivals after the phase before (ordered by a wait for it)", !any && !open,
           any    ? "violated"
           : open ? "not proved: see warnings"
                  : "proved for all sizes: every arrival of round n >= 1 follows a wait for phase "
                    "n - 1 of its barrier (or, on a barrier of plain arrivals, each arrival of "
                    "that phase)" +
                        clusterScopeText());
}

std::optional<std::string> BarrierProver::arrivalAhead(size_t a, int64_t r, bool &undecided) {
  size_t e = nodes_[a];
  const SyncEvent &ev = sk_.events[e];
  int64_t sigma = rankOfNode(a);
  const BarrierInfo &info = barriers_.at(ev.barrier.array);
  z3::expr i = enc_.fresh("i");
  auto [j, n] = roundOf(barrierPattern_[e], i);
  std::optional<z3::expr> arrives;
  {
    RankScope sender(*this, sigma);
    arrives = fires(ev, i);
    if (ev.crossCta()) {
      auto reached = reaches(ev, i, ctx_.int_val(r));
      if (!reached) {
        undecided = true;
        return std::nullopt;
      }
      arrives = *arrives && *reached;
    }
  }
  // The rest is about the barrier of the CTA of rank r: only its waits tell
  // anyone about its phases.
  RankScope owner(*this, r);
  // The waits that tell this arrival's threads that phase n - 1 of j is
  // complete: the iteration y at which a wait waits for that phase, which
  // the arrival follows (D_: the arrival at i runs after the wait at
  // every iteration <= i + D).
  z3::expr_vector covered(ctx_);
  for (size_t w : info.events) {
    const SyncEvent &wait = sk_.events[w];
    auto d = waitShift_.find(w);
    if (wait.kind != SyncKind::MbarWait || d == waitShift_.end())
      continue;
    const Pattern &pw = barrierPattern_[w];
    z3::expr y = iterOf(pw, j, n - 1 - ctx_.int_val(d->second));
    if (nodeOf_.count(w)) {
      int64_t path = D_[a][nodeAt(w, r)];
      if (path != kNoPath)
        covered.push_back(touches(pw, j) && fires(wait, y) && y <= i + ctx_.int_val(path));
    } else if (wait.loop < 0 && sigma == r && wait.role == ev.role && wait.order < ev.order &&
               ev.threads.subsetOf(coverOf(wait))) {
      // A wait before the loop, in the program order of the same threads.
      covered.push_back(touches(pw, j) && fires(wait, y));
    }
  }
  // A barrier of plain arrivals alone (no transaction bytes, no tcgen05
  // commit: nothing completes asynchronously) completes phase n - 1 with
  // its last arrival: following each of them, as every thread that runs
  // it, is as good as a wait. In a cluster, those are the arrivals of every
  // CTA that reach the barrier of rank r.
  bool plain = true;
  for (size_t c : info.events) {
    SyncKind k = sk_.events[c].kind;
    plain = plain && !isTx(k) && k != SyncKind::Tcgen05Commit &&
            (k != SyncKind::MbarArrive || nodeOf_.count(c));
  }
  z3::expr_vector all(ctx_);
  for (size_t c : info.events) {
    const SyncEvent &arrival = sk_.events[c];
    if (!plain || arrival.kind != SyncKind::MbarArrive)
      continue;
    const Pattern &pc = barrierPattern_[c];
    z3::expr y = iterOf(pc, j, n - 1);
    bool remote = arrival.crossCta();
    for (int64_t s = remote ? 0 : r; s < (remote ? graphRanks() : r + 1); ++s) {
      RankScope from(*this, s);
      std::optional<z3::expr> reached;
      if (remote && perRank_)
        reached = reaches(arrival, y, ctx_.int_val(r));
      if (remote && !reached) {
        plain = false; // the sender's target is not encoded: no such cover
        break;
      }
      int64_t path = everyPath(a, nodeAt(c, s));
      z3::expr runs =
          touches(pc, j) && fires(arrival, y) && reached.value_or(ctx_.bool_val(true));
      all.push_back(path == kNoPath ? !runs : !runs || y <= i + ctx_.int_val(path));
    }
  }
  if (plain)
    covered.push_back(z3::mk_and(all));
  Query s = solver();
  s.add(*arrives && n >= 1 && !z3::mk_or(covered));
  if (r >= 0)
    s.add(receiver() == ctx_.int_val(r));
  std::optional<z3::model> m;
  s.prefer(i);
  if (check(s, m, ev.loc, "arrival order") != z3::sat)
    return std::nullopt;
  std::string target = sigma == r ? "" : rankText(r);
  return fmt::format(
      "over-arrival: at {} this {} on {}[{}]{} by {} (round {}) may run before phase {} of "
      "{}[{}]{} completed: no wait for that phase orders it, so it can count in phase {}, "
      "which has all its arrivals already (for {})",
      iterationText(*m, ev, i), ev.what, ev.barrier.array, ProtoEncoder::text(*m, j), target,
      ev.threads.describe() + rankText(sigma), ProtoEncoder::text(*m, n),
      ProtoEncoder::text(*m, n - 1), ev.barrier.array, ProtoEncoder::text(*m, j), target,
      ProtoEncoder::text(*m, n - 1), sizes(*m));
}

void BarrierProver::checkLaggingWaiters() {
  auto outermost = [&](int loop) {
    while (loop >= 0 && sk_.loops[size_t(loop)].parent >= 0)
      loop = sk_.loops[size_t(loop)].parent;
    return loop;
  };
  std::map<std::pair<int, int>, std::vector<const SyncEvent *>> groups; // (loop, role)
  for (const SyncEvent &e : sk_.events)
    if (e.loop >= 0 && e.role >= 0)
      groups[{outermost(e.loop), e.role}].push_back(&e);
  bool any = false;
  for (const auto &[key, events] : groups) {
    std::set<int64_t> waiting, feeding;
    const SyncEvent *firstWait = nullptr;
    for (const SyncEvent *e : events)
      for (int64_t t = 0; t < sk_.threads; ++t) {
        if (!e->threads.contains(t))
          continue;
        if (e->kind == SyncKind::MbarWait) {
          waiting.insert(warpOf(t));
          firstWait = firstWait ? firstWait : e;
        }
        if (isArrival(e->kind) || isTx(e->kind))
          feeding.insert(warpOf(t));
      }
    if (feeding.empty())
      continue;
    std::set<int64_t> lagging;
    for (int64_t warp : waiting) {
      if (feeding.count(warp))
        continue;
      bool tied = false; // meets a feeding warp in a collective
      for (const SyncEvent *e : events) {
        bool collective = e->scope != ExecScope::Thread || e->kind == SyncKind::CtaSync ||
                          e->kind == SyncKind::NamedSync || e->kind == SyncKind::WgmmaFence ||
                          e->kind == SyncKind::WgmmaMma || e->kind == SyncKind::WgmmaCommit ||
                          e->kind == SyncKind::WgmmaWait;
        if (!collective)
          continue;
        ThreadSet cover = coverOf(*e);
        if (!cover.contains(warp * 32))
          continue;
        for (int64_t f : feeding)
          tied = tied || cover.contains(f * 32);
      }
      if (!tied)
        lagging.insert(warp);
    }
    if (lagging.empty())
      continue;
    any = true;
    ThreadSet laggingThreads(sk_.threads), feedingThreads(sk_.threads);
    for (int64_t w : lagging)
      for (int64_t t = w * 32; t < std::min(sk_.threads, w * 32 + 32); ++t)
        laggingThreads.add(t);
    for (int64_t w : feeding)
      for (int64_t t = w * 32; t < std::min(sk_.threads, w * 32 + 32); ++t)
        feedingThreads.add(t);
    const SkeletonLoop &loop = sk_.loops[size_t(key.first)];
    finding(ProtocolViolationKind::ParityAliasing, firstWait->loc,
            fmt::format("parity aliasing: {} wait on {} in every iteration of loop {} but "
                        "feed no barrier and meet no feeding warp there; {} can run two "
                        "phases ahead of them, so their parity waits can refer to a phase two "
                        "behind and their last waits may never complete",
                        laggingThreads.describe(), firstWait->barrier.array, loop.var,
                        feedingThreads.describe()),
            {}, /*symbolic=*/false);
  }
  result("waiting warps kept in step with the warps that feed the barriers", !any,
         any ? "violated"
             : "proved for all sizes (structurally): every waiting warp feeds a barrier or "
               "meets a feeding warp in each iteration");
}

} // namespace tilescope::detail
