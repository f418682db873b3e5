#include "proof/SolverBudget.h"

#include "ir/Budget.h"
#include "proof/SharedContext.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <new>
#include <string>

#if defined(__SANITIZE_ADDRESS__)
#define TILESCOPE_SOLVER_BUDGET_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TILESCOPE_SOLVER_BUDGET_ASAN 1
#endif
#endif
#ifdef TILESCOPE_SOLVER_BUDGET_ASAN
#include <sanitizer/lsan_interface.h>
#endif

namespace tilescope {

namespace {
// Z3's default solver answers a first, non-incremental check with the
// strategy of the query's logic, and those strategies bound some of their
// steps by wall-clock time: for QF_NIA an SMT attempt of 2 s and an nlsat
// attempt of 3 s (try_for in Z3's qfnia_tactic), for QF_LIA several of 2 to
// 15 s. How far each got before its clock ran out then decided how much of
// the query's rlimit was left for the steps after it, so an answer depended
// on the machine's load: tests/lit/bugs/persistent-tail-extra-tile.tile's
// write coverage was proved on a loaded box (both attempts cut short, the
// last SMT step proving it) and gave up on its rlimit on an idle CI clone
// (docs/robustness.md). Every such solver goes straight to Z3's incremental
// SMT core instead, which no clock stops (only the rlimit and the budget's
// wall-time backstop); set before any solver is made.
[[maybe_unused]] const bool kNoWallClockStrategies = [] {
  z3::set_param("combined_solver.ignore_solver1", true);
  return true;
}();
} // namespace

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
  // No "timeout": Z3 4.8.12's timer threads can deadlock the process
  // (proof/QueryDeadline.h, which stops queries at the budget's deadlines).
}

// The words alone do not tell whether the deadline stopped a query: Z3 says
// "canceled" or "interrupted" when checkWithinBudget's watcher stops it, but
// its tactics also say "canceled" when the query's own rlimit runs out (a
// hard or starved query, TILESCOPE_SOLVER_SHARE), which is an undecided
// question (unknown), not the budget. So it is the deadline only when the
// reason is one of those words and the active budget's processor time or
// wall time has run out now: the watcher stops a query only then, and
// records the budget as exceeded when it does.
bool isDeadlineReason(std::string_view reason) {
  bool saysStopped = false;
  for (std::string_view said : {"timeout", "canceled", "interrupted"})
    saysStopped = saysStopped || reason.find(said) != std::string_view::npos;
  Budget *budget = activeBudget();
  if (!saysStopped || !budget)
    return false;
  if (budget->exceeded() == BudgetKind::CpuTime || budget->exceeded() == BudgetKind::WallTime)
    return true;
  int64_t wallLeft = budget->remainingWallMs();
  return budget->remainingCpuMs() == 0 || (wallLeft >= 0 && wallLeft < 2 * wallClockScale());
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
  // The budget has run out (to the millisecond its figures are rounded to).
  if (budget && !budget->expired())
    budget->exceed(budget->remainingCpuMs() == 0 ? BudgetKind::CpuTime : BudgetKind::WallTime,
                   "(a Z3 query reached the deadline)");
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
  Z3_context probe = nullptr;
  {
#ifdef TILESCOPE_SOLVER_BUDGET_ASAN
    // Z3 4.8.12 does not free a context whose construction ran out of the
    // memory cap (null; about 8 MB stay allocated, once per run that exhausts
    // --max-memory-mb, tests/lit/budget/check-z3-memory.test). That is Z3's,
    // not ours to free: LeakSanitizer ignores what this thread allocates here,
    // and only here (docs/robustness.md, "Sanitizers").
    __lsan::ScopedDisabler z3LeaksOnFailure;
#endif
    probe = Z3_mk_context_rc(config);
  }
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

z3::solver incrementalSolver(z3::context &ctx) {
  return z3::solver(ctx, z3::solver::simple());
}

z3::solver oneShotSolver(z3::context &ctx, unsigned budgetMs) {
  z3::solver s = detail::oneShotPipeline(ctx).mk_solver();
  z3::params p(ctx);
  setSolverBudget(p, budgetMs);
  s.set(p);
  return s;
}

} // namespace tilescope
