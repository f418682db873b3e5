#include "ir/Budget.h"
#include "ir/TimeSlack.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>

#include <time.h>

namespace tilescope {

// The sanitized test build (preset `asan`, CMakeLists.txt) runs tilescope's
// own code several times slower than a release build, while Z3 (a system
// library) is not instrumented. It counts each time limit that many times
// over, so that a run there has the processor and wall time a release build
// has: the limits it reports (messages, JSON) are the ones given, and step,
// memory and Z3's deterministic limits are unchanged. 1 in every other build,
// the fuzz targets included (fuzz/CheckKernel.cpp has its own slack).
#ifndef TILESCOPE_BUDGET_TIME_SLACK
#define TILESCOPE_BUDGET_TIME_SLACK 1
#endif

namespace {
// Per thread: the Python module runs rewards on several threads at once.
thread_local Budget *active = nullptr;

constexpr int64_t kTimeSlack = TILESCOPE_BUDGET_TIME_SLACK;
static_assert(kTimeSlack >= 1);

// A time limit in nanoseconds of the budget's clocks, the slack included.
// Limits past about 73 years count as that long: --timeout-ms
// 9223372036854775807 overflowed `ms * 10^6` (undefined behaviour, found by
// UBSan), and the wrapped negative limit had every such run end at once as
// `budget`. The quarter of the range left keeps sums with a clock reading
// and the query watcher's arithmetic (proof/QueryDeadline.cpp) in range too.
constexpr int64_t kMaxLimitMs = std::numeric_limits<int64_t>::max() / 4 / 1'000'000 / kTimeSlack;

} // namespace

int64_t budgetLimitNs(int64_t ms) {
  return std::min(ms, kMaxLimitMs) * kTimeSlack * 1'000'000;
}

Budget::Budget(BudgetLimits limits) : limits_(limits) {
  restart();
  totalWallDeadlineNs_ = wallNowNs() + budgetLimitNs(limits_.totalWallTimeoutMs);
  totalCpuStartNs_ = threadCpuNs();
}

int64_t threadCpuNs() {
  timespec t{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0)
    return 0;
  return int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

int64_t wallClockScale() {
  static const int64_t scale = [] {
    const char *text = std::getenv("TILESCOPE_SLOW_CLOCK");
    if (!text || !*text)
      return int64_t{1};
    char *end = nullptr;
    long long v = std::strtoll(text, &end, 10);
    return *end == 0 && v >= 1 && v <= 1'000'000 ? int64_t(v) : int64_t{1};
  }();
  return scale;
}

int64_t wallNowNs() {
  // Counted from the first reading in the process, and saturated: scaled by
  // TILESCOPE_SLOW_CLOCK = 10^6, the steady clock's time since boot passed
  // 2^63 ns once the machine had been up 2.6 hours (undefined behaviour,
  // found by UBSan in tests/lit/budget/slow-clock-library.test).
  static const auto epoch = std::chrono::steady_clock::now();
  int64_t real =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - epoch)
          .count();
  int64_t scaled = 0;
  if (__builtin_mul_overflow(real, wallClockScale(), &scaled))
    return std::numeric_limits<int64_t>::max() / 2;
  return std::min(scaled, std::numeric_limits<int64_t>::max() / 2);
}

void Budget::restart() {
  exceeded_ = BudgetKind::None;
  exceededTotal_ = false;
  message_.clear();
  wallDeadlineNs_ = wallNowNs() + budgetLimitNs(limits_.wallTimeoutMs);
  cpuStartNs_ = threadCpuNs();
}

namespace {
// Milliseconds left of a limit of `limitMs` (0: none, giving -1) of which
// `usedNs` are spent, at least 0.
int64_t leftMs(int64_t limitMs, int64_t usedNs) {
  if (limitMs <= 0)
    return -1;
  return std::max<int64_t>(budgetLimitNs(limitMs) / 1'000'000 - usedNs / 1'000'000, 0);
}

// The lesser of two remainders, -1 standing for none.
int64_t lesser(int64_t a, int64_t b) {
  return a < 0 ? b : b < 0 ? a : std::min(a, b);
}
} // namespace

int64_t Budget::remainingCpuMs() const {
  int64_t now = threadCpuNs();
  return lesser(leftMs(limits_.timeoutMs, now - cpuStartNs_),
                leftMs(limits_.totalTimeoutMs, now - totalCpuStartNs_));
}

int64_t Budget::remainingWallMs() const {
  auto left = [](int64_t limitMs, int64_t deadlineNs, int64_t nowNs) -> int64_t {
    return limitMs <= 0 ? -1 : std::max<int64_t>((deadlineNs - nowNs) / 1'000'000, 0);
  };
  int64_t now = wallNowNs();
  return lesser(left(limits_.wallTimeoutMs, wallDeadlineNs_, now),
                left(limits_.totalWallTimeoutMs, totalWallDeadlineNs_, now));
}

int64_t Budget::remainingMs() const {
  return lesser(remainingCpuMs(), remainingWallMs());
}

bool Budget::expired() {
  if (exceeded_ == BudgetKind::WallTime || exceeded_ == BudgetKind::CpuTime)
    return true;
  if (limits_.timeoutMs > 0 && threadCpuNs() - cpuStartNs_ >= budgetLimitNs(limits_.timeoutMs)) {
    exceed(BudgetKind::CpuTime);
    return true;
  }
  if (limits_.wallTimeoutMs > 0 && wallNowNs() >= wallDeadlineNs_) {
    exceed(BudgetKind::WallTime);
    return true;
  }
  if (limits_.totalTimeoutMs > 0 &&
      threadCpuNs() - totalCpuStartNs_ >= budgetLimitNs(limits_.totalTimeoutMs)) {
    exceed(BudgetKind::CpuTime);
    return true;
  }
  if (limits_.totalWallTimeoutMs > 0 && wallNowNs() >= totalWallDeadlineNs_) {
    exceed(BudgetKind::WallTime);
    return true;
  }
  return false;
}

void Budget::exceed(BudgetKind kind, std::string detail) {
  exceed(kind, std::move(detail), threadCpuNs());
}

void Budget::exceed(BudgetKind kind, std::string detail, int64_t cpuNowNs) {
  if (exceeded_ != BudgetKind::None)
    return;
  exceeded_ = kind;
  // The total, when it is what ran out and the window did not.
  if (kind == BudgetKind::CpuTime) {
    int64_t now = cpuNowNs;
    exceededTotal_ = leftMs(limits_.totalTimeoutMs, now - totalCpuStartNs_) == 0 &&
                     leftMs(limits_.timeoutMs, now - cpuStartNs_) != 0;
  } else if (kind == BudgetKind::WallTime) {
    int64_t now = wallNowNs();
    exceededTotal_ = limits_.totalWallTimeoutMs > 0 && now >= totalWallDeadlineNs_ &&
                     (limits_.wallTimeoutMs <= 0 || now < wallDeadlineNs_);
  }
  std::string what;
  switch (kind) {
  case BudgetKind::CpuTime:
    what = exceededTotal_ ? "total CPU time of " + std::to_string(limits_.totalTimeoutMs) + " ms"
                          : "CPU time of " + std::to_string(limits_.timeoutMs) + " ms";
    break;
  case BudgetKind::WallTime:
    what = exceededTotal_
               ? "total wall time of " + std::to_string(limits_.totalWallTimeoutMs) + " ms"
               : "wall time of " + std::to_string(limits_.wallTimeoutMs) + " ms";
    break;
  case BudgetKind::Steps:
    what = "step budget of " + std::to_string(limits_.maxSteps) + " warp statements";
    break;
  case BudgetKind::Memory:
    what = "memory budget of " + std::to_string(limits_.maxMemoryBytes >> 20) + " MiB";
    break;
  case BudgetKind::None:
    return;
  }
  message_ = what + " (" + budgetOption(kind, exceededTotal_) + ") ran out";
  if (!stage_.empty())
    message_ += " during " + stage_;
  if (!detail.empty())
    message_ += " " + detail;
}

void Budget::exceedWithMessage(BudgetKind kind, std::string message) {
  if (exceeded_ != BudgetKind::None || kind == BudgetKind::None)
    return;
  exceeded_ = kind;
  message_ = std::move(message);
}

Budget *activeBudget() {
  return active;
}

ActiveBudget::ActiveBudget(Budget &budget) : previous_(active) {
  active = &budget;
}

ActiveBudget::~ActiveBudget() {
  active = previous_;
}

const char *budgetOption(BudgetKind kind, bool total) {
  switch (kind) {
  case BudgetKind::CpuTime:
    return total ? "--total-timeout-ms" : "--timeout-ms";
  case BudgetKind::WallTime:
    return total ? "--total-wall-timeout-ms" : "--wall-timeout-ms";
  case BudgetKind::Steps:
    return "--max-steps";
  case BudgetKind::Memory:
    return "--max-memory-mb";
  case BudgetKind::None:
    break;
  }
  return "";
}

} // namespace tilescope
