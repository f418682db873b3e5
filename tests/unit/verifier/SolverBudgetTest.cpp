// How a Z3 query that gave up is classified (verifier/SolverBudget.h): the
// command's deadlines stopping it (proof/QueryDeadline.h) are the budget
// (exit 4); its own resource limit running out is an undecided question
// (unknown, exit 3), even where Z3 words that as "canceled", as its tactics
// do under a tiny rlimit.
#include "proof/SolverBudget.h"
#include "ir/Budget.h"
#include "proof/QueryDeadline.h"

#include <doctest/doctest.h>
#include <z3++.h>

#include <chrono>
#include <string>
#include <thread>

using namespace tilescope;

// The sanitized build counts time limits this many times over (ir/Budget.cpp).
#ifndef TILESCOPE_BUDGET_TIME_SLACK
#define TILESCOPE_BUDGET_TIME_SLACK 1
#endif
constexpr double kSlack = TILESCOPE_BUDGET_TIME_SLACK;

namespace {

// A question Z3's one-shot pipeline cannot settle in a handful of resource
// units: a non-linear equation over bounded integers.
void addHardQuestion(z3::context &ctx, z3::solver &s) {
  z3::expr x = ctx.int_const("x"), y = ctx.int_const("y"), z = ctx.int_const("z");
  s.add(x > 1 && y > 1 && z > 1 && x < 100000 && y < 100000 && z < 100000);
  s.add(x * x * x + y * y * y == z * z * z + 7 * x * y * z + 13);
}

std::string giveUpReason(unsigned budgetMs) {
  z3::context ctx;
  z3::solver s = oneShotSolver(ctx, budgetMs);
  addHardQuestion(ctx, s);
  z3::check_result r = checkWithinBudget(s);
  return r == z3::unknown ? reasonUnknown(s) : std::string("decided");
}

} // namespace

TEST_CASE("solver budget: a query out of its rlimit is unknown, not the deadline") {
  // A budget with an hour of wall time left: nothing can have hit the deadline.
  Budget budget(BudgetLimits{0, 0, 0, /*wallTimeoutMs=*/3'600'000});
  ActiveBudget active(budget);
  std::string reason = giveUpReason(0); // one resource unit
  INFO("reason: " << reason);
  REQUIRE(reason != "decided");
  CHECK_FALSE(isDeadlineReason(reason));
  CHECK_FALSE(noteSolverGaveUp(reason));
  CHECK(budget.exceeded() == BudgetKind::None);
  // The words Z3 uses for either cause say nothing by themselves.
  for (const char *said : {"canceled", "timeout", "max. resource limit exceeded"})
    CHECK_FALSE(isDeadlineReason(said));
  CHECK(budget.exceeded() == BudgetKind::None);
}

TEST_CASE("solver budget: without a wall-time limit no query is stopped by a deadline") {
  CHECK_FALSE(isDeadlineReason("canceled"));
  Budget budget(BudgetLimits{/*timeoutMs=*/100000, 0, 0, 0});
  ActiveBudget active(budget);
  CHECK_FALSE(isDeadlineReason("canceled"));
  CHECK_FALSE(noteSolverGaveUp("timeout"));
  CHECK(budget.exceeded() == BudgetKind::None);
}

TEST_CASE("solver budget: a query cancelled once the wall time has run out is the budget") {
  Budget budget(BudgetLimits{0, 0, 0, /*wallTimeoutMs=*/2});
  ActiveBudget active(budget);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(isDeadlineReason("canceled"));
  CHECK(isDeadlineReason("timeout"));
  // An rlimit give-up is worded differently; past the deadline it is still
  // not the deadline's doing.
  CHECK_FALSE(isDeadlineReason("max. resource limit exceeded"));
  CHECK(noteSolverGaveUp("canceled"));
  CHECK(budget.exceeded() == BudgetKind::WallTime);
}

TEST_CASE("solver budget: a real query stopped by the deadline is the budget") {
  // 30 ms of wall time and a generous rlimit: the watcher of
  // checkWithinBudget stops the query at the deadline.
  Budget budget(BudgetLimits{0, 0, 0, /*wallTimeoutMs=*/30});
  ActiveBudget active(budget);
  std::string reason = giveUpReason(3'600'000);
  INFO("reason: " << reason);
  REQUIRE(reason != "decided");
  CHECK(isDeadlineReason(reason));
  CHECK(noteSolverGaveUp(reason));
  CHECK(budget.exceeded() == BudgetKind::WallTime);
}

TEST_CASE("solver budget: Z3's solvers run no strategy that a wall clock cuts short") {
  // Z3's QF_NIA and QF_LIA strategies bound steps by wall-clock time
  // (try_for), which made answers depend on the load (SolverBudget.cpp):
  // every default solver goes to the incremental SMT core instead.
  Z3_string value = nullptr;
  REQUIRE(Z3_global_param_get("combined_solver.ignore_solver1", &value));
  CHECK(std::string(value) == "true");
  // A query of that logic is still decided on its rlimit alone.
  z3::context ctx;
  z3::solver s(ctx);
  z3::params p(ctx);
  setSolverBudget(p, 1000);
  s.set(p);
  z3::expr x = ctx.int_const("x"), y = ctx.int_const("y");
  s.add(x * y == 12 && x > 1 && y > 1 && x < y);
  CHECK(s.check() == z3::sat);
}

TEST_CASE("solver budget: no query gets Z3's timeout, whose timer threads can deadlock") {
  // Z3 4.8.12 hands a fired timer's thread back to its pool while the
  // cancelled query still holds that timer's mutex (QueryDeadline.h).
  z3::context ctx;
  z3::params p(ctx);
  Budget budget(BudgetLimits{/*timeoutMs=*/1000, 0, 0, /*wallTimeoutMs=*/1000});
  ActiveBudget active(budget);
  setSolverBudget(p, 1000);
  std::string text = Z3_params_to_string(ctx, p);
  INFO(text);
  CHECK(text.find("rlimit") != std::string::npos);
  CHECK(text.find("timeout") == std::string::npos);
}

TEST_CASE("solver budget: a query in flight stops when the processor time runs out") {
  // 300 ms of processor time, no wall-time limit and an rlimit worth an hour:
  // only the processor-time deadline can stop it.
  Budget budget(BudgetLimits{/*timeoutMs=*/300, 0, 0, 0});
  ActiveBudget active(budget);
  int64_t started = threadCpuNs();
  std::string reason = giveUpReason(3'600'000);
  double seconds = double(threadCpuNs() - started) / 1e9;
  INFO("reason: " << reason << ", " << seconds << " s of CPU");
  REQUIRE(reason != "decided");
  CHECK(seconds < 2.0 * kSlack);
  CHECK(budget.exceeded() == BudgetKind::CpuTime);
  CHECK(isDeadlineReason(reason));
  CHECK(noteSolverGaveUp(reason));
}

TEST_CASE("solver budget: a solver stopped at the deadline answers its next query") {
  // Z3_solver_interrupt's cancellation ends with the check it stopped: the
  // same solver (and its context) decide the next question under a new budget.
  z3::context ctx;
  z3::solver s = oneShotSolver(ctx, 3'600'000);
  addHardQuestion(ctx, s);
  {
    Budget budget(BudgetLimits{0, 0, 0, /*wallTimeoutMs=*/30});
    ActiveBudget active(budget);
    REQUIRE(checkWithinBudget(s) == z3::unknown);
    CHECK(budget.exceeded() == BudgetKind::WallTime);
  }
  Budget fresh(BudgetLimits{/*timeoutMs=*/60'000, 0, 0, /*wallTimeoutMs=*/600'000});
  ActiveBudget active(fresh);
  z3::solver t = oneShotSolver(ctx, 1000);
  z3::expr a = ctx.int_const("a");
  t.add(a * a == 49 && a > 0);
  CHECK(checkWithinBudget(t) == z3::sat);
  s.reset();
  s.add(a > 2 && a < 4);
  CHECK(checkWithinBudget(s) == z3::sat);
  CHECK(fresh.exceeded() == BudgetKind::None);
}

TEST_CASE("solver budget: an optimizer in its own context stops at the deadline") {
  z3::context ctx;
  z3::optimize opt(ctx);
  z3::expr x = ctx.int_const("x"), y = ctx.int_const("y"), z = ctx.int_const("z");
  opt.add(x > 1 && y > 1 && z > 1 && x < 100000 && y < 100000 && z < 100000);
  opt.add(x * x * x + y * y * y == z * z * z + 7 * x * y * z + 13);
  opt.minimize(x + y + z);
  Budget budget(BudgetLimits{0, 0, 0, /*wallTimeoutMs=*/50});
  ActiveBudget active(budget);
  auto started = std::chrono::steady_clock::now();
  CHECK(checkWithinBudget(opt) == z3::unknown);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
  CHECK(budget.exceeded() == BudgetKind::WallTime);
}
