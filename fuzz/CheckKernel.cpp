// Fuzz target: `tilescope check` on a parsed kernel. Text that parses and
// passes the well-formedness checker goes through check's proofs
// (check/KernelProofs.h: layouts and resources, barrier protocols with the
// exhaustive fallback, static races, write coverage) under a time budget of
// 2 s of processor time (ir/Budget.h, which every Z3 query and the
// explorer's state loop obey) and a state cap of 20000.
// Properties: the budget is respected (the run ends within 5 s of processor
// time: the budget, the work between two polls, ASan's slowdown); a verdict
// that is `finding` comes with an error diagnostic and one that is `budget`
// with the budget recorded as exceeded; every diagnostic is well-formed.
#include "check/KernelProofs.h"
#include "fuzz/FuzzSupport.h"
#include "ir/Budget.h"
#include "ir/Verdict.h"

using namespace tilescope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz::QuietDiagnostics q;
  std::optional<Module> module = fuzz::checkedModule(data, size, q);
  if (!module)
    return 0;
  Budget budget(BudgetLimits{/*timeoutMs=*/2000, 0, 0});
  ActiveBudget active(budget);
  BarrierProofOptions options;
  options.stateCap = 20000;
  int64_t started = threadCpuNs();
  KernelProofs proofs = runKernelProofs(module->kernels.front(), q.diag, options);
  double seconds = double(threadCpuNs() - started) / 1e9;
  // 3 s of slack: the watcher stops a query in flight once the budget has run
  // out (proof/QueryDeadline.h), and the work after it polls. Before it, the
  // race checker's full-budget query ran on to its rlimit under ASan (the
  // tensor-parallel GEMM seed: 12-14 s of CPU against the 2 s budget).
  fuzz::require(seconds < 5, "the 2 s time budget holds (processor time, 3 s of slack)",
                std::to_string(seconds) + " s of CPU");
  Verdict verdict = proofs.verdict();
  fuzz::require(verdict != Verdict::Finding || q.diag.hasErrors(),
                "a finding comes with an error diagnostic");
  fuzz::require(verdict != Verdict::Budget || budget.exceeded() != BudgetKind::None,
                "a budget verdict means the budget ran out");
  fuzz::requireWellFormed(q.diag,
                          fuzz::lineCount(std::string(reinterpret_cast<const char *>(data), size)));
  return 0;
}
