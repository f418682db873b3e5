// `tilescope sim FILE [--kernel K] [--set P=V,...] --args M=256,N=256,K=128 [--seed S]
//  [--problem "gemm(A, B^T -> C)"] [--poison nan|big|negbig|random|zero] [--wide-inputs]
//  [--ctas all|N] [--input A=a.npy ...] [--dump DIR] [--max-steps N]
//  [--timeout-ms MS] [--max-memory-mb MIB] [--json]`:
// runs a kernel on the simulator (simulator/Engine.h) with random inputs
// drawn from the seed (never zero; a fresh seed from the OS unless --seed
// pins it) or given .npy arrays, and checks its outputs against the
// independent reference of the problem it names (simulator/Simulate.h).
//
// Exit: 0 outputs match; 1 a finding (mismatch, unwritten output, modified
// input, uninitialised read, deadlock, runtime error); 2 usage or input error
// (file:line:col diagnostics); 3 unknown (no problem, so no reference); 4 a
// budget ran out (steps, wall time, memory: tools/Budgets.h), "verdict":
// "budget".
#include "ir/Checker.h"
#include "ir/Parser.h"
#include "simulator/Engine.h"
#include "simulator/Reference.h"
#include "simulator/Simulate.h"
#include "simulator/Value.h"
#include "tools/Budgets.h"
#include "tools/Command.h"
#include "tools/InputFile.h"
#include "tools/JsonOutput.h"
#include "tools/NameValues.h"
#include "tools/SimDevices.h"
#include "tools/SimReport.h"
#include "tools/SimTensors.h"
#include "tools/OptionValues.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <cmath>

namespace tilescope::tool {
namespace {
namespace cl = llvm::cl;
using namespace tilescope::sim;

cl::SubCommand simCommand("sim", "Run a kernel on the simulator and compare with a reference");
cl::opt<std::string> input(cl::Positional, cl::desc("FILE"), cl::Required, cl::sub(simCommand));
cl::opt<std::string> kernelName("kernel", cl::desc("Run kernel K (needed when FILE has several)"),
                                cl::value_desc("K"), cl::sub(simCommand));
cl::opt<std::string> argsText("args", cl::desc("Shape symbols and scalars, e.g. M=256,N=256,K=128"),
                              cl::value_desc("NAME=VALUE,..."), cl::sub(simCommand));
cl::opt<std::string> setText("set",
                             cl::desc("A point of a kernel with parameters: NAME=VALUE,... or a "
                                      "named point"),
                             cl::value_desc("NAME=VALUE,..."), cl::sub(simCommand));
IntOption<uint64_t> seedOpt("seed",
                          cl::desc("Seed of the inputs, scalars and scheduler (default: a fresh "
                                   "one from the OS, reported)"),
                          cl::sub(simCommand));
cl::opt<std::string> problemText("problem",
                                 cl::desc("The problem to check against, e.g. \"gemm(A, B^T -> "
                                          "C)\"; overrides the kernel's // problem: line"),
                                 cl::value_desc("KIND(...)"), cl::sub(simCommand));
cl::opt<std::string> poisonText("poison",
                                cl::desc("What shared memory, registers and tensor memory hold "
                                         "at kernel start: nan (default), big, negbig, random, "
                                         "zero"),
                                cl::init("nan"), cl::value_desc("PATTERN"), cl::sub(simCommand));
cl::opt<bool> wideInputs("wide-inputs",
                         cl::desc("Widen the random float inputs as the reward's sizes after the "
                                  "first do: rows times 2^-6 .. 2^6 (f32 and bf16: some at "
                                  "2^-24 and past the kernel's literals), exact zeros"),
                         cl::init(false), cl::sub(simCommand));
cl::opt<bool> wideLater("wide-later",
                         cl::desc("With --wide-inputs, no exact zeros and no rows at 2^-24, as "
                                  "the reward's widened sizes after the second (`inputs wide, "
                                  "later`)"),
                         cl::init(false), cl::sub(simCommand));
cl::opt<bool> checkUninit("check-uninitialized",
                          cl::desc("Report reads of shared or tensor memory nothing wrote "
                                   "(default on; =false for speed)"),
                          cl::init(true), cl::sub(simCommand));
cl::opt<std::string> ctasText("ctas", cl::desc("CTAs to run: all, or N (edge tiles first)"),
                              cl::init("all"), cl::value_desc("all|N"), cl::sub(simCommand));
cl::list<std::string> inputs("input", cl::desc("Use NAME's values from a .npy file"),
                             cl::value_desc("NAME=FILE.npy"), cl::sub(simCommand));
cl::opt<std::string> dumpDir("dump", cl::desc("Write every tensor after the run as .npy"),
                             cl::value_desc("DIR"), cl::sub(simCommand));
IntOption<int64_t> memoryCapMb("memory-cap",
                             cl::desc("Memory cap of the tensors and the simulated state in MiB "
                                      "(default: --max-memory-mb)"),
                             cl::init(0), cl::sub(simCommand));
cl::opt<bool> json("json", cl::desc("Print the result as JSON"), cl::sub(simCommand));
cl::opt<bool> deviceRaces("races",
                          cl::desc("devices(N) kernels: also detect races on global memory across "
                                   "devices (docs/scales.md)"),
                          cl::sub(simCommand));
BudgetOptions budgetOptions(simCommand, /*withSteps=*/true);

// An input error outside the kernel's source: a command-line option
// ("tilescope sim: error: ...") or a file it names ("FILE: error: ..."); with
// --json, a diagnostic object (with "file" where there is one). Exit 2.
int inputError(const std::string &file, const std::string &message, int64_t line = 0,
               int64_t column = 0) {
  if (json) {
    llvm::json::Object d{{"severity", "error"}, {"message", message}};
    if (!file.empty())
      d["file"] = file;
    if (line > 0) {
      d["line"] = line;
      d["column"] = column;
    }
    llvm::json::Object out{{"ok", false},
                           {"status", static_cast<int64_t>(kInputError)},
                           {"verdict", "error"},
                           {"diagnostics", llvm::json::Array{std::move(d)}}};
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
  } else {
    std::string at = file.empty() ? std::string("tilescope sim")
                     : line > 0   ? fmt::format("{}:{}:{}", file, line, column)
                                  : file;
    llvm::errs() << at << ": error: " << message << "\n";
  }
  return kInputError;
}

int usage(const std::string &message) {
  return inputError("", message);
}

// `error` as "FILE: message" or "FILE:LINE:COL: message" (SimTensors.h)
// reported at FILE (and LINE:COL).
int fileError(const std::string &error) {
  size_t colon = error.find(": ");
  std::string file = error.substr(0, colon), message = error.substr(colon + 2);
  // A trailing ":LINE:COL" of the file part is the place in it.
  llvm::StringRef rest(file);
  auto [head, columnText] = rest.rsplit(':');
  auto [path, lineText] = head.rsplit(':');
  int64_t line = 0, column = 0;
  if (!columnText.getAsInteger(10, column) && !lineText.getAsInteger(10, line) && line > 0 &&
      column > 0 && !path.empty())
    return inputError(path.str(), message, line, column);
  return inputError(file, message);
}

std::optional<ArgValues> parseArgs(std::string *error) {
  auto values = parseNameValues(argsText, error);
  if (!values)
    return std::nullopt;
  ArgValues out;
  out.ints = std::move(values->ints);
  out.floats = std::move(values->floats);
  return out;
}

int runSimulation();

// A devices(N) kernel: its problem (annotation or --problem), then the device
// simulation (tools/SimDevices.h).
int runDevices(const Kernel &kernel, const ArgValues &args, uint64_t seed,
               llvm::SourceMgr &sourceMgr, Diagnostics &diag) {
  llvm::StringRef source = sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer();
  std::optional<ProblemSpec> spec;
  std::optional<ProblemAnnotation> annotation =
      findProblemAnnotation(std::string_view(source.data(), source.size()), kernel.name);
  if (!problemText.empty() || annotation) {
    ProblemSyntaxError syntax;
    spec = parseProblem(!problemText.empty() ? problemText.getValue() : annotation->text, &syntax);
    if (!spec)
      return usage(fmt::format("problem: column {}: {}", syntax.offset + 1, syntax.message));
  }
  DeviceSimRequest request;
  request.file = input.getValue();
  request.kernel = &kernel;
  request.args = args;
  request.problem = spec ? &*spec : nullptr;
  request.json = json;
  request.options.seed = seed;
  request.options.detectRaces = deviceRaces;
  request.dumpDir = dumpDir;
  BudgetLimits limits = budgetOptions.limits();
  if (limits.maxSteps > 0)
    request.options.maxSteps = limits.maxSteps;
  request.options.where = [&](llvm::SMLoc loc) -> std::string {
    unsigned buf = loc.isValid() ? sourceMgr.FindBufferContainingLoc(loc) : 0;
    if (!buf)
      return input.getValue();
    auto [line, col] = sourceMgr.getLineAndColumn(loc, buf);
    return fmt::format("{}:{}:{}", input.getValue(), line, col);
  };
  return runDeviceSimulation(request, diag);
}

int runSim() {
  if (int bad = budgetOptions.usageError("sim"))
    return bad;
  if (memoryCapMb < 0) {
    llvm::errs() << "tilescope sim: error: --memory-cap takes a non-negative number of MiB, not "
                 << memoryCapMb << "\n";
    return kInputError;
  }
  Budget budget(budgetOptions.limits());
  return runWithinBudget(budget, runSimulation, [&] {
    llvm::SourceMgr sm;
    Diagnostics none(sm, false);
    return finishBudget(budget, none, json, "sim");
  });
}

int runSimulation() {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr, /*printImmediately=*/!json);
  auto finishInputError = [&]() { return tool::finishInputError(diag, json); };
  std::optional<Module> loaded =
      loadModule(input, diag, Checked::Yes, {kernelName.getValue(), setText.getValue()});
  if (!loaded)
    return finishInputError();
  const Module &module = *loaded;
  const Kernel *kernel = nullptr;
  if (!kernelName.empty()) {
    kernel = module.find(kernelName);
    if (!kernel) {
      diag.error(llvm::SMLoc(), fmt::format("no kernel named '{}' in {}", kernelName.getValue(),
                                            input.getValue()));
      return finishInputError();
    }
  } else if (module.kernels.size() == 1) {
    kernel = &module.kernels[0];
  } else {
    diag.error(llvm::SMLoc(), fmt::format("{} holds {} kernels; choose one with --kernel",
                                          input.getValue(), module.kernels.size()));
    return finishInputError();
  }

  std::string error;
  auto args = parseArgs(&error);
  if (!args)
    return usage(error);
  auto poison = parsePoison(poisonText);
  if (!poison)
    return usage(
        fmt::format("--poison takes one of {}, not '{}'", poisonNames(), poisonText.getValue()));
  // A fresh seed unless one is given: inputs the kernel cannot predict, and
  // the seed reported so that a failure can be replayed.
  const uint64_t seed = seedOpt.getNumOccurrences() ? seedOpt.getValue() : freshSeed();
  if (!kernel->launch.devices.empty())
    return runDevices(*kernel, *args, seed, sourceMgr, diag);
  std::vector<std::string> notes = sampleScalars(*kernel, *args, seed);
  auto program = bindProgram(*kernel, *args, diag);
  if (!program)
    return finishInputError();

  llvm::StringRef source = sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer();
  auto at = [&](size_t offset) { return llvm::SMLoc::getFromPointer(source.data() + offset); };
  std::vector<size_t> nearMisses;
  std::optional<ProblemAnnotation> annotation = findProblemAnnotation(
      std::string_view(source.data(), source.size()), kernel->name, &nearMisses);
  if (!annotation)
    for (size_t offset : nearMisses)
      diag.warning(at(offset), "this comment is not a problem annotation; write "
                               "'// problem: KIND(INPUTS -> OUTPUTS)' (without one the outputs "
                               "are not checked)");
  // --problem (the task's) wins over the kernel's own line.
  bool fromOption = !problemText.empty();
  auto optionError = [&](size_t offset, const std::string &message) {
    return usage(fmt::format("--problem \"{}\": column {}: {}", problemText.getValue(), offset + 1,
                             message));
  };
  std::optional<ProblemSpec> spec;
  if (fromOption || annotation) {
    ProblemSyntaxError syntax;
    spec = parseProblem(fromOption ? problemText.getValue() : annotation->text, &syntax);
    if (!spec) {
      if (fromOption)
        return optionError(syntax.offset, syntax.message);
      diag.error(at(annotation->offset + syntax.offset), syntax.message);
      return finishInputError();
    }
    if (fromOption && annotation)
      notes.push_back(
          fmt::format("--problem replaces the kernel's own '// problem: {}'", annotation->text));
  }

  int64_t tensorBytes = 0;
  for (int b : program->tensorParams)
    if (b >= 0)
      tensorBytes += program->buffers[b].elements * program->buffers[b].elementBytes;
  BudgetLimits limits = budgetOptions.limits();
  int64_t capMb = memoryCapMb > 0 ? memoryCapMb.getValue() : limits.maxMemoryBytes >> 20;
  int64_t capBytes = capMb > 0 ? std::min<int64_t>(capMb, int64_t{1} << 40) << 20 : INT64_MAX;
  if (tensorBytes > capBytes) {
    Budget &budget = *activeBudget();
    budget.exceedWithMessage(
        BudgetKind::Memory,
        fmt::format("the kernel's tensors need {} bytes, over the memory budget of {} MiB ({})",
                    tensorBytes, capMb, memoryCapMb > 0 ? "--memory-cap" : "--max-memory-mb"));
    return finishBudget(budget, diag, json, "sim");
  }
  std::vector<HostTensor> tensors = allocateTensors(*program);
  std::optional<BoundProblem> problem;
  if (spec) {
    ProblemError bad;
    problem = bindProblem(*spec, *program, tensors, &bad);
    if (!problem) {
      if (fromOption)
        return optionError(bad.offset, bad.message);
      diag.error(at(annotation->offset + bad.offset), bad.message);
      return finishInputError();
    }
  }
  const BoundProblem *bound = problem ? &*problem : nullptr;
  // The rows past the kernel's literals, as the reward's widened sizes draw them.
  WideTargets targets = wideInputs ? wideTargets(*kernel, *args) : WideTargets{};
  targets.edgeRows = !wideLater;
  prepareTensors(tensors, bound, seed, PoisonPattern::Nan, wideInputs, targets);
  for (const std::string &item : inputs) {
    // Plain variables, not a structured binding: clang 14 (the `asan` preset's
    // compiler) rejects capturing a binding in the lambda below.
    std::pair<llvm::StringRef, llvm::StringRef> parts = llvm::StringRef(item).split('=');
    llvm::StringRef name = parts.first, path = parts.second;
    auto it = std::find_if(tensors.begin(), tensors.end(),
                           [&](const HostTensor &h) { return h.name == name; });
    if (it == tensors.end() || path.empty())
      return usage(fmt::format("--input takes NAME=FILE.npy with NAME a tensor parameter of '{}', "
                               "not '{}'",
                               kernel->name, item));
    if (isProblemOutput(bound, static_cast<int>(it - tensors.begin())))
      return usage(fmt::format("--input {}: '{}' is an output of the problem; its elements are "
                               "poisoned before the run, not read",
                               item, it->name));
    if (!loadNpy(*it, path.str(), &error))
      return fileError(error);
  }

  SimulateOptions options;
  options.seed = seed;
  options.maxSteps = limits.maxSteps > 0 ? limits.maxSteps : INT64_MAX;
  options.memoryCapBytes = capBytes;
  options.poison = *poison;
  options.checkUninitialized = checkUninit;
  options.where = [&](llvm::SMLoc loc) -> std::string {
    if (!loc.isValid())
      return input.getValue();
    unsigned buf = sourceMgr.FindBufferContainingLoc(loc);
    if (!buf)
      return input.getValue();
    auto [line, col] = sourceMgr.getLineAndColumn(loc, buf);
    return fmt::format("{}:{}:{}", sourceMgr.getMemoryBuffer(buf)->getBufferIdentifier().str(),
                       line, col);
  };
  if (ctasText != "all") {
    int64_t n = 0;
    if (llvm::StringRef(ctasText).getAsInteger(10, n) || n < 1)
      return usage(
          fmt::format("--ctas takes 'all' or a positive count, not '{}'", ctasText.getValue()));
    int64_t total = program->grid[0] * program->grid[1] * program->grid[2];
    if (n < total)
      options.ctas = sampleCtas(program->grid, n, seed);
  }
  SimulationResult result = simulateChecked(*program, bound, tensors, options);

  if (!dumpDir.empty() && !dumpNpy(tensors, dumpDir, &notes, &error))
    return fileError(error);

  SimReport report;
  report.file = input.getValue();
  report.kernel = kernel->name;
  if (problem)
    report.problem = problem->spec.text;
  report.problemFrom = fromOption ? "option" : problem ? "annotation" : "";
  report.seed = seed;
  report.poison = std::string(poisonName(*poison));
  report.tensors = &tensors;
  report.result = &result;
  report.notes = std::move(notes);
  if (json) {
    llvm::json::Object out = toJson(report);
    if (result.run.stoppedByBudget())
      out["budget"] = llvm::json::Object{{"kind", std::string(outcomeName(result.run.outcome))},
                                         {"message", result.run.message}};
    out["diagnostics"] = diagnosticsJson(diag);
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
  } else {
    printText(report, llvm::outs(), llvm::errs());
  }
  return result.exitCode();
}

CommandRegistration registration(simCommand, runSim);
} // namespace
} // namespace tilescope::tool
