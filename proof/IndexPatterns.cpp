#include "proof/IndexPatterns.h"

#include <algorithm>

namespace tilescope {

IndexPattern elementPattern(IndexQueries &q, const BarrierSkeleton &sk, const SyncEvent &ev,
                            const Expr &index, int64_t period) {
  IndexPattern p;
  p.period = std::max<int64_t>(period, 1);
  if (auto quick = structuralPattern(sk, ev, index, period))
    return *quick;
  z3::context &ctx = q.ctx();
  if (ev.loop < 0) {
    z3::expr zero = ctx.int_val(0);
    auto v = q.indexAt(zero);
    if (!v)
      return p;
    q.beforeQueries();
    auto s = q.query();
    z3::expr probe = q.fresh("probe");
    s->add(probe == *v);
    if (s->check() != z3::sat)
      return p;
    int64_t c = s->value(probe);
    auto t = q.query();
    t->add(*v != ctx.int_val(c));
    if (t->check() != z3::unsat)
      return p;
    p.ok = p.constant = true;
    p.c = c;
    return p;
  }
  z3::expr i = q.fresh("i");
  auto v = q.indexAt(i);
  if (!v || !v->is_int())
    return p;
  auto tripCount = q.trip();
  if (!tripCount)
    return p;
  z3::expr trip = *tripCount;
  q.beforeQueries();
  auto s = q.query();
  s->add(i == 0 && trip >= 1);
  z3::expr probe = q.fresh("probe");
  s->add(probe == *v);
  if (z3::check_result r = s->check(); r != z3::sat) {
    // The loop never runs: any pattern is vacuously right (not when Z3
    // gave up: then no pattern is known).
    p.ok = p.constant = r == z3::unsat;
    return p;
  }
  int64_t c = s->value(probe);
  if (p.period > 1 && c >= 0 && c < p.period) {
    auto t = q.query();
    t->add(i >= 0 && i < trip && *v != z3::mod(i + ctx.int_val(c), ctx.int_val(p.period)));
    if (t->check() == z3::unsat) {
      p.ok = true;
      p.c = c;
      return p;
    }
  }
  auto t = q.query();
  t->add(i >= 0 && i < trip && *v != ctx.int_val(c));
  if (t->check() == z3::unsat) {
    p.ok = p.constant = true;
    p.c = c;
  }
  return p;
}

int64_t threadPeriod(IndexQueries &q, const BarrierSkeleton &sk, const SyncEvent &ev,
                     int64_t size) {
  z3::context &ctx = q.ctx();
  z3::expr t = q.fresh("pt"), i = q.fresh("pi"), j = q.fresh("pj");
  if (!q.bindThread(t))
    return 0;
  auto tripCount = q.trip();
  if (!tripCount)
    return 0;
  z3::expr trip = *tripCount;
  auto inRange = [&](const z3::expr &at) { return at >= 0 && at < trip; };
  auto ii = q.indexAt(i), ij = q.indexAt(j);
  if (!ii || !ij || !ii->is_int())
    return 0;
  q.beforeQueries();
  // An undecided query counts as satisfiable: the period stays unknown.
  auto satisfiable = [](IndexQuery &query) { return query.check() != z3::unsat; };
  auto differ = q.query();
  differ->add(inRange(i) && inRange(j) && *ii != *ij);
  if (!satisfiable(*differ))
    return 1;
  if (size < 2)
    return 0;
  // `(k + c) % S` over a loop from 0: the proofs' pattern, which repeats
  // after S.
  if (auto p = structuralPattern(sk, ev, ev.barrier.index, size); p && !p->constant)
    return p->period;
  // Distinct within a window of S iterations, and repeating after S.
  auto repeat = q.query();
  repeat->add(inRange(i) && inRange(j) && j > i && j < i + ctx.int_val(size) && *ii == *ij);
  auto drift = q.query();
  auto next = q.indexAt(i + ctx.int_val(size));
  if (!next)
    return 0;
  drift->add(inRange(i) && inRange(i + ctx.int_val(size)) && *ii != *next);
  if (!satisfiable(*repeat) && !satisfiable(*drift))
    return size;
  return 0;
}

} // namespace tilescope
