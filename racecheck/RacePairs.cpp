// The static race check's pairs of accesses (RaceChecker.h): which pairs
// may race, and what orders them within one CTA.
#include "racecheck/RaceChecker.h"

#include "ir/Printer.h"
#include "proof/LeastWitness.h"
#include "proof/SolverBudget.h"
#include "verifier/StagePairs.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <functional>

namespace tilescope::detail {

void RaceChecker::checkPairs() {
  findLoopsRunningOnce();
  std::vector<std::pair<size_t, size_t>> accesses; // (event, access)
  for (size_t e = 0; e < sk_.events.size(); ++e)
    for (size_t a = 0; a < sk_.events[e].accesses.size(); ++a)
      if (sk_.events[e].accesses[a].scope != MemScope::Reg)
        accesses.push_back({e, a});
  for (size_t x = 0; x < accesses.size(); ++x)
    for (size_t y = x; y < accesses.size(); ++y) {
      const SyncEvent &ea = sk_.events[accesses[x].first], &eb = sk_.events[accesses[y].first];
      const MemoryAccess &a = ea.accesses[accesses[x].second], &b = eb.accesses[accesses[y].second];
      if (a.buffer != b.buffer || (!a.write && !b.write))
        continue;
      if (x == y && !a.write)
        continue;
      if (remote(a) || remote(b)) {
        // Distributed shared memory: the executors may sit in different
        // CTAs of the cluster; only cluster barriers order them.
        checkPair(ea, a, eb, b, Mode::InCluster);
        continue;
      }
      checkPair(ea, a, eb, b, Mode::SameCta);
      if (a.scope == MemScope::Global && b.scope == MemScope::Global)
        checkPair(ea, a, eb, b, Mode::AcrossCtas);
    }
  // Last, so that the queries above meet the shared solver as they did
  // without these (its search depends on the terms it holds).
  for (size_t x = 0; x < accesses.size(); ++x)
    for (size_t y = x; y < accesses.size(); ++y) {
      const SyncEvent &ea = sk_.events[accesses[x].first], &eb = sk_.events[accesses[y].first];
      const MemoryAccess &a = ea.accesses[accesses[x].second], &b = eb.accesses[accesses[y].second];
      if (a.buffer == b.buffer && (a.write || b.write) && !remote(a) && !remote(b) &&
          intersects(ea.threads, eb.threads))
        checkSameThread(ea, a, eb, b);
    }
}

void RaceChecker::checkSameThread(const SyncEvent &ea, const MemoryAccess &a, const SyncEvent &eb,
                                  const MemoryAccess &b) {
  // Two asynchronous accesses of one thread (two fills of a pipeline
  // stage, two MMAs on one accumulator, two stores to one tile) are not
  // compared: a ring's fills are ordered through the other role's release
  // (the barrier proofs' business), one thread's MMAs run in issue order.
  if (completesLater(ea, a) && completesLater(eb, b))
    return;
  for (bool issuerIsA : {true, false}) {
    if (!issuerIsA && &a == &b)
      break;
    const SyncEvent &issuer = issuerIsA ? ea : eb;
    if (!completesLater(issuer, issuerIsA ? a : b))
      continue;
    Ordering ord = orderingOf(ea, a, eb, b, false, false);
    ord.issuerIsA = issuerIsA;
    solvePair(ea, a, eb, b, ord, Mode::SameThread);
  }
}

void RaceChecker::checkPair(const SyncEvent &ea, const MemoryAccess &a, const SyncEvent &eb,
                            const MemoryAccess &b, Mode mode) {
  if (mode != Mode::SameCta) {
    // Only cluster barriers order CTAs; between clusters nothing does.
    bool clustered = clusterExtent().has_value();
    if (mode == Mode::InCluster && !clustered) {
      report_.notChecked.push_back(
          {ea.loc, fmt::format("DSMEM access to {}: the cluster is not one-dimensional with a "
                               "constant extent",
                               a.buffer)});
      return;
    }
    Ordering ord = orderingOf(ea, a, eb, b, clustered, true);
    bool fully = ord.fully;
    if (mode == Mode::AcrossCtas && !(clustered && fully))
      ord = orderingOf(ea, a, eb, b, false, true); // no barrier orders them
    if (mode == Mode::InCluster && fully) {
      ++report_.pairsProved;
      return;
    }
    // Across the grid, a cluster-ordered pair races only between clusters.
    ord.differentClusters = mode == Mode::AcrossCtas && clustered && fully;
    if (solvePair(ea, a, eb, b, ord, mode) == z3::unsat && mode == Mode::InCluster)
      ++report_.pairsProved;
    return;
  }
  // Pipeline stages' fills and reads: the barrier proofs' business.
  if (isStagePair(sk_, ea, a, eb, b)) {
    ++report_.pairsOrderedByMbarrier;
    return;
  }
  // A fill and a read of two roles in loops that are not the same: the
  // orderings below do not follow a ring across its rounds, so a race found
  // here is not confirmed (solvePair).
  bool ringRounds = ea.role != eb.role && a.write != b.write && ea.loop >= 0 && eb.loop >= 0 &&
                    a.scope != MemScope::Global;
  bool sameEvent = &ea == &eb;
  // In program order within one iteration: `lo` first, `hi` second.
  const SyncEvent &lo = ea.order <= eb.order ? ea : eb, &hi = ea.order <= eb.order ? eb : ea;
  Ordering ord = orderingOf(ea, a, eb, b, true, false);
  if (!ord.sameIteration && !sameEvent && handshake(lo, &lo == &ea ? a : b, hi)) {
    ++report_.pairsProved;
    return;
  }
  if (ord.fully) {
    ++report_.pairsProved;
    return;
  }
  ord.warpOrdered = orderingOf(ea, a, eb, b, true, false, true).fully;
  ringRoundsUnmodelled_ = ringRounds;
  if (solvePair(ea, a, eb, b, ord, Mode::SameCta) == z3::unsat)
    ++report_.pairsProved;
  ringRoundsUnmodelled_ = false;
}

RaceChecker::Ordering RaceChecker::orderingOf(const SyncEvent &ea, const MemoryAccess &a,
                                              const SyncEvent &eb, const MemoryAccess &b,
                                              bool useBarriers, bool cluster, bool warpLevel) {
  const SyncEvent &lo = ea.order <= eb.order ? ea : eb, &hi = ea.order <= eb.order ? eb : ea;
  Ordering o;
  o.lo = &lo;
  o.loLate = completesLater(lo, &lo == &ea ? a : b);
  o.hiLate = completesLater(hi, &lo == &ea ? b : a);
  if (!useBarriers)
    return o;
  // The loops both sit in: accesses in different inner loops of one outer
  // loop meet again at its next iteration.
  std::vector<int> common = chainOf(ea), cb = chainOf(eb);
  size_t depth = 0;
  while (depth < common.size() && depth < cb.size() && common[depth] == cb[depth])
    ++depth;
  common.resize(depth);
  o.sameLoop = !common.empty();
  o.sameIteration =
      !o.loLate && &ea != &eb &&
      (ctaSyncBetween(ea.threads, eb.threads, lo.order, hi.order, -2, cluster, warpLevel,
                      {&ea, &eb}) ||
       (!cluster && (generationBetween(lo, hi, common) || generationBetween(hi, lo, common))));
  if (!o.sameIteration && !cluster && !o.loLate && &ea != &eb && common.empty())
    o.pairOrdered = generationPairs(lo, hi);
  // A barrier after hi in its iteration runs when hi does; one before lo in
  // the next iteration, when lo does.
  auto inBody = [&](int loop, int from, int to, std::initializer_list<const SyncEvent *> with) {
    return ctaSyncBetween(ea.threads, eb.threads, from, to, loop, cluster, warpLevel, with);
  };
  o.anyFrom.assign(depth, false);
  o.wrapFrom.assign(depth, false);
  o.direct.assign(depth, false);
  for (size_t m = depth; m-- > 0;) {
    bool any = inBody(common[m], -1, INT_MAX, {&ea, &eb});
    bool wrap = inBody(common[m], hi.order, INT_MAX, {&hi}) ||
                inBody(common[m], -1, lo.order, {&lo}) ||
                (!cluster && generationWraps(lo, hi, common[m]));
    o.direct[m] = any;
    o.anyFrom[m] = any || (m + 1 < depth && o.anyFrom[m + 1]);
    o.wrapFrom[m] = wrap || (m + 1 < depth && o.wrapFrom[m + 1]);
  }
  o.anyInBody = o.sameLoop && o.anyFrom.back();
  o.wrapsAround = !o.hiLate && o.sameLoop && o.wrapFrom.back();
  // As checkPair reads it within a CTA: a barrier between accesses outside
  // common loops orders them; in loops it also needs the back edges (the
  // deepest common loop's barriers serve every level above it).
  o.fully =
      o.sameIteration && (!o.sameLoop || (o.anyInBody && o.wrapsAround && !o.loLate && !o.hiLate));
  return o;
}

} // namespace tilescope::detail
