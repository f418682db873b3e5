#include "verifier/SolverBudget.h"

#include <algorithm>
#include <limits>

namespace tilescope {

void setSolverBudget(z3::params &params, unsigned budgetMs) {
  constexpr unsigned kMax = std::numeric_limits<unsigned>::max();
  unsigned units = budgetMs > kMax / kZ3UnitsPerMs ? kMax : budgetMs * kZ3UnitsPerMs;
  unsigned wallMs = budgetMs > kMax / 10 ? kMax : budgetMs * 10;
  params.set("rlimit", std::max(units, 1u));
  params.set("timeout", wallMs);
}

z3::solver oneShotSolver(z3::context &ctx, unsigned budgetMs) {
  z3::tactic pipeline = z3::tactic(ctx, "simplify") & z3::tactic(ctx, "propagate-values") &
                        z3::tactic(ctx, "solve-eqs") & z3::tactic(ctx, "purify-arith") &
                        z3::tactic(ctx, "smt");
  z3::solver s = pipeline.mk_solver();
  z3::params p(ctx);
  setSolverBudget(p, budgetMs);
  s.set(p);
  return s;
}

} // namespace tilescope
