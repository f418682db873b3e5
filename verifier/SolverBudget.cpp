#include "verifier/SolverBudget.h"

#include "ir/Budget.h"

#include <algorithm>
#include <limits>
#include <new>
#include <string>

namespace tilescope {

void setSolverBudget(z3::params &params, unsigned budgetMs) {
  constexpr unsigned kMax = std::numeric_limits<unsigned>::max();
  unsigned units = budgetMs > kMax / kZ3UnitsPerMs ? kMax : budgetMs * kZ3UnitsPerMs;
  unsigned wallMs = budgetMs > kMax / 10 ? kMax : budgetMs * 10;
  params.set("rlimit", std::max(units, 1u));
  params.set("timeout", solverWallMs(wallMs));
}

unsigned solverWallMs(unsigned wantedMs) {
  Budget *budget = activeBudget();
  if (!budget)
    return wantedMs;
  int64_t left = budget->remainingMs();
  if (left < 0)
    return wantedMs;
  return unsigned(std::clamp<int64_t>(left, 1, wantedMs));
}

void setSolverMemoryLimit(int64_t megabytes) {
  z3::set_param("memory_max_size", std::to_string(std::max<int64_t>(megabytes, 0)).c_str());
}

void requireSolverContext() {
  Z3_config config = Z3_mk_config();
  Z3_context probe = Z3_mk_context_rc(config);
  Z3_del_config(config);
  if (!probe)
    throw std::bad_alloc();
  Z3_del_context(probe);
}

bool isOutOfMemoryReason(std::string_view reason) {
  for (std::string_view said : {"out of memory", "memory exceeded", "memout", "bad_alloc"})
    if (reason.find(said) != std::string_view::npos)
      return true;
  return false;
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
