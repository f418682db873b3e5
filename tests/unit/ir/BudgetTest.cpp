// The command budgets (ir/Budget.h): processor time and the wall-time
// backstop, the first exceedance and the stage it names, and the active
// budget's scope.
#include "ir/Budget.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <thread>

using namespace tilescope;

// The sanitized build counts time limits this many times over (ir/Budget.cpp).
#ifndef TILESCOPE_BUDGET_TIME_SLACK
#define TILESCOPE_BUDGET_TIME_SLACK 1
#endif
constexpr int64_t kSlack = TILESCOPE_BUDGET_TIME_SLACK;

TEST_CASE("budget: without a timeout nothing expires") {
  Budget b;
  CHECK(b.remainingMs() == -1);
  CHECK_FALSE(b.expired());
  CHECK(b.exceeded() == BudgetKind::None);
}

namespace {
// Spends about `ms` of this thread's processor time.
void spin(int64_t ms) {
  int64_t until = threadCpuNs() + ms * 1'000'000;
  volatile uint64_t sink = 0;
  while (threadCpuNs() < until)
    for (int i = 0; i < 1000; ++i)
      sink = sink + uint64_t(i);
}
} // namespace

TEST_CASE("budget: spent processor time is recorded once, with the stage") {
  Budget b(BudgetLimits{/*timeoutMs=*/5, 0, 0});
  b.setStage("the race proofs of kernel k (f.tile:1:1)");
  spin(10 * kSlack);
  CHECK(b.remainingMs() == 0);
  CHECK(b.expired());
  CHECK(b.exceeded() == BudgetKind::CpuTime);
  CHECK(b.message() ==
        "CPU time of 5 ms (--timeout-ms) ran out during the race proofs of kernel k (f.tile:1:1)");
  // Later exceedances do not replace the first.
  b.exceed(BudgetKind::Steps, "in CTA (0, 0, 0)");
  CHECK(b.exceeded() == BudgetKind::CpuTime);
}

TEST_CASE("budget: waiting spends no processor time, so a loaded machine does not expire it") {
  Budget b(BudgetLimits{/*timeoutMs=*/50, 0, 0});
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  CHECK_FALSE(b.expired());
  CHECK(b.remainingMs() > 0);
}

TEST_CASE("budget: the wall-time backstop expires while waiting") {
  Budget b(BudgetLimits{/*timeoutMs=*/60000, 0, 0, /*wallTimeoutMs=*/1});
  std::this_thread::sleep_for(std::chrono::milliseconds(5 * kSlack));
  CHECK(b.remainingMs() == 0);
  CHECK(b.expired());
  CHECK(b.exceeded() == BudgetKind::WallTime);
  CHECK(b.message() == "wall time of 1 ms (--wall-timeout-ms) ran out");
}

TEST_CASE("budget: the largest limits are no limit, not an overflow") {
  // ms * 10^6 overflowed for limits past 2^63 ns (UBSan), and the wrapped
  // negative limit ran out at once: `--timeout-ms 9223372036854775807` ended
  // every run as `budget`.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  for (BudgetLimits limits :
       {BudgetLimits{kMax, 0, 0, 0}, BudgetLimits{0, 0, 0, kMax}, BudgetLimits{kMax, 0, 0, kMax},
        BudgetLimits{int64_t{1} << 50, 0, 0, 0}}) {
    Budget b(limits);
    spin(2);
    CHECK_FALSE(b.expired());
    CHECK(b.exceeded() == BudgetKind::None);
    CHECK(b.remainingMs() > int64_t{1} << 40);
  }
}

TEST_CASE("budget: restart gives a new window and forgets the exceedance") {
  Budget b(BudgetLimits{/*timeoutMs=*/60000, 0, int64_t{64} << 20});
  b.exceed(BudgetKind::Memory, "(an allocation failed)");
  CHECK(b.message() == "memory budget of 64 MiB (--max-memory-mb) ran out (an allocation failed)");
  b.restart();
  CHECK(b.exceeded() == BudgetKind::None);
  CHECK(b.message().empty());
  CHECK(b.remainingMs() > 1000);
  CHECK_FALSE(b.expired());
}

TEST_CASE("budget: restart leaves the command's totals running") {
  BudgetLimits limits;
  limits.timeoutMs = 60000;
  limits.totalTimeoutMs = 30;
  Budget b(limits);
  spin(10 * kSlack); // the sanitized build counts every time limit kSlack times over
  b.restart();
  CHECK_FALSE(b.expired());
  CHECK(b.remainingCpuMs() <= 20 * kSlack);
  spin(40 * kSlack);
  CHECK(b.expired());
  CHECK(b.exceeded() == BudgetKind::CpuTime);
  CHECK(b.exceededTotal());
  CHECK(b.message() == "total CPU time of 30 ms (--total-timeout-ms) ran out");
  b.restart(); // a new window, but the total is spent
  CHECK_FALSE(b.exceededTotal());
  CHECK(b.remainingCpuMs() == 0);
  CHECK(b.expired());
  CHECK(b.exceededTotal());

  // The window that runs out first is the one named.
  BudgetLimits window;
  window.timeoutMs = 20;
  window.totalTimeoutMs = 60000;
  Budget w(window);
  spin(30 * kSlack);
  CHECK(w.expired());
  CHECK_FALSE(w.exceededTotal());
  CHECK(w.message() == "CPU time of 20 ms (--timeout-ms) ran out");
}

TEST_CASE("budget: the active budget is scoped") {
  CHECK(activeBudget() == nullptr);
  Budget outer, inner;
  {
    ActiveBudget a(outer);
    CHECK(activeBudget() == &outer);
    {
      ActiveBudget b(inner);
      CHECK(activeBudget() == &inner);
    }
    CHECK(activeBudget() == &outer);
  }
  CHECK(activeBudget() == nullptr);
}
