// How a Z3 query that gave up is classified (verifier/SolverBudget.h): the
// command's wall-time deadline stopping it is the budget (exit 4); its own
// resource limit running out is an undecided question (unknown, exit 3), even
// where Z3 words that as "canceled", as its tactics do under a tiny rlimit.
#include "proof/SolverBudget.h"
#include "ir/Budget.h"

#include <doctest/doctest.h>
#include <z3++.h>

#include <chrono>
#include <string>
#include <thread>

using namespace tilescope;

namespace {

// A question Z3's one-shot pipeline cannot settle in a handful of resource
// units: a non-linear equation over bounded integers.
std::string giveUpReason(unsigned budgetMs) {
  z3::context ctx;
  z3::solver s = oneShotSolver(ctx, budgetMs);
  z3::expr x = ctx.int_const("x"), y = ctx.int_const("y"), z = ctx.int_const("z");
  s.add(x > 1 && y > 1 && z > 1 && x < 100000 && y < 100000 && z < 100000);
  s.add(x * x * x + y * y * y == z * z * z + 7 * x * y * z + 13);
  z3::check_result r = s.check();
  return r == z3::unknown ? s.reason_unknown() : std::string("decided");
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
  // 30 ms of wall time and a generous rlimit: Z3's timeout (the time left)
  // stops the query.
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
