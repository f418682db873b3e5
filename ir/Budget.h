// The budgets of one run of a command (`check`, `sim`, `race`): processor
// time, wall time, steps and memory. A candidate kernel from a search must
// never hang the caller or exhaust the machine: exceeding a budget ends the
// run with a clean result ("verdict": "budget", exit status 4) that names the
// budget and the stage where it ran out.
//
// Time is counted twice. The main limit (--timeout-ms) is the processor time
// of the calling thread (CLOCK_THREAD_CPUTIME_ID: user + system), which does
// not grow when other processes load the machine: on the 2-core development
// box under eight concurrent builds the library's slowest check took 0.62 s
// of CPU and 4.5 s of wall time (2026-11-25), so a wall-time limit tight
// enough to mean "a few seconds" made verdicts depend on the load. A wall-time
// limit (--wall-timeout-ms) stays as a backstop against a run that makes no
// progress for the processor to count. The thread's clock, not the process's,
// so that concurrent calls of the Python module each count their own.
//
// A Budget is a start time plus limits; the work it bounds polls it:
//  - Z3 queries take the remaining time as their timeout (verifier/
//    SolverBudget.h reads the active budget);
//  - the exhaustive barrier check polls expired() while it explores;
//  - the simulator counts its warp statements against maxSteps and polls the
//    clocks every few thousand of them.
// The first budget found exceeded is recorded with the stage the command set
// (setStage), so the report says where. expired() reads two clocks (well
// under a microsecond); hot loops call it every few thousand iterations.
//
// The active budget is per thread (a command runs on one; the Python module
// may run checks and rewards on several); the command installs it with
// ActiveBudget for the duration of its run. Code without one (unit tests)
// runs unbounded.
//
// Depends on the standard library only.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace tilescope {

enum class BudgetKind : uint8_t { None, WallTime, Steps, Memory, CpuTime };

struct BudgetLimits {
  int64_t timeoutMs = 0;      // processor time of the thread; 0: none
  int64_t maxSteps = 0;       // simulator warp statements; 0: none
  int64_t maxMemoryBytes = 0; // the process's data (heap) growth; 0: none
  int64_t wallTimeoutMs = 0;  // wall time, the backstop; 0: none
};

class Budget {
public:
  explicit Budget(BudgetLimits limits = {});

  const BudgetLimits &limits() const { return limits_; }

  // Starts the time windows again and forgets an exceedance (the library
  // check gives each file its own budget).
  void restart();

  // Milliseconds left of the processor time or the wall time, whichever is
  // less (at least 0), or -1 without either limit.
  int64_t remainingMs() const;
  // Each limit's own: milliseconds left (at least 0), or -1 without it.
  int64_t remainingCpuMs() const;
  int64_t remainingWallMs() const;

  // Whether either time limit passed; the first time one is seen passed,
  // records a CpuTime or WallTime exceedance at the current stage.
  bool expired();

  // Records that `kind` was exceeded, with `detail` (e.g. "in CTA (0, 0, 0)")
  // and the current stage; only the first exceedance is kept.
  void exceed(BudgetKind kind, std::string detail = {});
  // The same with the whole message given (a cap other than the limits').
  void exceedWithMessage(BudgetKind kind, std::string message);

  BudgetKind exceeded() const { return exceeded_; }
  // "wall time of 2000 ms (--timeout-ms) ran out during the race check of
  // kernel gemm (file.tile:3:1)".
  const std::string &message() const { return message_; }

  // What the command is doing now, for the report: "the barrier proofs of
  // kernel gemm (file.tile:3:1)".
  void setStage(std::string stage) { stage_ = std::move(stage); }
  const std::string &stage() const { return stage_; }

private:
  BudgetLimits limits_;
  std::chrono::steady_clock::time_point wallDeadline_{};
  int64_t cpuStartNs_ = 0;
  BudgetKind exceeded_ = BudgetKind::None;
  std::string message_;
  std::string stage_;
};

// The budget of the running command; null when none is installed.
Budget *activeBudget();

// Installs `budget` as the active budget for its lifetime.
class ActiveBudget {
public:
  explicit ActiveBudget(Budget &budget);
  ~ActiveBudget();
  ActiveBudget(const ActiveBudget &) = delete;
  ActiveBudget &operator=(const ActiveBudget &) = delete;

private:
  Budget *previous_;
};

// Processor time of the calling thread, in nanoseconds.
int64_t threadCpuNs();

// The option that raises each budget, for messages: "--timeout-ms".
const char *budgetOption(BudgetKind kind);

} // namespace tilescope
