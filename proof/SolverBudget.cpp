#include "proof/SolverBudget.h"

#include "ir/Budget.h"
#include "proof/SharedContext.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <new>
#include <string>

namespace tilescope {

unsigned solverShare() {
  static const unsigned share = [] {
    const char *text = std::getenv("TILESCOPE_SOLVER_SHARE");
    if (!text || !*text)
      return 1u;
    char *end = nullptr;
    long long v = std::strtoll(text, &end, 10);
    return *end == 0 && v >= 1 && v <= 1'000'000 ? unsigned(v) : 1u;
  }();
  return share;
}

void setSolverBudget(z3::params &params, unsigned budgetMs) {
  constexpr unsigned kMax = std::numeric_limits<unsigned>::max();
  unsigned units = budgetMs > kMax / kZ3UnitsPerMs ? kMax : budgetMs * kZ3UnitsPerMs;
  units /= solverShare();
  params.set("rlimit", std::max(units, 1u));
  params.set("timeout", solverBackstopMs());
}

unsigned solverBackstopMs() {
  constexpr unsigned kNone = std::numeric_limits<unsigned>::max();
  Budget *budget = activeBudget();
  int64_t left = budget ? budget->remainingWallMs() : -1;
  if (left < 0)
    return kNone;
  // The budget's clock may run faster than real time (TILESCOPE_SLOW_CLOCK);
  // Z3 reads the real one.
  return unsigned(std::clamp<int64_t>(left / wallClockScale(), 1, kNone - 1));
}

bool isDeadlineReason(std::string_view reason) {
  if (reason.find("timeout") != std::string_view::npos)
    return true;
  if (reason.find("canceled") == std::string_view::npos)
    return false;
  // Z3 also says "canceled" when a query used up its rlimit (a tiny one,
  // TILESCOPE_SOLVER_SHARE=1000): that is an undecided query, not the
  // deadline. The backstop is set to the wall time left (floored to real
  // milliseconds), so when it fired, less than two of the budget's
  // milliseconds per real one are left.
  Budget *budget = activeBudget();
  int64_t left = budget ? budget->remainingWallMs() : -1;
  return left >= 0 && left <= 2 * wallClockScale();
}

bool noteSolverGaveUp(std::string_view reason) {
  Budget *budget = activeBudget();
  if (isOutOfMemoryReason(reason)) {
    if (budget)
      budget->exceed(BudgetKind::Memory, "(Z3 reached its memory cap)");
    return true;
  }
  if (!isDeadlineReason(reason))
    return false;
  // The timeout is the wall time left, so the budget has run out (to the
  // millisecond Z3 rounds to).
  if (budget && !budget->expired())
    budget->exceed(BudgetKind::WallTime, "(a Z3 query reached the deadline)");
  return true;
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
  z3::solver s = detail::oneShotPipeline(ctx).mk_solver();
  z3::params p(ctx);
  setSolverBudget(p, budgetMs);
  s.set(p);
  return s;
}

} // namespace tilescope
