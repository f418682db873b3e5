// Fuzz target: the simulator on small sizes. Text that parses and passes the
// checker is bound with every shape symbol and integer scalar at the first of
// 64, 128, 8, 1 that the where clause admits, then run with a step budget of
// 200000 warp statements, a memory cap of 64 MiB and a time budget of 2 s of
// processor time. Every outcome (completed, deadlock, runtime error, budget) is fine
// except a crash, a sanitizer report or a hang; the budgets must hold: no run
// executes more than one statement past the step budget, a run that did not
// stop at a budget stayed within it, and one that ends in an error or a
// deadlock says what happened.
#include "fuzz/FuzzSupport.h"
#include "ir/Budget.h"
#include "simulator/Engine.h"

using namespace tilescope;

namespace {

std::optional<sim::Program> bindSmall(const Kernel &kernel) {
  for (int64_t v : {64, 128, 8, 1}) {
    sim::ArgValues args;
    for (const std::string &s : sim::shapeSymbols(kernel))
      args.ints[s] = v;
    for (const Param &p : kernel.params)
      if (!p.isTensor) {
        if (isFloat(p.dtype))
          args.floats[p.name] = 1e-5;
        else
          args.ints[p.name] = v;
      }
    fuzz::QuietDiagnostics q;
    if (auto program = sim::bindProgram(kernel, args, q.diag))
      return program;
  }
  return std::nullopt;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz::QuietDiagnostics q;
  std::optional<Module> module = fuzz::checkedModule(data, size, q);
  if (!module)
    return 0;
  std::optional<sim::Program> program = bindSmall(module->kernels.front());
  if (!program)
    return 0;
  constexpr int64_t kCap = int64_t{64} << 20;
  int64_t tensorBytes = 0;
  for (int b : program->tensorParams)
    if (b >= 0)
      tensorBytes +=
          program->buffers[size_t(b)].elements * program->buffers[size_t(b)].elementBytes;
  if (tensorBytes > kCap)
    return 0;
  std::vector<sim::HostTensor> tensors = sim::allocateTensors(*program);
  sim::EngineOptions options;
  options.maxSteps = 200000;
  options.memoryCapBytes = kCap;
  options.ctas = sim::sampleCtas(program->grid, 2, 1);
  Budget budget(BudgetLimits{/*timeoutMs=*/2000, 0, 0});
  ActiveBudget active(budget);
  sim::RunResult result = sim::runProgram(*program, tensors, options);
  fuzz::require(result.stats.steps <= options.maxSteps + 1, "the step budget holds",
                std::to_string(result.stats.steps) + " steps");
  fuzz::require(result.stoppedByBudget() || result.stats.steps <= options.maxSteps,
                "a run within budget stays within it");
  fuzz::require(result.ok() || !result.message.empty(), "a failed run says why",
                std::string(sim::outcomeName(result.outcome)));
  return 0;
}
