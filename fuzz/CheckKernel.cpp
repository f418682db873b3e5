// Fuzz target: `tilescope check` on a parsed kernel. Text that parses and
// passes the well-formedness checker goes through check's proofs
// (check/KernelProofs.h: layouts and resources, barrier protocols with the
// exhaustive fallback, static races) under a
// wall-time budget of 2 s (ir/Budget.h, which every Z3 query and the
// explorer's state loop obey) and a state cap of 20000; any outcome is fine
// except a crash, a sanitizer report or a hang.
#include "check/KernelProofs.h"
#include "fuzz/FuzzSupport.h"
#include "ir/Budget.h"
#include "ir/Checker.h"
#include "ir/Parser.h"

using namespace tilescope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > fuzz::kMaxInputBytes)
    return 0;
  std::string text(reinterpret_cast<const char *>(data), size);
  fuzz::QuietDiagnostics q;
  Module module = parseModuleText(text, "input.tile", q.diag);
  if (q.diag.hasErrors() || module.kernels.empty())
    return 0;
  checkModule(module, q.diag);
  if (q.diag.hasErrors())
    return 0;
  Budget budget(BudgetLimits{/*timeoutMs=*/2000, 0, 0});
  ActiveBudget active(budget);
  BarrierProofOptions options;
  options.stateCap = 20000;
  runKernelProofs(module.kernels.front(), q.diag, options);
  return 0;
}
