// The static race check's pair query (RaceChecker.h): two executors of a
// pair of accesses encoded for Z3 with their orderings, and the
// async-proxy fence rule.
#include "racecheck/RaceChecker.h"

#include "ir/ConcreteEval.h"

#include "ir/Printer.h"
#include "proof/LeastWitness.h"
#include "proof/QueryDeadline.h"
#include "proof/SolverBudget.h"
#include "verifier/NamedOrdering.h"
#include "ir/ThreadIndex.h"

#include <fmt/format.h>

#include <array>

#include <algorithm>
#include <climits>
#include <functional>

namespace tilescope::detail {

bool RaceChecker::ctaIndices(const std::string &tag, std::vector<z3::expr> &cta,
                             z3::expr_vector &cons) {
  for (size_t d = 0; d < sk_.grid.size() && d < 3; ++d) {
    auto extent = enc_.encode(sk_.grid[d], {});
    if (!extent)
      return false;
    z3::expr v = enc_.fresh(fmt::format("{}blockIdx{}", tag, d));
    cons.push_back(v >= 0 && v < *extent);
    cta.push_back(v);
  }
  return !cta.empty();
}

std::optional<std::vector<std::pair<int64_t, int64_t>>>
RaceChecker::collisionsPerThread(const SyncEvent &ea, const MemoryAccess &a, const SyncEvent &eb,
                                 const MemoryAccess &b, size_t cap) const {
  if (a.region.size() != 1 || b.region.size() != 1 || !a.perThread || !b.perThread)
    return std::nullopt;
  auto intervals =
      [&](const SyncEvent &e,
          const MemoryAccess &m) -> std::optional<std::vector<std::array<int64_t, 3>>> {
    std::vector<std::array<int64_t, 3>> out; // begin, end, thread
    for (int64_t t = 0; t < e.threads.launchThreads(); ++t) {
      if (!e.threads.contains(t))
        continue;
      auto leaf = [&](const Expr &x) -> std::optional<int64_t> {
        if (x->kind != ExprKind::Builtin || !isThreadBuiltin(as<Builtin>(x).which))
          return std::nullopt;
        return threadBuiltinValue(as<Builtin>(x).which, t);
      };
      auto begin = evalConcrete(m.region[0].begin, leaf);
      auto extent = evalConcrete(m.region[0].extent, leaf);
      if (!begin || !extent)
        return std::nullopt;
      out.push_back({*begin, *begin + *extent, t});
    }
    return out;
  };
  auto ia = intervals(ea, a), ib = intervals(eb, b);
  if (!ia || !ib)
    return std::nullopt;
  std::sort(ib->begin(), ib->end());
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto &x : *ia) {
    // Intervals of b starting before x ends; one of another thread that
    // ends after x begins overlaps.
    auto end = std::lower_bound(ib->begin(), ib->end(), std::array<int64_t, 3>{x[1], INT64_MIN, 0});
    for (auto y = ib->begin(); y != end; ++y)
      if ((*y)[1] > x[0] && (*y)[2] != x[2]) {
        if (out.size() >= cap)
          return std::nullopt;
        out.push_back({x[2], (*y)[2]});
      }
  }
  return out;
}

z3::check_result RaceChecker::solvePair(const SyncEvent &ea, const MemoryAccess &a,
                                        const SyncEvent &eb, const MemoryAccess &b,
                                        const Ordering &ord, Mode mode) {
  const SyncEvent &lo = *ord.lo;
  bool acrossCtas = mode == Mode::AcrossCtas, inCluster = mode == Mode::InCluster;
  bool sameLoop = ord.sameLoop && !acrossCtas;
  bool orderedSameIteration = ord.sameIteration;
  // Collective calls of the same group are ordered by their dispatch.
  ExecScope scopeA = issueScope(ea), scopeB = issueScope(eb);
  bool groupScoped = scopeA != ExecScope::Thread && scopeB != ExecScope::Thread;
  std::optional<std::vector<std::pair<int64_t, int64_t>>> collisions;
  if (mode == Mode::SameCta && !groupScoped) {
    collisions = collisionsPerThread(ea, a, eb, b, opt_.threadPairsListed);
    if (collisions && collisions->empty())
      return z3::unsat;
  }
  z3::expr t1 = enc_.fresh("t1"), t2 = enc_.fresh("t2");
  std::optional<z3::expr> rankA, rankB;
  z3::expr_vector cons(ctx_);
  if (!threadMember(ea.threads, t1, cons) || !threadMember(eb.threads, t2, cons))
    return z3::unsat;
  std::vector<z3::expr> ctaA, ctaB;
  if (acrossCtas) {
    if (!ctaIndices("a_", ctaA, cons) || !ctaIndices("b_", ctaB, cons)) {
      report_.notChecked.push_back(
          {ea.loc, fmt::format("{} between CTAs: a grid extent Z3 cannot read", a.buffer)});
      return z3::unknown;
    }
    // Terms are built only when used: Z3's search depends on the terms a
    // context holds, and stray ones slowed the persistent GEMM's queries 3x.
    z3::expr_vector differ(ctx_);
    for (size_t d = 0; d < ctaA.size(); ++d) {
      if (!ord.differentClusters) {
        differ.push_back(ctaA[d] != ctaB[d]);
        continue;
      }
      z3::expr extent = ctx_.int_val(int(d) == clusterAxis() ? clusterExtent().value_or(1) : 1);
      differ.push_back(ctaA[d] / extent != ctaB[d] / extent);
    }
    cons.push_back(z3::mk_or(differ));
  } else if (inCluster) {
    // Ranks in the cluster; the same rank is the same CTA.
    rankA.emplace(enc_.fresh("rankA"));
    rankB.emplace(enc_.fresh("rankB"));
    z3::expr n = ctx_.int_val(*clusterExtent());
    cons.push_back(*rankA >= 0 && *rankA < n && *rankB >= 0 && *rankB < n);
    cons.push_back(*rankA != *rankB || t1 != t2);
  } else if (mode == Mode::SameThread) {
    cons.push_back(t1 == t2);
  } else if (groupScoped && scopeA == scopeB) {
    int64_t g = groupSize(scopeA, sk_.threads);
    cons.push_back(t1 / ctx_.int_val(g) != t2 / ctx_.int_val(g));
  } else {
    cons.push_back(t1 != t2);
    // A thread inside a group that runs the other call collectively is
    // still a different executor from the group's other threads.
  }
  std::map<std::string, z3::expr> boundA, boundB;
  std::vector<z3::expr> itersA, itersB;
  if (!bindLoops(ea, "a_", boundA, cons, itersA, builtinsOf(t1, ctaA)) ||
      !bindLoops(eb, "b_", boundB, cons, itersB, builtinsOf(t2, ctaB))) {
    report_.notChecked.push_back(
        {ea.loc, fmt::format("accesses to {} here and at another site: loop bounds Z3 cannot read",
                             a.buffer)});
    return z3::unknown;
  }
  if (sameLoop) {
    // Level by level over the common loops (outermost first): where the
    // iterations first differ at level m, a barrier of that loop or a
    // deeper common one orders lo before hi at a later iteration, one
    // after hi or before lo orders hi before lo at a later iteration, and
    // one in that loop's own body orders them two or more iterations
    // apart; the earlier access must not complete later. Equal
    // iterations throughout: a barrier between them.
    const std::vector<z3::expr> &itLo = &lo == &ea ? itersA : itersB;
    const std::vector<z3::expr> &itHi = &lo == &ea ? itersB : itersA;
    z3::expr_vector ordered(ctx_), equal(ctx_);
    for (size_t m = 0; m < ord.anyFrom.size(); ++m) {
      const z3::expr &iLo = itLo[m], &iHi = itHi[m];
      z3::expr before = z3::mk_and(equal);
      if (ord.anyFrom[m] && !ord.loLate)
        ordered.push_back(before && iLo < iHi);
      if (!ord.hiLate && ord.wrapFrom[m])
        ordered.push_back(before && iHi < iLo);
      if (!ord.hiLate && ord.direct[m])
        ordered.push_back(before && iHi + 1 < iLo);
      equal.push_back(iLo == iHi);
    }
    if (orderedSameIteration)
      ordered.push_back(z3::mk_and(equal));
    if (!ordered.empty())
      cons.push_back(!z3::mk_or(ordered));
  }
  if (mode == Mode::SameThread) {
    // The asynchronous access is issued first: at an earlier iteration of
    // the first common loop where they differ, or at the same iterations
    // and earlier in the body. Executions the other way round are
    // ordered by program order.
    const SyncEvent &x = ord.issuerIsA ? ea : eb, &y = ord.issuerIsA ? eb : ea;
    const std::vector<z3::expr> &itX = ord.issuerIsA ? itersA : itersB;
    const std::vector<z3::expr> &itY = ord.issuerIsA ? itersB : itersA;
    std::vector<int> cx = chainOf(x), cy = chainOf(y);
    z3::expr_vector first(ctx_), equal(ctx_);
    for (size_t k = 0; k < cx.size() && k < cy.size() && cx[k] == cy[k]; ++k) {
      first.push_back(z3::mk_and(equal) && itX[k] < itY[k]);
      equal.push_back(itX[k] == itY[k]);
    }
    if (x.order < y.order)
      first.push_back(z3::mk_and(equal));
    if (first.empty())
      return z3::unsat;
    cons.push_back(z3::mk_or(first));
  }
  // Built at each use, in the order Z3 has always seen them (see above).
  // Two executors in one CTA of a cluster share its rank (an unknown in
  // the cluster), so indices that read clusterCtaIdx.x encode.
  std::optional<z3::expr> sharedRank;
  if (!acrossCtas && !inCluster && clusterExtent()) {
    sharedRank.emplace(enc_.fresh("rank"));
    cons.push_back(*sharedRank >= 0 && *sharedRank < ctx_.int_val(*clusterExtent()));
  }
  auto rankOf = [&](const std::optional<z3::expr> &own) {
    return own ? &*own : sharedRank ? &*sharedRank : nullptr;
  };
  auto builtinsA = [&] { return builtinsOf(t1, ctaA, rankOf(rankA)); };
  auto builtinsB = [&] { return builtinsOf(t2, ctaB, rankOf(rankB)); };
  for (const Expr &g : ea.allGuards())
    if (auto e = enc_.encode(g, boundA, builtinsA()); e && e->is_bool())
      cons.push_back(*e);
  for (const Expr &g : eb.allGuards())
    if (auto e = enc_.encode(g, boundB, builtinsB()); e && e->is_bool())
      cons.push_back(*e);
  if (inCluster) {
    // Both touch the shared memory of one CTA: its own, or the remote one.
    auto target = [&](const MemoryAccess &x, const z3::expr &rank, auto &bound,
                      auto builtins) -> std::optional<z3::expr> {
      return remote(x) ? enc_.encode(x.remoteCta, bound, builtins()) : std::optional(rank);
    };
    auto ta = target(a, *rankA, boundA, builtinsA), tb = target(b, *rankB, boundB, builtinsB);
    if (!ta || !tb || !ta->is_int() || !tb->is_int()) {
      report_.notChecked.push_back(
          {ea.loc, fmt::format("DSMEM access to {}: a CTA rank Z3 cannot read", a.buffer)});
      return z3::unknown;
    }
    cons.push_back(*ta == *tb);
  }
  if (a.region.size() != b.region.size())
    return z3::unsat;
  std::vector<z3::expr> element;
  if (collisions && opt_.threadPairsListed > 0) {
    // The thread pairs that meet, listed (RaceOptions::threadPairsListed).
    z3::expr_vector meet(ctx_);
    for (const auto &[x, y] : *collisions)
      meet.push_back(t1 == ctx_.int_val(x) && t2 == ctx_.int_val(y));
    cons.push_back(z3::mk_or(meet));
  }
  for (size_t d = 0; d < a.region.size() && !(collisions && opt_.threadPairsListed > 0); ++d) {
    auto ba = enc_.encode(a.region[d].begin, boundA, builtinsA());
    auto xa = enc_.encode(a.region[d].extent, boundA, builtinsA());
    auto bb = enc_.encode(b.region[d].begin, boundB, builtinsB());
    auto xb = enc_.encode(b.region[d].extent, boundB, builtinsB());
    if (!ba || !xa || !bb || !xb) {
      report_.notChecked.push_back(
          {ea.loc,
           fmt::format("access to {}: an index Z3 cannot read (data-dependent?)", a.buffer)});
      return z3::unknown;
    }
    z3::expr x = enc_.fresh("x");
    element.push_back(x);
    cons.push_back(x >= *ba && x < *ba + *xa && x >= *bb && x < *bb + *xb);
  }
  // One solver for all pairs: each pair's constraints hang off a fresh
  // literal and are checked under it.
  queueAssumptions();
  z3::expr pair = ctx_.bool_const(fmt::format("pair!{}", pairs_++).c_str());
  for (unsigned k = 0; k < cons.size(); ++k)
    pending_.push_back(z3::implies(pair, cons[int(k)]));
  // An over-approximation first, linear up to congruence: its unsat
  // decides most pairs in a few milliseconds (LinearPrecheck.h). A first
  // look on a small budget; where it runs out, the whole budget is asked
  // once the first cheap exact question has not decided the pair (below),
  // and before any pair is left undecided.
  if (detail::congruencePrecheckUnsat(enc_.assumptions(), cons, kFirstQueryBudgetMs))
    return z3::unsat;
  z3::check_result firstLook = linear_.check(enc_.assumptions(), cons, kLinearFirstLookMs);
  if (firstLook == z3::unsat)
    return z3::unsat;
  // Whether the pair is proved by the over-approximation on the whole
  // budget: asked once, where it is left undecided otherwise.
  std::optional<bool> linearWhole; // asked at most once
  auto linearOnWholeBudget = [&] {
    if (!linearWhole)
      linearWhole = firstLook == z3::unknown && linear_.unsat(enc_.assumptions(), cons);
    return *linearWhole;
  };
  // Once Z3 has given up on kGiveUpsPerBuffer pairs of a buffer, the race
  // verdict is unknown and the buffer's other pairs would mostly give up
  // too, each after the whole query budget (Triton's cp.async matmul: 20
  // such pairs, minutes on a loaded machine). They are reported as not
  // checked instead; a pair the linear precheck decides is still decided.
  if (gaveUpOn_[a.buffer] >= kGiveUpsPerBuffer) {
    if (linearOnWholeBudget())
      return z3::unsat;
    report_.notChecked.push_back(
        {ea.loc, fmt::format("race on {}: not checked: Z3 gave up on {} pairs of {} before",
                             a.buffer, kGiveUpsPerBuffer, a.buffer)});
    return z3::unknown;
  }
  z3::expr_vector under(ctx_);
  under.push_back(pair);
  // Orderings that hold for some executor pairs only (warp.sync within a
  // warp, mbarrier handshakes of matching rounds, wgmma groups retired by
  // the warpgroup).
  auto builtinsAtA = [&](const z3::expr &t) { return builtinsOf(t, ctaA, rankOf(rankA)); };
  auto builtinsAtB = [&](const z3::expr &t) { return builtinsOf(t, ctaB, rankOf(rankB)); };
  Side sideA{ea, a, t1, itersA, boundA, builtinsA, rankOf(rankA), builtinsAtA};
  Side sideB{eb, b, t2, itersB, boundB, builtinsB, rankOf(rankB), builtinsAtB};
  handshakeUnmodelled_ = false;
  std::vector<z3::expr> escapes = orderingEscapes(sideA, sideB, ord, mode);
  // The full query (with the orderings) in a one-shot solver on the first
  // question's budget: where the linear over-approximation cannot decide a
  // pair, it is an ordering that does, and this proves it in a few
  // milliseconds (the persistent GEMM's two such pairs: 2-4 ms, where the
  // first question below spent 6-17 ms to answer sat or give up). Only its
  // unsat is used; anything else goes on as before, so the shared solver's
  // history stays as it was.
  auto onceUnsat = [&](unsigned budgetMs) {
    z3::solver once = oneShotSolver(ctx_, budgetMs);
    once.add(enc_.assumptions());
    once.add(cons);
    for (const z3::expr &e : escapes)
      once.add(!e);
    return checkWithinBudget(once) == z3::unsat;
  };
  if (!escapes.empty() && onceUnsat(kFirstQueryBudgetMs))
    return z3::unsat;
  // Without the orderings, on a small budget: when it is hard it is left
  // undecided and the full query below decides. Its sat answers can be a
  // search through non-linear sizes (a persistent tile loop whose step is
  // not the grid: 27 s at grid(7) on the persistent GEMM, where the full
  // query is unsat in 5 ms).
  z3::solver &s = pairSolver();
  z3::check_result r = checkFirst(s, under);
  if (r == z3::unsat)
    return r;
  auto gaveUp = [&] {
    if (linearOnWholeBudget())
      return z3::unsat;
    ++gaveUpOn_[a.buffer];
    report_.notChecked.push_back(
        {ea.loc, fmt::format("race on {}: Z3 gave up ({})", a.buffer, reasonUnknown(s))});
    return z3::unknown;
  };
  // The first question was hard: the over-approximation on its whole budget
  // before the exact queries' larger ones (the block-scaled GEMM's looped
  // C-tile stores, bench/fp8bs/st5-loop.tile with a weakened wait: 1.5 s of
  // CPU for the whole check with the over-approximation first, 9.7 s with it
  // after the exact queries, whose larger budgets ran out first).
  if (r == z3::unknown && linearOnWholeBudget())
    return z3::unsat;
  if (r == z3::unknown) {
    // The first question was hard. The full one, with the orderings, in a
    // one-shot solver on a larger budget (they often make it easy: 5 ms for
    // the grid(7) GEMM's pair); then the first question on the full budget,
    // as before.
    if (onceUnsat(detail::kPrecheckBudgetMs))
      return z3::unsat;
    r = checkWithin(s, under, opt_.timeoutMs);
    if (r == z3::unsat)
      return r;
    if (r == z3::unknown)
      return gaveUp();
  }
  if (!escapes.empty()) {
    for (const z3::expr &e : escapes)
      s.add(z3::implies(pair, !e));
    r = checkWithin(s, under, opt_.timeoutMs);
    if (r == z3::unknown)
      return gaveUp();
    if (r == z3::unsat)
      return r;
  }
  // The least witness: threads, CTAs, iterations, element, then the
  // symbols. Its sizes are the first rung of a ladder of small admitted
  // sizes at which the race occurs (witnessSizes), where every division by
  // a size is one by a constant; off the ladder, the sizes are lowered last,
  // symbolically, in the shared solver.
  std::vector<z3::expr> witness{t1, t2};
  for (const auto *cta : {&ctaA, &ctaB})
    witness.insert(witness.end(), cta->begin(), cta->end());
  for (const std::optional<z3::expr> *rank : {&rankA, &rankB})
    if (*rank)
      witness.push_back(**rank);
  witness.insert(witness.end(), itersA.begin(), itersA.end());
  witness.insert(witness.end(), itersB.begin(), itersB.end());
  witness.insert(witness.end(), element.begin(), element.end());
  z3::expr_vector all = copyOf(cons);
  for (const z3::expr &e : escapes)
    all.push_back(!e);
  std::vector<z3::expr> atSizes = witness;
  std::set<std::string> sizes;
  for (const auto &[name, v] : sizeSymbols())
    sizes.insert(name);
  for (const auto &[name, v] : enc_.symbols()) {
    witness.push_back(v);
    if (!sizes.count(name))
      atSizes.push_back(v);
  }
  std::optional<z3::model> least = leastAtSizes(all, atSizes, pair.to_string());
  if (!least) {
    z3::params full(ctx_);
    setSolverBudget(full, opt_.timeoutMs);
    s.set(full);
    least = detail::minimizeWitness(s, under, witness, pair.to_string());
  }
  z3::model m = *least;
  // A witness Z3 gave under a resource limit that does not satisfy the
  // query is no witness.
  if (!m.eval(z3::mk_and(all), true).is_true()) {
    if (linearOnWholeBudget())
      return z3::unsat;
    report_.notChecked.push_back(
        {ea.loc, fmt::format("race on {}: Z3's model does not satisfy the query", a.buffer)});
    return z3::unknown;
  }
  auto threadText = [&](const z3::expr &t) {
    int64_t v = ProtoEncoder::value(m, t);
    std::string cta;
    for (const z3::expr &c : &t == &t1 ? ctaA : ctaB)
      cta += fmt::format("{}{}", cta.empty() ? "" : ", ", ProtoEncoder::text(m, c));
    const std::optional<z3::expr> &rank = &t == &t1 ? rankA : rankB;
    if (rank)
      cta = fmt::format("rank {} of the cluster", ProtoEncoder::text(m, *rank));
    return threadName(v, cta.empty() ? ""
                         : rank      ? ", CTA " + cta
                                     : ", CTA (" + cta + ")");
  };
  auto iterText = [&](const SyncEvent &e, const std::vector<z3::expr> &iters,
                      std::map<std::string, z3::expr> &bound) {
    std::string out;
    int l = e.loop;
    for (size_t k = iters.size(); k-- > 0 && l >= 0; l = sk_.loops[size_t(l)].parent) {
      const std::string &var = sk_.loops[size_t(l)].var;
      out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", var,
                         ProtoEncoder::text(m, bound.at(var)));
    }
    return out.empty() ? std::string("outside loops") : out;
  };
  std::string coords;
  for (const z3::expr &x : element)
    coords += fmt::format("{}{}", coords.empty() ? "" : ", ", ProtoEncoder::text(m, x));
  if (element.empty()) { // listed thread pairs: the first element both touch
    auto at = [&](const MemoryAccess &acc, const z3::expr &t) {
      return evalConcrete(acc.region[0].begin, [&](const Expr &x) -> std::optional<int64_t> {
        if (x->kind == ExprKind::Builtin && as<Builtin>(x).which == BuiltinKind::threadIdx_x)
          return ProtoEncoder::value(m, t);
        if (x->kind == ExprKind::Builtin && as<Builtin>(x).which == BuiltinKind::laneid)
          return laneOf(ProtoEncoder::value(m, t));
        return std::nullopt;
      });
    };
    auto x = at(a, t1), y = at(b, t2);
    if (x && y)
      coords = std::to_string(std::max(*x, *y));
  }
  const SyncEvent &w = a.write ? ea : eb;
  const SyncEvent &o = a.write ? eb : ea;
  bool firstIsA = a.write;
  RaceFinding f;
  f.kind = RaceKind::DataRace;
  f.first = w.loc;
  f.second = o.loc;
  f.message = fmt::format(
      "data race on {} {}[{}]: written by {} in {} ({}) and {} by {} in {} ({}) {} ({})",
      memScopeName(a.scope), a.buffer, coords, threadText(firstIsA ? t1 : t2), w.what,
      firstIsA ? iterText(ea, itersA, boundA) : iterText(eb, itersB, boundB),
      (firstIsA ? b.write : a.write) ? "written" : "read", threadText(firstIsA ? t2 : t1), o.what,
      firstIsA ? iterText(eb, itersB, boundB) : iterText(ea, itersA, boundA),
      acrossCtas  ? (ord.differentClusters ? "in CTAs of different clusters, which no barrier "
                                             "orders"
                                           : "in different CTAs, which no barrier orders")
      : inCluster ? "with no cluster barrier between them"
      : mode == Mode::SameThread
          ? "with no wait by the issuing thread for the asynchronous access's completion "
            "between them"
      : ord.loLate || ord.hiLate ? "with no barrier after a wait for the asynchronous access's "
                                   "completion between them"
                                 : "with no barrier between them",
      enc_.describeSymbols(m));
  for (const RaceFinding &g : report_.findings)
    if (g.first == f.first && g.second == f.second)
      return r;
  // A race derived after a question about the orderings was left
  // undecided (its orderings may be missing), or between a ring's fill and
  // read whose rounds are not modelled, is not confirmed: not checked,
  // never a finding.
  if (undecided_ || ringRoundsUnmodelled_ || handshakeUnmodelled_) {
    report_.notChecked.push_back(
        {ea.loc, fmt::format("{} [not confirmed: {}]", f.message,
                             undecided_ ? "a question about the orderings was left undecided"
                             : ringRoundsUnmodelled_
                                 ? "a fill and a read of two roles in loops that run "
                                   "differently; the race check does not follow the "
                                   "ring's rounds"
                                 : "a wait on the barrier that signals the access's completion "
                                   "has an index, parity or round the race check cannot "
                                   "encode, so it may order them")});
    return z3::unknown;
  }
  // Two lanes of one warp storing to the same bytes in one instruction of the
  // same iteration (RaceOptions::sameWarpStoresUndecided): not confirmed.
  if (opt_.sameWarpStoresUndecided && &ea == &eb && &a == &b && a.write && !acrossCtas &&
      !inCluster && mode != Mode::SameThread) {
    int64_t x = ProtoEncoder::value(m, t1), y = ProtoEncoder::value(m, t2);
    bool sameIteration = itersA.size() == itersB.size();
    for (size_t k = 0; sameIteration && k < itersA.size(); ++k)
      sameIteration = ProtoEncoder::value(m, itersA[k]) == ProtoEncoder::value(m, itersB[k]);
    if (warpOf(x) == warpOf(y) && sameIteration) {
      report_.notChecked.push_back(
          {ea.loc, fmt::format("{} [not confirmed: lanes {} and {} of warp {} store to the same "
                               "bytes in one instruction; one of their values lands, and whether "
                               "the values are equal is not derived]",
                               f.message, laneOf(x), laneOf(y), warpOf(x))});
      return z3::unknown;
    }
  }
  // Two threads of one CTA that both use a named barrier whose generations
  // are not modelled (NamedBarriers.h): it may order them; not confirmed.
  if (!acrossCtas && !inCluster && mode != Mode::SameThread) {
    ThreadSet one(sk_.threads), other(sk_.threads);
    int64_t x = ProtoEncoder::value(m, t1), y = ProtoEncoder::value(m, t2);
    if (x >= 0 && x < sk_.threads && y >= 0 && y < sk_.threads) {
      one.add(x);
      other.add(y);
    }
    if (const SyncEvent *by = unmodelledNamedOrdering(sk_, named_, one, other)) {
      report_.notChecked.push_back(
          {ea.loc, fmt::format("{} [not confirmed: both threads use named barrier {} ({}), whose "
                               "generations are not modelled, so it may order them]",
                               f.message, by->namedId, by->what)});
      return z3::unknown;
    }
  }
  report_.findings.push_back(std::move(f));
  return r;
}

void RaceChecker::queueAssumptions() {
  for (; assumed_ < enc_.assumptions().size(); ++assumed_)
    pending_.push_back(enc_.assumptions()[int(assumed_)]);
}

z3::solver &RaceChecker::pairSolver() {
  if (!solver_)
    solver_.emplace(incrementalSolver(ctx_));
  for (unsigned k = 0; k < pending_.size(); ++k)
    solver_->add(pending_[int(k)]);
  pending_ = z3::expr_vector(ctx_);
  return *solver_;
}

z3::check_result RaceChecker::checkWithin(z3::solver &s, const z3::expr_vector &assumptions,
                                          unsigned budgetMs) {
  z3::params p(ctx_);
  setSolverBudget(p, budgetMs);
  s.set(p);
  return checkWithinBudget(s, assumptions);
}

z3::check_result RaceChecker::checkFirst(z3::solver &s, const z3::expr_vector &assumptions) {
  z3::params p(ctx_);
  setSolverBudget(p, kFirstQueryBudgetMs);
  s.set(p);
  return checkWithinBudget(s, assumptions);
}

namespace {

// Events after which a thread may have observed another thread's earlier
// writes (the acquiring side of an ordering).
bool acquires(SyncKind k) {
  return k == SyncKind::CtaSync || k == SyncKind::NamedSync || k == SyncKind::MbarWait ||
         k == SyncKind::WarpSync || k == SyncKind::ClusterWait;
}

} // namespace

void RaceChecker::checkProxyFences() {
  // A generic-proxy write waiting for its fence. Shared memory: the writing
  // threads' fence.proxy.async. Global memory: fence.proxy.async(space =
  // "global") by the writing threads after the write, or by the threads
  // that issue the async-proxy read after they may have observed the write
  // (after an acquiring event that follows the write) and before the read.
  struct Pending {
    const SyncEvent *write;
    std::string buffer;
    bool global = false;
    bool observed = false;                // an acquiring event followed the write
    std::vector<const SyncEvent *> after; // global fences after that event
    // Shared: the writing threads passed a barrier or wait after the write,
    // and then fenced (`lateFence`, by `fencedBy`): the fence orders the
    // write before the async reads of the thread that wrote it, but before
    // another thread's only once an acquiring event follows the fence.
    bool writerSynced = false, lateFence = false;
    ThreadSet fencedBy;
  };
  std::vector<Pending> pending;
  auto report = [&](const SyncEvent &e, const Pending &p, const char *space, const char *fence) {
    RaceFinding f;
    f.kind = RaceKind::MissingProxyFence;
    f.first = e.loc;
    f.second = p.write->loc;
    f.message = fmt::format("missing fence.proxy.async: {} by {} reads {} {} through "
                            "the async proxy, but {} by {} "
                            "wrote it through the generic proxy with no "
                            "{}",
                            e.what, e.threads.describe(), space, p.buffer, p.write->what,
                            p.write->threads.describe(), fence);
    for (const RaceFinding &g : report_.findings)
      if (g.first == f.first && g.second == f.second)
        return;
    report_.findings.push_back(std::move(f));
  };
  for (int pass = 0; pass < 2; ++pass)
    for (const SyncEvent &e : sk_.events) {
      if (pass == 1 && e.loop < 0)
        continue; // the second pass covers loop back edges
      if (e.kind == SyncKind::FenceProxyAsync) {
        ThreadSet cover = coverOf(e);
        // Any proxy fence clears shared writes (a fence without a space is
        // the shared one); only a global one clears global writes. A shared
        // write's fence placed after the barrier that publishes the write
        // (the writers synced in between) clears it for the fencing threads
        // only, until another acquiring event follows.
        // A fence counts for a write only where it runs whenever the write
        // does (runsWith: no condition over sizes or loop variables the write
        // does not have, no loop of its own that may run no iteration): a
        // fence under `if t % 2 == 0` leaves the odd tiles' writes unfenced.
        for (Pending &p : pending)
          if (!p.global && p.writerSynced && p.write->threads.subsetOf(cover) &&
              runsWith(e, *p.write)) {
            p.lateFence = true;
            p.fencedBy = cover;
          }
        pending.erase(std::remove_if(pending.begin(), pending.end(),
                                     [&](const Pending &p) {
                                       if (!runsWith(e, *p.write))
                                         return false;
                                       if (!p.global)
                                         return !p.writerSynced && p.write->threads.subsetOf(cover);
                                       return e.globalProxy && p.write->threads.subsetOf(cover);
                                     }),
                      pending.end());
        if (e.globalProxy)
          for (Pending &p : pending)
            if (p.global && p.observed)
              p.after.push_back(&e);
        continue;
      }
      if (acquires(e.kind)) {
        pending.erase(std::remove_if(pending.begin(), pending.end(),
                                     [&](const Pending &p) {
                                       return p.lateFence && intersects(e.threads, p.fencedBy);
                                     }),
                      pending.end());
        for (Pending &p : pending) {
          p.observed = true;
          p.writerSynced |= intersects(e.threads, p.write->threads);
        }
      }
      for (const MemoryAccess &a : e.accesses) {
        bool global = a.scope == MemScope::Global;
        if (a.scope != MemScope::Shared && !global)
          continue;
        if (a.write && !a.asyncProxy) {
          pending.push_back({&e, a.buffer, global, false, {}, false, false, ThreadSet()});
          continue;
        }
        if (a.write)
          continue;
        if (!global) {
          if (!a.asyncProxy)
            continue;
          for (const Pending &p : pending)
            if (!p.global && p.buffer == a.buffer &&
                !(p.lateFence && p.write->threads.subsetOf(e.threads) &&
                  e.threads.subsetOf(p.fencedBy))) {
              report(e, p, "shared",
                     p.lateFence ? "fence.proxy.async in the writing threads before the barrier "
                                   "that orders the write before this read (the fence after it "
                                   "orders only the fencing threads' own reads)"
                                 : "fence.proxy.async in the writing threads in between");
              break;
            }
          continue;
        }
        // A TMA copy (cp.async.bulk, completing on an mbarrier) reads its
        // global source through the async proxy.
        if (e.kind != SyncKind::TxDelivery)
          continue;
        for (const Pending &p : pending) {
          if (!p.global || p.buffer != a.buffer)
            continue;
          bool fenced = false;
          for (const SyncEvent *f : p.after)
            fenced |= e.threads.subsetOf(coverOf(*f)) && runsWith(*f, e);
          if (!fenced) {
            report(e, p, "global",
                   "fence.proxy.async(space = \"global\") by the writing threads after the "
                   "write, nor by the reading threads between observing it and the read");
            break;
          }
        }
      }
    }
}

} // namespace tilescope::detail
