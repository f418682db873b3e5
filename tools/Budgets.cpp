#include "tools/Budgets.h"

#include "tools/Command.h"
#include "tools/JsonOutput.h"
#include "tools/OptionValues.h"
#include "proof/QueryDeadline.h"
#include "proof/SolverBudget.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/raw_ostream.h>

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <new>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define TILESCOPE_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TILESCOPE_SANITIZED 1
#endif
#endif

namespace tilescope::tool {

namespace cl = llvm::cl;

BudgetOptions::BudgetOptions(cl::SubCommand &sub, bool withSteps, int64_t defaultTimeoutMs,
                             int64_t defaultWallTimeoutMs, bool withTotals)
    : timeoutMs("timeout-ms",
                cl::desc("Time budget in milliseconds of processor time (user + system) of the "
                         "run (0: none)"),
                cl::init(defaultTimeoutMs), cl::value_desc("MS"), cl::sub(sub)),
      wallTimeoutMs("wall-timeout-ms",
                    cl::desc("Wall-time budget in milliseconds, a backstop for a loaded "
                             "machine (0: none)"),
                    cl::init(defaultWallTimeoutMs), cl::value_desc("MS"), cl::sub(sub)),
      maxMemoryMb("max-memory-mb",
                  cl::desc("Memory budget in MiB: heap growth of the run, Z3 and the simulated "
                           "state (0: none)"),
                  cl::init(kDefaultMaxMemoryMb), cl::value_desc("MIB"), cl::sub(sub)) {
  if (withSteps)
    maxSteps.emplace("max-steps", cl::desc("Step budget of the simulation (warp statements)"),
                     cl::init(kDefaultMaxSteps), cl::value_desc("N"), cl::sub(sub));
  if (withTotals) {
    totalTimeoutMs.emplace("total-timeout-ms",
                           cl::desc("Processor-time budget in milliseconds of the whole command, "
                                    "over every point or file (0: none)"),
                           cl::init(kDefaultTotalTimeoutMs), cl::value_desc("MS"), cl::sub(sub));
    totalWallTimeoutMs.emplace("total-wall-timeout-ms",
                               cl::desc("Wall-time budget in milliseconds of the whole command "
                                        "(0: none)"),
                               cl::init(kDefaultTotalWallTimeoutMs), cl::value_desc("MS"),
                               cl::sub(sub));
  }
}

BudgetLimits BudgetOptions::limits() const {
  BudgetLimits l;
  l.timeoutMs = std::max<int64_t>(timeoutMs, 0);
  l.wallTimeoutMs = std::max<int64_t>(wallTimeoutMs, 0);
  l.maxMemoryBytes = std::clamp<int64_t>(maxMemoryMb, 0, int64_t{1} << 40) << 20;
  l.maxSteps = maxSteps ? std::max<int64_t>(*maxSteps, 0) : 0;
  l.totalTimeoutMs = totalTimeoutMs ? std::max<int64_t>(*totalTimeoutMs, 0) : 0;
  l.totalWallTimeoutMs = totalWallTimeoutMs ? std::max<int64_t>(*totalWallTimeoutMs, 0) : 0;
  return l;
}

int BudgetOptions::usageError(const char *command) const {
  std::vector<const IntOption<int64_t> *> all = {&timeoutMs, &wallTimeoutMs, &maxMemoryMb};
  for (const auto *o : {&maxSteps, &totalTimeoutMs, &totalWallTimeoutMs})
    if (*o)
      all.push_back(&**o);
  for (const IntOption<int64_t> *o : all)
    if (o->getValue() < 0) {
      llvm::errs() << "tilescope " << command << ": error: --" << o->ArgStr
                   << " takes a non-negative number (0: no budget), not " << o->getValue() << "\n";
      return kInputError;
    }
  return 0;
}

namespace {

// Bytes of the process's data segment now (heap, anonymous mappings).
int64_t dataBytes() {
  FILE *f = std::fopen("/proc/self/statm", "r");
  if (!f)
    return -1;
  long fields[7] = {};
  int n = std::fscanf(f, "%ld %ld %ld %ld %ld %ld %ld", &fields[0], &fields[1], &fields[2],
                      &fields[3], &fields[4], &fields[5], &fields[6]);
  std::fclose(f);
  return n == 7 ? int64_t(fields[5]) * sysconf(_SC_PAGESIZE) : -1;
}

// The data segment may grow by `bytes` (plus slack for the allocator's own
// bookkeeping) from now on. Not under AddressSanitizer, whose shadow memory
// is itself counted as data.
void limitData(int64_t bytes) {
#ifndef TILESCOPE_SANITIZED
  int64_t now = dataBytes();
  if (bytes <= 0 || now < 0)
    return;
  rlimit r{};
  if (getrlimit(RLIMIT_DATA, &r) != 0)
    return;
  rlim_t want = rlim_t(now + bytes + (int64_t{64} << 20));
  if (r.rlim_max != RLIM_INFINITY && want > r.rlim_max)
    want = r.rlim_max;
  r.rlim_cur = want;
  setrlimit(RLIMIT_DATA, &r);
#else
  (void)bytes;
#endif
}

const char *kindName(BudgetKind kind, bool total) {
  switch (kind) {
  case BudgetKind::CpuTime:
    return total ? "total-cpu-time" : "cpu-time";
  case BudgetKind::WallTime:
    return total ? "total-wall-time" : "wall-time";
  case BudgetKind::Steps:
    return "steps";
  case BudgetKind::Memory:
    return "memory";
  case BudgetKind::None:
    break;
  }
  return "none";
}

} // namespace

int runWithinBudget(Budget &budget, llvm::function_ref<int()> run,
                    llvm::function_ref<int()> budgetResult) {
  ActiveBudget active(budget);
  // A Z3 query that ignores the deadline's interrupt ends the run as
  // `budget` a second past the deadline (proof/QueryDeadline.h).
  OverrunExit overrun([&](const Budget &) {
    int status = budgetResult();
    llvm::outs().flush();
    llvm::errs().flush();
    return status;
  });
  int64_t memory = budget.limits().maxMemoryBytes;
  if (memory > 0) {
    // Below a floor Z3 cannot even create a context (and z3++ does not check
    // for that): tiny budgets are raised to it.
    memory = std::max(memory, kMemoryFloorMb << 20);
    setSolverMemoryLimit(memory >> 20);
    limitData(memory);
  }
  // InitLLVM's new-handler ends the process on a failed allocation (as an
  // input error, tools/tilescope.cpp); within the budget a failed allocation
  // is the memory budget running out, so let operator new throw instead.
  std::new_handler previous = std::set_new_handler(nullptr);
  struct Restore {
    std::new_handler handler;
    ~Restore() { std::set_new_handler(handler); }
  } restore{previous};
  try {
    return run();
  } catch (const std::bad_alloc &) {
    budget.exceed(BudgetKind::Memory, "(an allocation failed)");
    return budgetResult();
  }
}

llvm::json::Object budgetJson(const Budget &budget) {
  BudgetKind kind = budget.exceeded();
  const BudgetLimits &l = budget.limits();
  bool total = budget.exceededTotal();
  int64_t limit = kind == BudgetKind::CpuTime    ? (total ? l.totalTimeoutMs : l.timeoutMs)
                  : kind == BudgetKind::WallTime ? (total ? l.totalWallTimeoutMs : l.wallTimeoutMs)
                  : kind == BudgetKind::Steps    ? l.maxSteps
                                                 : l.maxMemoryBytes >> 20;
  return llvm::json::Object{
      {"kind", kindName(kind, total)}, {"limit", limit}, {"message", budget.message()}};
}

int finishBudget(const Budget &budget, const Diagnostics &diag, bool json, const char *command) {
  if (json) {
    llvm::json::Object out{{"ok", false},
                           {"verdict", "budget"},
                           {"status", static_cast<int64_t>(kBudget)},
                           {"budget", budgetJson(budget)},
                           {"diagnostics", diagnosticsJson(diag)}};
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
  } else {
    llvm::errs() << "tilescope " << command << ": error: " << budget.message() << "\n";
  }
  return kBudget;
}

} // namespace tilescope::tool
