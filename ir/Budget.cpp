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
  message_.clear();
  wallDeadlineNs_ = wallNowNs() + budgetLimitNs(limits_.wallTimeoutMs);
  cpuStartNs_ = threadCpuNs();
}

int64_t Budget::remainingCpuMs() const {
  if (limits_.timeoutMs <= 0)
    return -1;
  int64_t usedMs = (threadCpuNs() - cpuStartNs_) / 1'000'000;
  return std::max<int64_t>(budgetLimitNs(limits_.timeoutMs) / 1'000'000 - usedMs, 0);
}

int64_t Budget::remainingWallMs() const {
  if (limits_.wallTimeoutMs <= 0)
    return -1;
  return std::max<int64_t>((wallDeadlineNs_ - wallNowNs()) / 1'000'000, 0);
}

int64_t Budget::remainingMs() const {
  int64_t cpu = remainingCpuMs(), wall = remainingWallMs();
  return cpu < 0 ? wall : wall < 0 ? cpu : std::min(cpu, wall);
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
  return false;
}

void Budget::exceed(BudgetKind kind, std::string detail) {
  if (exceeded_ != BudgetKind::None)
    return;
  exceeded_ = kind;
  std::string what;
  switch (kind) {
  case BudgetKind::CpuTime:
    what = "CPU time of " + std::to_string(limits_.timeoutMs) + " ms";
    break;
  case BudgetKind::WallTime:
    what = "wall time of " + std::to_string(limits_.wallTimeoutMs) + " ms";
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
  message_ = what + " (" + budgetOption(kind) + ") ran out";
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

const char *budgetOption(BudgetKind kind) {
  switch (kind) {
  case BudgetKind::CpuTime:
    return "--timeout-ms";
  case BudgetKind::WallTime:
    return "--wall-timeout-ms";
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
