// The orderings the static race check decides per execution pair
// (RaceChecker.h): handshakes through mbarriers and their relays, wgmma,
// cp.async and TMA-store completions, the rounds and periods of barrier
// indices.
#include "racecheck/RaceChecker.h"

#include "ir/Printer.h"
#include "proof/IndexPatterns.h"
#include "proof/QueryDeadline.h"
#include "proof/LeastWitness.h"
#include "proof/SolverBudget.h"
#include "sync/MbarrierZ3.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <tuple>

namespace tilescope::detail {

std::vector<const SyncEvent *> RaceChecker::relaysAfter(const SyncEvent &w, WaitAt at,
                                                        const ThreadSet &waiters,
                                                        const SyncEvent &y) const {
  std::vector<const SyncEvent *> out;
  std::vector<int> cw = chainOf(w), cy = chainOf(y);
  for (const SyncEvent &b : sk_.events) {
    // A relay under conditions counts where they cannot change during the
    // run (no loop variable) and y runs under them too: then it runs
    // whenever y does.
    bool guardedOk = b.guards.empty() || (!readsLoopVar(b.guards) && guardsCover(b, y));
    if (!guardedOk || !joins(b, waiters, y.threads, true))
      continue;
    std::vector<int> cb = chainOf(b);
    bool between = b.order > w.order && b.order < y.order;
    bool placed = false;
    switch (at) {
    case WaitAt::OutsideLoops:
      placed = between && cb.size() <= 1 && isPrefix(cb, cy);
      break;
    case WaitAt::SameIteration:
      placed = between && cb == cw;
      break;
    case WaitAt::PreviousIteration:
      placed = cb == cw && (b.order > w.order || b.order < y.order);
      break;
    case WaitAt::ArrivalIteration:
      placed = (cb == cw && b.order > w.order) ||
               (between && cb.size() <= 1 && isPrefix(cb, cy) && cb != cw);
      break;
    }
    if (placed)
      out.push_back(&b);
  }
  return out;
}

std::vector<std::pair<int64_t, std::optional<z3::expr>>>
RaceChecker::relayThreads(const std::vector<const SyncEvent *> &relays, const ThreadSet &set,
                          const z3::expr &yThread) {
  std::vector<std::pair<int64_t, std::optional<z3::expr>>> out;
  bool cta = false, warp = false;
  for (const SyncEvent *b : relays)
    (b->kind == SyncKind::WarpSync ? warp : cta) = true;
  for (int64_t t = 0; t < set.launchThreads(); ++t) {
    if (!set.contains(t))
      continue;
    if (cta) {
      out.push_back({t, std::nullopt});
      return out;
    }
    if (warp && (out.empty() || warpOf(out.back().first) != warpOf(t)))
      out.push_back({t, detail::warpOfZ3(yThread) == ctx_.int_val(warpOf(t))});
  }
  return out;
}

bool RaceChecker::isPrefix(const std::vector<int> &a, const std::vector<int> &b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

bool RaceChecker::guardsCover(const SyncEvent &e, const SyncEvent &of) {
  if (e.guards.size() > of.guards.size())
    return false;
  for (size_t i = 0; i < e.guards.size(); ++i)
    if (e.guards[i] != of.guards[i])
      return false;
  return true;
}

bool RaceChecker::runsWith(const SyncEvent &e, const SyncEvent &x) const {
  if (!guardsCover(e, x))
    return false;
  std::vector<int> ce = chainOf(e), cx = chainOf(x);
  size_t shared = 0;
  while (shared < ce.size() && shared < cx.size() && ce[shared] == cx[shared])
    ++shared;
  for (size_t k = shared; k < ce.size(); ++k)
    if (size_t(ce[k]) >= loopRunsOnce_.size() || !loopRunsOnce_[size_t(ce[k])])
      return false;
  return true;
}

void RaceChecker::findLoopsRunningOnce() {
  loopRunsOnce_.assign(sk_.loops.size(), false);
  for (size_t l = 0; l < sk_.loops.size(); ++l) {
    auto trip = enc_.encode(sk_.loops[l].trip(), {}, {});
    if (!trip || !trip->is_int())
      continue;
    z3::expr_vector none(ctx_);
    none.push_back(*trip < 1);
    loopRunsOnce_[l] = !satisfiable(none);
  }
}

bool RaceChecker::readsLoopVar(const std::vector<Expr> &guards) const {
  LoopVarFinder finder;
  finder.names = &loopVars_;
  for (const Expr &g : guards)
    finder.visit(g);
  return finder.found;
}

bool RaceChecker::encodeGuards(const SyncEvent &e, const std::map<std::string, z3::expr> &bound,
                               const std::map<BuiltinKind, z3::expr> &builtins,
                               z3::expr_vector &out) {
  for (const Expr &g : e.guards) {
    auto x = enc_.encode(g, bound, builtins);
    if (!x || !x->is_bool())
      return false;
    out.push_back(*x);
  }
  return true;
}

z3::expr_vector RaceChecker::copyOf(const z3::expr_vector &v) {
  z3::expr_vector out(ctx_);
  for (unsigned k = 0; k < v.size(); ++k)
    out.push_back(v[int(k)]);
  return out;
}

bool RaceChecker::satisfiable(const z3::expr_vector &cons) {
  // A one-shot solver first: a fresh incremental solver costs milliseconds
  // before its first answer, the one-shot pipeline well under one. Its sat
  // and unsat are answers; only where it gives up does the incremental
  // solver (SolverBudget.h) decide, as the default solver always did.
  z3::solver once = oneShotSolver(ctx_, std::min(opt_.timeoutMs, detail::kPrecheckBudgetMs));
  once.add(enc_.assumptions());
  once.add(cons);
  if (z3::check_result r = checkWithinBudget(once); r != z3::unknown)
    return r == z3::sat;
  z3::solver s = incrementalSolver(ctx_);
  z3::params p(ctx_);
  setSolverBudget(p, opt_.timeoutMs);
  s.set(p);
  for (unsigned k = 0; k < enc_.assumptions().size(); ++k)
    s.add(enc_.assumptions()[int(k)]);
  for (unsigned k = 0; k < cons.size(); ++k)
    s.add(cons[int(k)]);
  z3::check_result r = checkWithinBudget(s);
  if (r == z3::unknown)
    undecided_ = true;
  return r != z3::unsat;
}

int64_t RaceChecker::periodOf(const SyncEvent &e) {
  if (auto it = period_.find(&e); it != period_.end())
    return it->second;
  int64_t &period = period_[&e];
  period = 0;
  // The one derivation (proof/IndexPatterns.h, threadPeriod), asked of the
  // index of one symbolic thread of the CTA; an undecided query is
  // satisfiable (satisfiable() marks the check undecided).
  struct RaceQuery final : IndexQuery {
    RaceQuery(RaceChecker &c, const z3::expr_vector &base) : checker(c), cons(c.copyOf(base)) {}
    void add(const z3::expr &x) override { cons.push_back(x); }
    z3::check_result check() override { return checker.satisfiable(cons) ? z3::sat : z3::unsat; }
    int64_t value(const z3::expr &) override { return 0; } // never asked
    RaceChecker &checker;
    z3::expr_vector cons;
  };
  struct RaceQueries final : IndexQueries {
    RaceQueries(RaceChecker &c, const SyncEvent &ev)
        : checker(c), event(ev), loop(c.sk_.loops[size_t(ev.loop)]), base(c.ctx_) {}
    z3::context &ctx() override { return checker.ctx_; }
    z3::expr fresh(const char *name) override { return checker.enc_.fresh(name); }
    bool bindThread(const z3::expr &t) override {
      thread = t;
      builtins = checker.builtinsOf(t);
      begin = checker.enc_.encode(loop.begin, {}, builtins);
      step = checker.enc_.encode(loop.step, {}, builtins);
      tripCount = checker.enc_.encode(loop.trip(), {}, builtins);
      return begin && step && tripCount;
    }
    std::optional<z3::expr> indexAt(const z3::expr &at) override {
      return checker.enc_.encode(event.barrier.index, {{loop.var, *begin + at * *step}}, builtins);
    }
    std::optional<z3::expr> trip() override { return tripCount; }
    void beforeQueries() override {
      base.push_back(*thread >= 0 && *thread < checker.ctx_.int_val(checker.sk_.threads));
    }
    std::unique_ptr<IndexQuery> query() override {
      return std::make_unique<RaceQuery>(checker, base);
    }
    RaceChecker &checker;
    const SyncEvent &event;
    const SkeletonLoop &loop;
    z3::expr_vector base;
    std::optional<z3::expr> thread, begin, step, tripCount;
    std::map<BuiltinKind, z3::expr> builtins;
  };
  const BarrierArray *array = sk_.barrier(e.barrier.array);
  RaceQueries queries(*this, e);
  return period = threadPeriod(queries, sk_, e, array ? array->size : 1);
}

std::optional<z3::expr> RaceChecker::roundOf(const SyncEvent &e, const std::optional<z3::expr> &i,
                                             const std::map<BuiltinKind, z3::expr> &builtins) {
  bool wait = e.kind == SyncKind::MbarWait;
  auto counted = [&](const SyncEvent &o) {
    if (o.barrier.array != e.barrier.array)
      return false;
    if (wait)
      return o.kind == SyncKind::MbarWait;
    return o.kind == SyncKind::MbarArrive || o.kind == SyncKind::Tcgen05Commit ||
           o.kind == SyncKind::MbarExpectTx || o.kind == SyncKind::TxDelivery ||
           o.kind == SyncKind::MbarCompleteTx;
  };
  if (e.loop < 0) {
    auto c = constantValue(e.barrier.index);
    if (!c)
      return std::nullopt;
    int64_t n = 0;
    const SyncEvent *inLoop = nullptr; // a wait after the loop of the others
    for (const SyncEvent &o : sk_.events) {
      if (!counted(o) || &o == &e)
        continue;
      auto oc = constantValue(o.barrier.index);
      if (!oc)
        return std::nullopt;
      if (o.loop >= 0) {
        // Waits of one element in one top-level loop before this wait:
        // this one is round (executions of that wait).
        if (!wait || inLoop || sk_.loops[size_t(o.loop)].parent >= 0 || *oc != *c ||
            o.order > e.order || !intersects(o.threads, e.threads))
          return std::nullopt;
        inLoop = &o;
        continue;
      }
      bool arrival = o.kind == SyncKind::MbarWait || o.kind == SyncKind::MbarArrive ||
                     o.kind == SyncKind::Tcgen05Commit;
      if (arrival && *oc == *c && o.order < e.order && intersects(o.threads, e.threads))
        ++n;
    }
    if (e.kind == SyncKind::TxDelivery && n-- == 0)
      return std::nullopt;
    if (!inLoop)
      return ctx_.int_val(n);
    auto first = firstIteration(*inLoop);
    auto trip = enc_.encode(sk_.loops[size_t(inLoop->loop)].trip(), {}, builtins);
    if (n > 0 || !first || !trip || periodOf(*inLoop) != 1)
      return std::nullopt;
    z3::expr runs = *trip - ctx_.int_val(*first);
    return z3::ite(runs > 0, runs, ctx_.int_val(0));
  }
  if (!i || sk_.loops[size_t(e.loop)].parent >= 0)
    return std::nullopt;
  // Events of the element before the loop would shift its rounds; those
  // after it do not.
  int loopStart = e.order;
  for (const SyncEvent &o : sk_.events)
    if (o.loop == e.loop)
      loopStart = std::min(loopStart, o.order);
  for (const SyncEvent &o : sk_.events)
    if (counted(o) && o.loop != e.loop && o.order < loopStart)
      return std::nullopt;
  int64_t period = periodOf(e);
  auto first = firstIteration(e);
  if (period == 0 || !first || (*first > 0 && period != 1))
    return std::nullopt;
  if (period == 1)
    return *first == 0 ? *i : *i - ctx_.int_val(*first);
  return *i / ctx_.int_val(period);
}

std::optional<int64_t> RaceChecker::firstIteration(const SyncEvent &e) {
  if (!readsLoopVar(e.guards))
    return 0;
  if (auto it = first_.find(&e); it != first_.end())
    return it->second;
  std::optional<int64_t> &first = first_[&e];
  const SkeletonLoop &loop = sk_.loops[size_t(e.loop)];
  z3::expr t = enc_.fresh("ft"), i = enc_.fresh("fi");
  auto builtins = builtinsOf(t);
  auto begin = enc_.encode(loop.begin, {}, builtins), step = enc_.encode(loop.step, {}, builtins),
       trip = enc_.encode(loop.trip(), {}, builtins);
  if (!begin || !step || !trip)
    return first;
  z3::expr_vector guards(ctx_);
  if (!encodeGuards(e, {{loop.var, *begin + i * *step}}, builtins, guards) || guards.empty())
    return first;
  for (int64_t l = 1; l <= 4 && !first; ++l) {
    z3::expr_vector differ(ctx_);
    differ.push_back(t >= 0 && t < ctx_.int_val(sk_.threads) && i >= 0 && i < *trip);
    differ.push_back(z3::mk_and(guards) != (i >= ctx_.int_val(l)));
    if (!satisfiable(differ))
      first = l;
  }
  return first;
}

bool RaceChecker::intersects(const ThreadSet &a, const ThreadSet &b) {
  for (int64_t t = 0; t < a.launchThreads(); ++t)
    if (a.contains(t) && b.contains(t))
      return true;
  return false;
}

std::optional<z3::expr> RaceChecker::reaches(const SyncEvent &r, const Side &x, const Side &y) {
  if (!r.remoteCta && !r.multicast) {
    if (x.rank && y.rank)
      return *x.rank == *y.rank;
    return ctx_.bool_val(true); // one CTA
  }
  if (!y.rank || !clusterExtent())
    return std::nullopt;
  if (r.remoteCta) {
    auto target = enc_.encode(r.remoteCta, x.bound, x.builtins());
    if (!target || !target->is_int())
      return std::nullopt;
    return *target == *y.rank;
  }
  auto mask = constantValue(r.multicast);
  if (!mask)
    return std::nullopt;
  z3::expr_vector any(ctx_);
  for (int64_t rank = 0; rank < *clusterExtent() && rank < 63; ++rank)
    if ((*mask >> rank) & 1)
      any.push_back(*y.rank == ctx_.int_val(rank));
  return any.empty() ? ctx_.bool_val(false) : z3::mk_or(any);
}

bool RaceChecker::storeCompletedBefore(const SyncEvent &x, const SyncEvent &r) {
  if (x.call != IntrinsicId::TmaStore)
    return false;
  ThreadSet issuers = coverOf(x);
  if (!coverOf(r).subsetOf(issuers) || !r.guards.empty())
    return false;
  std::vector<int> cr = chainOf(r);
  auto byIssuers = [&](const SyncEvent &e, SyncKind kind) {
    return e.kind == kind && e.guards.empty() && issuers.subsetOf(e.threads);
  };
  for (const SyncEvent &w : sk_.events) {
    if (!byIssuers(w, SyncKind::TmaStoreWait) || w.readOnly ||
        constantValue(w.amount).value_or(1) != 0 || w.order <= x.order || w.order >= r.order ||
        chainOf(w) != cr)
      continue;
    bool fenced = false;
    for (const SyncEvent &f : sk_.events)
      fenced |= byIssuers(f, SyncKind::FenceProxyAsync) && f.globalProxy && f.order > w.order &&
                f.order < r.order && chainOf(f) == cr;
    if (!fenced)
      continue;
    for (const SyncEvent &c : sk_.events)
      if (byIssuers(c, SyncKind::TmaStoreCommit) && c.order > x.order && c.order < w.order &&
          isPrefix(chainOf(c), chainOf(x)) && isPrefix(cr, chainOf(c)))
        return true;
  }
  return false;
}

void RaceChecker::addHandshakes(const Side &x, const Side &y, std::vector<z3::expr> &out) {
  bool late = completesLater(x.ev, x.acc);
  bool mma = x.ev.call == IntrinsicId::Tcgen05Mma;
  std::vector<int> cx = chainOf(x.ev), cy = chainOf(y.ev);
  for (const SyncEvent &r : sk_.events) {
    bool delivery =
        &r == &x.ev && r.kind == SyncKind::TxDelivery && x.acc.write && x.acc.asyncProxy;
    bool arrival = !delivery && r.order > x.ev.order &&
                   ((r.kind == SyncKind::MbarArrive && (!late || storeCompletedBefore(x.ev, r))) ||
                    (r.kind == SyncKind::Tcgen05Commit && (!late || mma)));
    if ((!delivery && !arrival) || r.barrier.array.empty())
      continue;
    std::vector<int> cr = chainOf(r);
    if (cr.size() > 1 || !isPrefix(cr, cx))
      continue;
    std::optional<z3::expr> iR;
    if (!cr.empty())
      iR = x.iters.front();
    auto bx = x.builtins();
    z3::expr_vector released(ctx_);
    if (!threadMember(coverOf(r), x.t, released) || !encodeGuards(r, x.bound, bx, released))
      continue;
    auto indexR = enc_.encode(r.barrier.index, x.bound, bx);
    auto roundR = roundOf(r, iR, bx);
    auto reach = reaches(r, x, y);
    if (!indexR || !roundR || !reach)
      continue;
    released.push_back(*reach);
    for (const SyncEvent &w : sk_.events) {
      if (w.kind != SyncKind::MbarWait || w.barrier.array != r.barrier.array)
        continue;
      std::vector<int> cw = chainOf(w);
      if (cw.size() > 1)
        continue;
      // The wait's iteration, if in a loop, and where it sits.
      std::vector<std::pair<std::optional<z3::expr>, WaitAt>> at;
      if (cw.empty()) {
        if (w.order < y.ev.order)
          at.push_back({std::nullopt, WaitAt::OutsideLoops});
      } else if (!cy.empty() && cy.front() == cw.front()) {
        if (w.order < y.ev.order)
          at.push_back({y.iters.front(), WaitAt::SameIteration});
        at.push_back({y.iters.front() - 1, WaitAt::PreviousIteration});
      } else if (iR && cr.front() == cw.front() && w.order < y.ev.order) {
        at.push_back({*iR, WaitAt::ArrivalIteration});
      }
      for (const auto &[iW, where] : at) {
        // Who observes the phase: y's own thread, or, for an access that
        // completes later, a waiting thread that then meets y's thread at
        // a barrier (a CTA barrier after a wait publishes what the wait
        // observed to every thread it joins).
        std::vector<std::pair<z3::expr, std::optional<z3::expr>>> observers;
        z3::expr_vector mine(ctx_);
        if (threadMember(coverOf(w), y.t, mine))
          observers.push_back({y.t, mine[0]});
        if (late)
          for (const auto &[u, cond] :
               relayThreads(relaysAfter(w, where, w.threads, y.ev), w.threads, y.t))
            observers.push_back({ctx_.int_val(u), cond});
        for (const auto &[waiter, cond] : observers) {
          auto bw = y.builtinsAt(waiter);
          std::map<std::string, z3::expr> boundW;
          z3::expr_vector cons = copyOf(released);
          if (cond)
            cons.push_back(*cond);
          if (iW) {
            const SkeletonLoop &loop = sk_.loops[size_t(cw.front())];
            auto b = enc_.encode(loop.begin, {}, bw), s = enc_.encode(loop.step, {}, bw),
                 trip = enc_.encode(loop.trip(), {}, bw);
            if (!b || !s || !trip)
              continue;
            boundW.emplace(loop.var, *b + *iW * *s);
            cons.push_back(*iW >= 0 && *iW < *trip);
          }
          if (!encodeGuards(w, boundW, bw, cons))
            continue;
          auto indexW = enc_.encode(w.barrier.index, boundW, bw);
          auto parity = enc_.encode(w.parity, boundW, bw);
          auto roundW = roundOf(w, iW, bw);
          if (!indexW || !parity || !roundW || !indexW->is_int() || !indexR->is_int()) {
            // A wait on the signalled barrier that may order the pair but
            // cannot be encoded (a peeled last iteration's wait on
            // full[(kt - 1) % S]): a race found without it is not
            // confirmed (solvePair).
            handshakeUnmodelled_ = true;
            continue;
          }
          z3::expr meant = intendedPhase(*parity, *roundW); // sync/MbarrierZ3.h
          cons.push_back(*indexR == *indexW);
          cons.push_back(*roundR <= meant);
          out.push_back(z3::mk_and(cons));
        }
      }
    }
  }
}

void RaceChecker::addWgmmaRetired(const Side &x, const Side &y, std::vector<z3::expr> &out) {
  if (x.ev.kind != SyncKind::WgmmaMma || y.ev.order <= x.ev.order)
    return;
  std::vector<int> cx = chainOf(x.ev), cy = chainOf(y.ev);
  for (const SyncEvent &commit : sk_.events) {
    if (commit.kind != SyncKind::WgmmaCommit || commit.order <= x.ev.order ||
        commit.order >= y.ev.order || !commit.guards.empty() || commit.loop != x.ev.loop)
      continue;
    for (const SyncEvent &w : sk_.events) {
      if (w.kind != SyncKind::WgmmaWait || w.order <= commit.order || w.order >= y.ev.order ||
          !w.guards.empty() || w.loop != x.ev.loop || constantValue(w.amount) != 0)
        continue;
      std::vector<int> cw = chainOf(w);
      if (!isPrefix(cw, cy))
        continue;
      ThreadSet cover = coverOf(w), warpgroups = x.ev.threads.widened(128);
      if (!warpgroups.subsetOf(cover) || !warpgroups.subsetOf(coverOf(commit)))
        continue;
      z3::expr_vector same(ctx_);
      for (size_t k = 0; k < cw.size(); ++k)
        same.push_back(x.iters[k] == y.iters[k]);
      // A thread of the warpgroup, or any thread that a CTA or named
      // barrier after the wait joins with the warpgroup.
      z3::expr_vector cons = copyOf(same);
      if (threadMember(cover, y.t, cons)) {
        cons.push_back(detail::warpgroupOfZ3(x.t) == detail::warpgroupOfZ3(y.t));
        out.push_back(z3::mk_and(cons));
      }
      for (const SyncEvent *b : relaysAfter(w, WaitAt::SameIteration, warpgroups, y.ev))
        if (b->kind != SyncKind::WarpSync) {
          out.push_back(z3::mk_and(same));
          break;
        }
      return;
    }
  }
}

z3::expr RaceChecker::afterAt(const SyncEvent &b, const std::vector<z3::expr> &at,
                              const std::vector<int> &chain, const Side &y) {
  std::vector<int> cy = chainOf(y.ev);
  z3::expr_vector later(ctx_), equal(ctx_);
  for (size_t k = 0; k < chain.size() && k < cy.size() && chain[k] == cy[k]; ++k) {
    later.push_back(z3::mk_and(equal) && at[k] < y.iters[k]);
    equal.push_back(at[k] == y.iters[k]);
  }
  if (y.ev.order > b.order)
    later.push_back(z3::mk_and(equal));
  return later.empty() ? ctx_.bool_val(false) : z3::mk_or(later);
}

void RaceChecker::addCpAsyncCompleted(const Side &x, const Side &y, std::vector<z3::expr> &out,
                                      bool own) {
  if (!isCpAsync(x.ev) || !x.acc.write)
    return;
  ThreadSet issuers = coverOf(x.ev);
  std::vector<int> cx = chainOf(x.ev), cy = chainOf(y.ev);
  auto byIssuers = [&](const SyncEvent &e, SyncKind kind) {
    return e.kind == kind && chainOf(e) == cx && e.guards.empty() && issuers.subsetOf(e.threads);
  };
  const SyncEvent *closed = x.ev.call == IntrinsicId::CpAsync ? nullptr : &x.ev;
  for (const SyncEvent &e : sk_.events)
    if (!closed && e.order > x.ev.order && byIssuers(e, SyncKind::CpAsyncCommit))
      closed = &e;
  if (!closed)
    return;
  int64_t newer = 0; // unconditional commits after the group's
  for (const SyncEvent &w : sk_.events) {
    if (w.order <= closed->order)
      continue;
    if (byIssuers(w, SyncKind::CpAsyncCommit))
      ++newer;
    auto allowed = constantValue(w.amount);
    if (!byIssuers(w, SyncKind::CpAsyncWait) || !allowed || newer < *allowed)
      continue;
    std::vector<const SyncEvent *> points;
    if (own)
      points.push_back(&w);
    for (const SyncEvent *b : relaysAfter(w, WaitAt::SameIteration, issuers, y.ev))
      if (chainOf(*b) == cx)
        points.push_back(b);
    for (const SyncEvent *b : points) {
      // y after b (the wait or a barrier in x's innermost loop, at x's
      // iterations).
      z3::expr cons = afterAt(*b, x.iters, cx, y);
      if (b->kind == SyncKind::WarpSync)
        cons = cons && detail::warpOfZ3(x.t) == detail::warpOfZ3(y.t);
      out.push_back(cons);
    }
    return;
  }
}

std::optional<RaceChecker::ChainBinding>
RaceChecker::bindChain(const std::vector<int> &chain, const std::vector<z3::expr> &at,
                       const std::map<BuiltinKind, z3::expr> &builtins, bool bindAll) {
  ChainBinding out;
  for (size_t k = 0; k < chain.size(); ++k) {
    const SkeletonLoop &loop = sk_.loops[size_t(chain[k])];
    auto trip = enc_.encode(loop.trip(), out.bound, builtins);
    if (!trip)
      return std::nullopt;
    out.trips.push_back(*trip);
    if (k + 1 == chain.size() && !bindAll)
      break; // only deeper loops' bounds read the variable
    auto b = enc_.encode(loop.begin, out.bound, builtins),
         s = enc_.encode(loop.step, out.bound, builtins);
    if (!b || !s)
      return std::nullopt;
    out.bound.insert_or_assign(loop.var, *b + at[k] * *s);
  }
  return out;
}

std::vector<std::pair<std::vector<z3::expr>, z3::expr>>
RaceChecker::laterIterations(const std::vector<int> &chain, const std::vector<z3::expr> &at,
                             int64_t offset, const Side &x) {
  std::vector<std::pair<std::vector<z3::expr>, z3::expr>> out;
  if (chain.empty())
    return out;
  auto builtins = x.builtins();
  size_t inner = chain.size() - 1;
  std::vector<z3::expr> here(at.begin(), at.begin() + long(chain.size()));
  auto bindHere = bindChain(chain, here, builtins);
  if (!bindHere)
    return out;
  z3::expr off = ctx_.int_val(offset);
  // In the same iterations of the outer loops: the innermost trip count
  // is the one here. (The condition as a conjunction of one, as the terms
  // were before wraps were modelled: the shared solver's search depends on
  // their form, and the grouped GEMM's race query gave up on the bare one.)
  z3::expr_vector fits(ctx_);
  fits.push_back(here[inner] + off < bindHere->trips[inner]);
  out.push_back({here, z3::mk_and(fits)});
  out.back().first[inner] = here[inner] + off;
  for (size_t level = inner; level-- > 0;) {
    std::vector<z3::expr> later = here;
    later[level] = here[level] + 1;
    for (size_t k = level + 1; k < inner; ++k)
      later[k] = ctx_.int_val(0);
    z3::expr owed = here[inner] + off - bindHere->trips[inner];
    later[inner] = z3::ite(owed > 0, owed, ctx_.int_val(0));
    auto bindLater = bindChain(chain, later, builtins);
    if (!bindLater)
      continue;
    z3::expr_vector exists(ctx_);
    for (size_t k = level; k < chain.size(); ++k)
      exists.push_back(later[k] < bindLater->trips[k]);
    out.push_back({later, z3::mk_and(exists)});
  }
  return out;
}

void RaceChecker::addTmaStoreCompleted(const Side &x, const Side &y, std::vector<z3::expr> &out,
                                       bool own) {
  if (x.ev.call != IntrinsicId::TmaStore)
    return;
  ThreadSet issuers = coverOf(x.ev);
  std::vector<int> cx = chainOf(x.ev);
  auto byIssuers = [&](const SyncEvent &e, SyncKind kind, bool guarded = false) {
    return e.kind == kind && (guarded || e.guards.empty()) && issuers.subsetOf(e.threads);
  };
  const SyncEvent *closed = nullptr;
  for (const SyncEvent &e : sk_.events)
    if (!closed && e.order > x.ev.order && byIssuers(e, SyncKind::TmaStoreCommit) &&
        isPrefix(chainOf(e), cx))
      closed = &e;
  if (!closed)
    return;
  std::vector<int> cc = chainOf(*closed);
  std::vector<z3::expr> atX(x.iters.begin(), x.iters.begin() + long(cc.size()));
  for (const SyncEvent &w : sk_.events) {
    auto allowed = constantValue(w.amount);
    if (!byIssuers(w, SyncKind::TmaStoreWait, true) || chainOf(w) != cc || !allowed ||
        *allowed < 0 ||
        (x.acc.write && w.readOnly))
      continue;
    // The unconditional commits of cc's body after the group's, before the
    // wait in the same iteration, and per iteration.
    int64_t after = 0, before = 0, between = 0, perIteration = 0;
    for (const SyncEvent &c : sk_.events) {
      if (!byIssuers(c, SyncKind::TmaStoreCommit) || chainOf(c) != cc)
        continue;
      ++perIteration;
      after += c.order > closed->order;
      before += c.order < w.order;
      between += c.order > closed->order && c.order < w.order;
    }
    // The first execution of w with at least n newer commits: d iterations
    // of cc's innermost loop on (d = 0: this one).
    int64_t d = w.order > closed->order && between >= *allowed ? 0 : 1;
    if (d == 1 && cc.empty())
      continue;
    if (d == 1 && after + before < *allowed)
      d += (*allowed - after - before + perIteration - 1) / perIteration;
    std::vector<std::pair<std::vector<z3::expr>, z3::expr>> atW;
    if (d == 0)
      atW.push_back({atX, ctx_.bool_val(true)});
    else
      atW = laterIterations(cc, atX, d, x);
    for (auto &[iterW, existsW] : atW) {
      // A guarded wait counts where its guards hold at iterW (for x's
      // thread, which issued the group); at no other execution.
      if (!w.guards.empty()) {
        auto bindW = bindChain(cc, iterW, x.builtins(), true);
        z3::expr_vector holds(ctx_);
        if (!bindW || !encodeGuards(w, bindW->bound, x.builtins(), holds))
          continue;
        existsW = existsW && z3::mk_and(holds);
      }
      // Where each relay runs after w: later in its iteration (in cc's
      // loop or after the inner loops of an outer one), else at a later
      // iteration of its own loops.
      std::vector<std::tuple<const SyncEvent *, std::vector<int>,
                             std::pair<std::vector<z3::expr>, z3::expr>>>
          points;
      if (own)
        points.push_back({&w, cc, {iterW, existsW}});
      for (const SyncEvent &b : sk_.events) {
        std::vector<int> cb = chainOf(b);
        if (!b.guards.empty() || !isPrefix(cb, cc) || !joins(b, issuers, y.ev.threads, true))
          continue;
        std::vector<z3::expr> atB(iterW.begin(), iterW.begin() + long(cb.size()));
        if (b.order > w.order) {
          points.push_back({&b, cb, {atB, existsW}});
          continue;
        }
        for (const auto &[iterB, existsB] : laterIterations(cb, atB, 1, x))
          points.push_back({&b, cb, {iterB, existsW && existsB}});
      }
      for (const auto &[b, cb, placed] : points) {
        z3::expr later = afterAt(*b, placed.first, cb, y);
        if (later.is_false())
          continue;
        z3::expr cons = placed.second && later;
        if (b->kind == SyncKind::WarpSync)
          cons = cons && detail::warpOfZ3(x.t) == detail::warpOfZ3(y.t);
        out.push_back(cons);
      }
    }
  }
}

std::vector<z3::expr> RaceChecker::orderingEscapes(const Side &a, const Side &b,
                                                   const Ordering &ord, Mode mode) {
  std::vector<z3::expr> out;
  if (mode == Mode::AcrossCtas)
    return out;
  if (mode == Mode::SameThread) {
    // Only the issuing side's completion, observed before the other access.
    const Side &x = ord.issuerIsA ? a : b, &y = ord.issuerIsA ? b : a;
    addHandshakes(x, y, out);
    addWgmmaRetired(x, y, out);
    addCpAsyncCompleted(x, y, out, true);
    addTmaStoreCompleted(x, y, out, true);
    return out;
  }
  if (ord.warpOrdered)
    out.push_back(detail::warpOfZ3(a.t) == detail::warpOfZ3(b.t));
  if (mode == Mode::SameCta) {
    const Side &lo = ord.lo == &a.ev ? a : b, &hi = ord.lo == &a.ev ? b : a;
    for (const auto &[before, after] : ord.pairOrdered) {
      auto x = detail::threadSetZ3(before, lo.t), y = detail::threadSetZ3(after, hi.t);
      if (x && y)
        out.push_back(*x && *y);
    }
  }
  addHandshakes(a, b, out);
  addHandshakes(b, a, out);
  if (mode == Mode::SameCta) {
    addWgmmaRetired(a, b, out);
    addWgmmaRetired(b, a, out);
    addCpAsyncCompleted(a, b, out);
    addCpAsyncCompleted(b, a, out);
    addTmaStoreCompleted(a, b, out);
    addTmaStoreCompleted(b, a, out);
  }
  return out;
}

} // namespace tilescope::detail
