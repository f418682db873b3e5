#include "verifier/SolverBudget.h"

#include "ir/Budget.h"

#include <algorithm>
#include <atomic>
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
  // The processor time left bounds a query's work, not its wall time: on a
  // loaded machine a query takes several times its processor time in wall
  // time (docs/robustness.md), so it may run ten times the processor time
  // left, within the wall time left. (Cutting it at the processor time left
  // made the grouped GEMM's race on C undecided under load.)
  int64_t cpu = budget->remainingCpuMs(), wall = budget->remainingWallMs();
  int64_t left = cpu < 0 ? wall : wall < 0 ? cpu * 10 : std::min(cpu * 10, wall);
  if (left < 0)
    return wantedMs;
  return unsigned(std::clamp<int64_t>(left, 1, wantedMs));
}

namespace {
// The cap last given to setSolverMemoryLimit, in MiB (0: none).
std::atomic<int64_t> memoryLimitMb{0};
} // namespace

void setSolverMemoryLimit(int64_t megabytes) {
  memoryLimitMb = std::max<int64_t>(megabytes, 0);
  z3::set_param("memory_max_size", std::to_string(memoryLimitMb.load()).c_str());
}

void requireSolverContext() {
  // Creating a context to try costs milliseconds; without a cap, or well
  // below it (a context takes 17 MB of Z3 4.8.12's count), there is nothing
  // to try.
  int64_t limitMb = memoryLimitMb.load();
  if (limitMb == 0 ||
      int64_t(Z3_get_estimated_alloc_size()) + (int64_t{24} << 20) < (limitMb << 20))
    return;
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
