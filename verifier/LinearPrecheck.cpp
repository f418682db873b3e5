#include "verifier/LinearPrecheck.h"

#include "verifier/SolverBudget.h"

#include <algorithm>

namespace tilescope::detail {

LinearPrecheck::LinearPrecheck(z3::context &ctx, unsigned budgetMs)
    : ctx_(ctx), budgetMs_(std::min(budgetMs, kPrecheckBudgetMs)),
      abstraction_(ctx, /*uninterpretedProducts=*/true), background_(ctx) {}

bool LinearPrecheck::unsat(const z3::expr_vector &background, const z3::expr_vector &constraints) {
  for (; backgroundSeen_ < background.size(); ++backgroundSeen_)
    background_.push_back(abstraction_.rewrite(background[int(backgroundSeen_)]));
  z3::expr_vector rewritten(ctx_);
  bool abstracted = false;
  for (unsigned k = 0; k < constraints.size(); ++k) {
    rewritten.push_back(abstraction_.rewrite(constraints[int(k)]));
    abstracted |= !z3::eq(rewritten.back(), constraints[int(k)]);
  }
  if (!abstracted)
    return false;
  z3::solver s = oneShotSolver(ctx_, budgetMs_);
  s.add(background_);
  z3::expr_vector used(ctx_);
  for (unsigned k = 0; k < background_.size(); ++k)
    used.push_back(background_[int(k)]);
  for (unsigned k = 0; k < rewritten.size(); ++k)
    used.push_back(rewritten[int(k)]);
  s.add(abstraction_.definitionsFor(used));
  s.add(rewritten);
  return s.check() == z3::unsat;
}

} // namespace tilescope::detail
