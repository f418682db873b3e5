// The budget options every command that runs a candidate kernel takes
// (`check`, `sim`, `race`): --timeout-ms (processor time), --wall-timeout-ms
// (the wall-time backstop), --max-memory-mb and, where a simulation runs,
// --max-steps (ir/Budget.h). A run that exceeds one ends with exit status 4
// and "verdict": "budget", naming the budget and the stage. The defaults keep
// one candidate to a few seconds and a few hundred MB without stopping a
// normal one: the library's slowest kernel takes 0.62 s of CPU in `check`
// and the slowest kernel of tests/lit 0.66 s (docs/robustness.md), hence
// 10 s of CPU, counted so that a loaded machine does not change the verdict
// (the same checks took 4.5 s of wall time under eight concurrent builds);
// 60 s of wall time catches a run the processor clock does not see; 2^27
// steps are about 5 s of simulation; 512 MiB is 4x the library check's peak.
//
// runWithinBudget() installs the budget for a command's run: Z3's memory cap
// and, outside sanitizer builds, a limit on the process's data segment, so
// that an allocation past the memory budget fails with std::bad_alloc, which
// it turns into the budget result instead of an OOM kill.
#pragma once

#include "ir/Budget.h"
#include "ir/Diagnostics.h"
#include "tools/OptionValues.h"

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/JSON.h>

#include <optional>

namespace tilescope::tool {

inline constexpr int64_t kDefaultTimeoutMs = 10'000;     // CPU time
inline constexpr int64_t kDefaultWallTimeoutMs = 60'000; // the backstop
inline constexpr int64_t kDefaultMaxSteps = int64_t{1} << 27;
inline constexpr int64_t kDefaultMaxMemoryMb = 512;
// The whole command's caps where a command restarts the two time budgets
// (`check` of a space: per point; of the library: per file): ten minutes of
// CPU, an hour of wall time. The library check takes well under a minute of
// CPU, the 186 points of kernels/gemm_bf16_sm90_family.tile 87 s (docs/ir.md).
inline constexpr int64_t kDefaultTotalTimeoutMs = 600'000;
inline constexpr int64_t kDefaultTotalWallTimeoutMs = 3'600'000;
// The least memory budget applied to Z3 and the process (smaller ones are
// raised to it; the simulator's own cap takes the value as given).
inline constexpr int64_t kMemoryFloorMb = 32;

// The options, registered on one subcommand (declare after it, in its file).
struct BudgetOptions {
  // `withTotals`: also --total-timeout-ms and --total-wall-timeout-ms, for
  // a command that restarts the time budgets (BudgetLimits).
  BudgetOptions(llvm::cl::SubCommand &sub, bool withSteps,
                int64_t defaultTimeoutMs = kDefaultTimeoutMs,
                int64_t defaultWallTimeoutMs = kDefaultWallTimeoutMs, bool withTotals = false);
  BudgetLimits limits() const;
  // A negative value is a usage error: says so as `tilescope CMD: error: ...`
  // and returns the input-error status (2); 0 when every value is valid.
  int usageError(const char *command) const;

  IntOption<int64_t> timeoutMs;
  IntOption<int64_t> wallTimeoutMs;
  IntOption<int64_t> maxMemoryMb;
  std::optional<IntOption<int64_t>> maxSteps;
  std::optional<IntOption<int64_t>> totalTimeoutMs, totalWallTimeoutMs;
};

// Runs `run` with `budget` active and the memory limits applied. When an
// allocation fails, records the memory budget as exceeded and returns what
// `budgetResult` returns (it prints the command's budget result). When a Z3
// query runs on a second past the deadline without stopping, records the
// time budget as exceeded, calls `budgetResult` on another thread and ends
// the process with its status (proof/QueryDeadline.h, OverrunExit).
int runWithinBudget(Budget &budget, llvm::function_ref<int()> run,
                    llvm::function_ref<int()> budgetResult);

// {"kind": "cpu-time" | "wall-time" | "steps" | "memory", "limit": N,
// "message": ...}
llvm::json::Object budgetJson(const Budget &budget);

// The end of a command stopped by a budget before it had anything else to
// report: the message as `tilescope CMD: error: ...` (or, with `json`,
// {"ok": false, "verdict": "budget", "status": 4, "budget": {...},
// "diagnostics": [...]}); returns 4.
int finishBudget(const Budget &budget, const Diagnostics &diag, bool json, const char *command);

} // namespace tilescope::tool
