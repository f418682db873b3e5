#include "ir/Budget.h"

namespace tilescope {

namespace {
Budget *active = nullptr;
} // namespace

Budget::Budget(BudgetLimits limits) : limits_(limits) {
  restart();
}

void Budget::restart() {
  exceeded_ = BudgetKind::None;
  message_.clear();
  deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(limits_.timeoutMs);
}

int64_t Budget::remainingMs() const {
  if (limits_.timeoutMs <= 0)
    return -1;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline_ - std::chrono::steady_clock::now())
                  .count();
  return left > 0 ? int64_t(left) : 0;
}

bool Budget::expired() {
  if (exceeded_ == BudgetKind::WallTime)
    return true;
  if (limits_.timeoutMs <= 0 || std::chrono::steady_clock::now() < deadline_)
    return false;
  exceed(BudgetKind::WallTime);
  return true;
}

void Budget::exceed(BudgetKind kind, std::string detail) {
  if (exceeded_ != BudgetKind::None)
    return;
  exceeded_ = kind;
  std::string what;
  switch (kind) {
  case BudgetKind::WallTime:
    what = "wall time of " + std::to_string(limits_.timeoutMs) + " ms";
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
  case BudgetKind::WallTime:
    return "--timeout-ms";
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
