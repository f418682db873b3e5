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
//  - each Z3 query gives up on its own deterministic resource limit (Z3's
//    rlimit); the remaining wall time is only its backstop, and a query
//    stopped by it ends the run as `budget` (verifier/SolverBudget.h);
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
  // The caps of the whole command, which restart() leaves running (`check`
  // over the points of a space or the library's files restarts the two
  // above for each): processor time and wall time since the Budget was made.
  int64_t totalTimeoutMs = 0;     // 0: none
  int64_t totalWallTimeoutMs = 0; // 0: none
};

class Budget {
public:
  explicit Budget(BudgetLimits limits = {});

  const BudgetLimits &limits() const { return limits_; }

  // Starts the time windows again and forgets an exceedance (the library
  // check gives each file its own budget, `check` of a space each point);
  // the totals keep running: once one has run out, the next poll says so.
  void restart();

  // Milliseconds left of the processor time or the wall time, whichever is
  // less (at least 0), or -1 without either limit.
  int64_t remainingMs() const;
  // Each clock's: milliseconds left (at least 0) of its window or of its
  // total, whichever is less, or -1 without either.
  int64_t remainingCpuMs() const;
  int64_t remainingWallMs() const;

  // Whether either time limit passed; the first time one is seen passed,
  // records a CpuTime or WallTime exceedance at the current stage.
  bool expired();

  // Records that `kind` was exceeded, with `detail` (e.g. "in CTA (0, 0, 0)")
  // and the current stage; only the first exceedance is kept.
  void exceed(BudgetKind kind, std::string detail = {});
  // The same from another thread (proof/QueryDeadline.cpp's watcher):
  // `cpuNowNs` is the processor time of the thread the budget counts.
  void exceed(BudgetKind kind, std::string detail, int64_t cpuNowNs);
  // The same with the whole message given (a cap other than the limits').
  void exceedWithMessage(BudgetKind kind, std::string message);

  BudgetKind exceeded() const { return exceeded_; }
  // Whether the time that ran out (CpuTime or WallTime) was the whole
  // command's total rather than the window restart() starts.
  bool exceededTotal() const { return exceededTotal_; }
  // "wall time of 2000 ms (--timeout-ms) ran out during the race check of
  // kernel gemm (file.tile:3:1)".
  const std::string &message() const { return message_; }

  // What the command is doing now, for the report: "the barrier proofs of
  // kernel gemm (file.tile:3:1)".
  void setStage(std::string stage) { stage_ = std::move(stage); }
  const std::string &stage() const { return stage_; }

private:
  BudgetLimits limits_;
  int64_t wallDeadlineNs_ = 0;
  int64_t cpuStartNs_ = 0;
  int64_t totalWallDeadlineNs_ = 0;
  int64_t totalCpuStartNs_ = 0;
  BudgetKind exceeded_ = BudgetKind::None;
  bool exceededTotal_ = false;
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

// How many times faster than real time the wall clock of the budgets runs:
// the environment variable TILESCOPE_SLOW_CLOCK (a whole number, 1 when unset
// or invalid), read once. A test sets it to emulate a loaded machine (every
// wall-time span looks that many times longer) and expects the same verdicts:
// no decision but the wall-time backstop may read the wall clock.
int64_t wallClockScale();

// The wall clock of the budgets (steady, scaled by wallClockScale()), in ns.
int64_t wallNowNs();

// The option that raises each budget, for messages: "--timeout-ms"
// ("--total-timeout-ms" for the whole command's total).
const char *budgetOption(BudgetKind kind, bool total = false);

} // namespace tilescope
