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

} // namespace tilescope
