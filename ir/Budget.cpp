#include "ir/Budget.h"

#include <algorithm>

#include <time.h>

namespace tilescope {

namespace {
// Per thread: the Python module runs rewards on several threads at once.
thread_local Budget *active = nullptr;
} // namespace

Budget::Budget(BudgetLimits limits) : limits_(limits) {
  restart();
}

int64_t threadCpuNs() {
  timespec t{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0)
    return 0;
  return int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

void Budget::restart() {
  exceeded_ = BudgetKind::None;
  message_.clear();
  wallDeadline_ =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(limits_.wallTimeoutMs);
  cpuStartNs_ = threadCpuNs();
}

int64_t Budget::remainingCpuMs() const {
  if (limits_.timeoutMs <= 0)
    return -1;
  int64_t usedMs = (threadCpuNs() - cpuStartNs_) / 1'000'000;
  return std::max<int64_t>(limits_.timeoutMs - usedMs, 0);
}

int64_t Budget::remainingWallMs() const {
  if (limits_.wallTimeoutMs <= 0)
    return -1;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  wallDeadline_ - std::chrono::steady_clock::now())
                  .count();
  return std::max<int64_t>(int64_t(left), 0);
}

int64_t Budget::remainingMs() const {
  int64_t cpu = remainingCpuMs(), wall = remainingWallMs();
  return cpu < 0 ? wall : wall < 0 ? cpu : std::min(cpu, wall);
}

bool Budget::expired() {
  if (exceeded_ == BudgetKind::WallTime || exceeded_ == BudgetKind::CpuTime)
    return true;
  if (limits_.timeoutMs > 0 && threadCpuNs() - cpuStartNs_ >= limits_.timeoutMs * 1'000'000) {
    exceed(BudgetKind::CpuTime);
    return true;
  }
  if (limits_.wallTimeoutMs > 0 && std::chrono::steady_clock::now() >= wallDeadline_) {
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
