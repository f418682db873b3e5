// `tilescope sim FILE [--kernel K] [--set P=V,...] --args M=256,N=256,K=128 [--seed S]
//  [--ctas all|N] [--input A=a.npy ...] [--dump DIR] [--max-steps N] [--json]`:
// runs a kernel on the simulator (simulator/Engine.h) with random inputs
// drawn from the seed (never zero) or given .npy arrays, and compares its
// outputs with the independent reference of the problem the kernel names
// (simulator/Reference.h).
//
// Exit: 0 outputs match; 1 mismatch, deadlock, runtime error, step budget or
// memory cap; 2 usage or input error (file:line:col diagnostics).
#include "ir/Checker.h"
#include "ir/Parser.h"
#include "simulator/Engine.h"
#include "simulator/Reference.h"
#include "simulator/Value.h"
#include "tools/Command.h"
#include "tools/NameValues.h"
#include "tools/InputFile.h"
#include "tools/JsonOutput.h"
#include "tools/SimReport.h"
#include "tools/SimTensors.h"

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
cl::opt<uint64_t> seed("seed", cl::desc("Seed of the inputs and of the scheduler"), cl::init(1),
                       cl::sub(simCommand));
cl::opt<std::string> ctasText("ctas", cl::desc("CTAs to run: all, or N (edge tiles first)"),
                              cl::init("all"), cl::value_desc("all|N"), cl::sub(simCommand));
cl::list<std::string> inputs("input", cl::desc("Use NAME's values from a .npy file"),
                             cl::value_desc("NAME=FILE.npy"), cl::sub(simCommand));
cl::opt<std::string> dumpDir("dump", cl::desc("Write every tensor after the run as .npy"),
                             cl::value_desc("DIR"), cl::sub(simCommand));
cl::opt<int64_t> maxSteps("max-steps", cl::desc("Step budget (warp statements)"),
                          cl::init(int64_t{1} << 32), cl::sub(simCommand));
cl::opt<int64_t> memoryCapMb("memory-cap", cl::desc("Memory cap of the simulated state in MiB"),
                             cl::init(4096), cl::sub(simCommand));
cl::opt<bool> json("json", cl::desc("Print the result as JSON"), cl::sub(simCommand));

// An input error outside the kernel's source: a command-line option
// ("tilescope sim: error: ...") or a file it names ("FILE: error: ..."); with
// --json, a diagnostic object (with "file" where there is one). Exit 2.
int inputError(const std::string &file, const std::string &message) {
  if (json) {
    llvm::json::Object d{{"severity", "error"}, {"message", message}};
    if (!file.empty())
      d["file"] = file;
    llvm::json::Object out{{"ok", false},
                           {"status", static_cast<int64_t>(kInputError)},
                           {"diagnostics", llvm::json::Array{std::move(d)}}};
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
  } else {
    llvm::errs() << (file.empty() ? "tilescope sim" : file) << ": error: " << message << "\n";
  }
  return kInputError;
}

int usage(const std::string &message) {
  return inputError("", message);
}

// `error` as "FILE: message" (SimTensors.h) reported at FILE.
int fileError(const std::string &error) {
  size_t colon = error.find(": ");
  return inputError(error.substr(0, colon), error.substr(colon + 2));
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

int runSim() {
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
  std::vector<std::string> notes;
  for (const Param &p : kernel->params)
    if (!p.isTensor && isFloat(p.dtype) && !args->floats.count(p.name) &&
        !args->ints.count(p.name)) {
      args->floats[p.name] = 1e-5;
      notes.push_back(fmt::format("scalar '{}' defaults to 1e-5", p.name));
    }
  auto program = bindProgram(*kernel, *args, diag);
  if (!program)
    return finishInputError();

  llvm::StringRef source = sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer();
  auto at = [&](size_t offset) { return llvm::SMLoc::getFromPointer(source.data() + offset); };
  std::optional<ProblemAnnotation> annotation =
      findProblemAnnotation(std::string_view(source.data(), source.size()), kernel->name);
  std::optional<ProblemSpec> spec;
  if (annotation) {
    ProblemSyntaxError syntax;
    spec = parseProblem(annotation->text, &syntax);
    if (!spec) {
      diag.error(at(annotation->offset + syntax.offset), syntax.message);
      return finishInputError();
    }
  }

  int64_t tensorBytes = 0;
  for (int b : program->tensorParams)
    if (b >= 0)
      tensorBytes += program->buffers[b].elements * program->buffers[b].elementBytes;
  if (tensorBytes > memoryCapMb * (int64_t{1} << 20)) {
    llvm::errs() << fmt::format("tilescope sim: the kernel's tensors need {} bytes, over the "
                                "memory cap of {} MiB (--memory-cap)\n",
                                tensorBytes, memoryCapMb.getValue());
    return kFindings;
  }
  std::vector<HostTensor> tensors = allocateTensors(*program);
  std::optional<BoundProblem> problem;
  if (spec) {
    ProblemError bad;
    problem = bindProblem(*spec, *program, tensors, &bad);
    if (!problem) {
      diag.error(at(annotation->offset + bad.offset), bad.message);
      return finishInputError();
    }
  }
  auto isIn = [](const std::vector<int> &list, int i) {
    return std::find(list.begin(), list.end(), i) != list.end();
  };
  for (size_t i = 0; i < tensors.size(); ++i) {
    int index = static_cast<int>(i);
    if (problem && isIn(problem->outputs, index))
      poison(tensors[i]);
    else
      fillRandomInput(tensors[i], seed, problem && isIn(problem->scales, index));
  }
  for (const std::string &item : inputs) {
    auto [name, path] = llvm::StringRef(item).split('=');
    auto it = std::find_if(tensors.begin(), tensors.end(),
                           [&](const HostTensor &h) { return h.name == name; });
    if (it == tensors.end() || path.empty())
      return usage(fmt::format("--input takes NAME=FILE.npy with NAME a tensor parameter of '{}', "
                               "not '{}'",
                               kernel->name, item));
    if (problem && isIn(problem->outputs, static_cast<int>(it - tensors.begin())))
      return usage(fmt::format("--input {}: '{}' is an output of the problem; its elements are "
                               "poisoned before the run, not read",
                               item, it->name));
    if (!loadNpy(*it, path.str(), &error))
      return fileError(error);
  }

  EngineOptions options;
  options.seed = seed;
  options.maxSteps = maxSteps;
  options.memoryCapBytes = memoryCapMb * (int64_t{1} << 20);
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
  bool allCtas = true;
  if (ctasText != "all") {
    int64_t n = 0;
    if (llvm::StringRef(ctasText).getAsInteger(10, n) || n < 1)
      return usage(
          fmt::format("--ctas takes 'all' or a positive count, not '{}'", ctasText.getValue()));
    int64_t total = program->grid[0] * program->grid[1] * program->grid[2];
    allCtas = n >= total;
    options.ctas = sampleCtas(program->grid, n, seed);
  }
  RunResult run = runProgram(*program, tensors, options);

  std::vector<OutputReport> reports;
  if (run.ok() && problem)
    reports = compareWithReference(*problem, tensors, allCtas);
  bool mismatch = false;
  for (const OutputReport &r : reports)
    mismatch |= r.mismatches > 0;
  int status = !run.ok() || mismatch ? kFindings : kClean;

  if (!dumpDir.empty() && !dumpNpy(tensors, dumpDir, &notes, &error))
    return fileError(error);

  SimReport report;
  report.file = input.getValue();
  report.kernel = kernel->name;
  report.verdict = !run.ok()  ? std::string(outcomeName(run.outcome))
                   : !problem ? "unchecked"
                   : mismatch ? "mismatch"
                              : "match";
  if (problem)
    report.problem = problem->spec.text;
  report.seed = seed;
  report.allCtas = allCtas;
  report.status = status;
  report.tensors = &tensors;
  report.outputs = std::move(reports);
  report.run = &run;
  report.notes = std::move(notes);
  if (json) {
    llvm::json::Object out = toJson(report);
    out["diagnostics"] = diagnosticsJson(diag);
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
  } else {
    printText(report, llvm::outs(), llvm::errs());
  }
  return status;
}

CommandRegistration registration(simCommand, runSim);
} // namespace
} // namespace tilescope::tool
