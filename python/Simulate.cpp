// tilescope.simulate(): `tilescope sim --json` in process, with the tensors
// in and out as values instead of .npy files. Inputs not given are drawn
// from the seed; outputs of the problem start poisoned; given inputs are
// rounded to their dtype (round to nearest even), since numpy has no bf16
// or fp8 to hold them exactly.
#include "python/Api.h"

#include "ir/Checker.h"
#include "ir/Parser.h"
#include "simulator/Problem.h"
#include "simulator/Reference.h"
#include "simulator/Simulate.h"
#include "simulator/Value.h"
#include "tools/InputFile.h"
#include "tools/JsonOutput.h"
#include "tools/SimReport.h"
#include "tools/SimTensors.h"

#include <fmt/format.h>

#include <algorithm>

namespace tilescope::python {

namespace json = llvm::json;

namespace {

[[noreturn]] void usageError(std::string message) {
  throw ApiError{ApiError::Usage, std::move(message), {}, {}};
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s;
  for (int64_t d : shape)
    s += (s.empty() ? "" : ", ") + std::to_string(d);
  return "(" + s + ")";
}

// Writes `values` into `t` (same shape, checked), rounding to t's dtype.
void setValues(sim::HostTensor &t, const TensorValues &values) {
  if (values.shape != t.shape)
    usageError(fmt::format("inputs['{}'] has shape {}, but tensor '{}' has shape {} at these args",
                           t.name, shapeText(values.shape), t.name, shapeText(t.shape)));
  bool floats = isFloat(t.dtype);
  for (int64_t i = 0; i < t.elements(); ++i)
    t.setBits(i, floats ? sim::encodeFloat(t.dtype, values.floats.empty()
                                                        ? static_cast<double>(values.ints[i])
                                                        : values.floats[i])
                        : sim::encodeInt(t.dtype, values.ints.empty()
                                                      ? static_cast<int64_t>(values.floats[i])
                                                      : values.ints[i]));
}

TensorValues valuesOf(const sim::HostTensor &t) {
  TensorValues out;
  out.name = t.name;
  out.dtype = t.dtype;
  out.shape = t.shape;
  if (isFloat(t.dtype)) {
    out.floats.resize(t.elements());
    for (int64_t i = 0; i < t.elements(); ++i)
      out.floats[i] = sim::decodeFloat(t.dtype, t.bitsAt(i));
  } else {
    out.ints.resize(t.elements());
    for (int64_t i = 0; i < t.elements(); ++i)
      out.ints[i] = sim::decodeInt(t.dtype, t.bitsAt(i));
  }
  return out;
}

} // namespace

SimulateResult simulate(const std::string &source, const SimulateOptions &options) {
  using namespace sim;
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr, /*printImmediately=*/false);
  Module module = parseModuleText(source, options.name, diag);
  if (!diag.hasErrors())
    checkModule(module, diag);
  // A kernel with parameters runs as an instance (tilescope instantiate).
  if (!diag.hasErrors())
    tool::instantiateChosen(module, {options.kernel, {}}, diag);
  if (diag.hasErrors())
    throwInputError(diag);
  const Kernel *kernel = nullptr;
  if (!options.kernel.empty()) {
    kernel = module.find(options.kernel);
    if (!kernel)
      usageError(fmt::format("no kernel named '{}'", options.kernel));
  } else if (module.kernels.size() == 1) {
    kernel = &module.kernels.front();
  } else {
    usageError(fmt::format("the source holds {} kernels; choose one with kernel=...",
                           module.kernels.size()));
  }

  ArgValues args;
  args.ints = options.ints;
  args.floats = options.floats;
  // Float scalars not given are sampled from the seed (simulator/Simulate.h).
  std::vector<std::string> notes = sampleScalars(*kernel, args, options.seed);
  auto program = bindProgram(*kernel, args, diag);
  if (!program)
    throwInputError(diag);

  // The problem: the caller's, else the kernel's `// problem:` line.
  llvm::StringRef text = sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer();
  std::string problemText = options.problem;
  size_t problemOffset = 0;
  bool fromSource = problemText.empty();
  if (fromSource)
    if (auto annotation =
            findProblemAnnotation(std::string_view(text.data(), text.size()), kernel->name)) {
      problemText = annotation->text;
      problemOffset = annotation->offset;
    }
  auto problemError = [&](size_t offset, const std::string &message) {
    if (!fromSource)
      usageError(fmt::format("problem '{}': {} (at offset {})", problemText, message, offset));
    diag.error(llvm::SMLoc::getFromPointer(text.data() + problemOffset + offset), message);
    throwInputError(diag);
  };
  std::optional<ProblemSpec> spec;
  if (!problemText.empty()) {
    ProblemSyntaxError syntax;
    spec = parseProblem(problemText, &syntax);
    if (!spec)
      problemError(syntax.offset, syntax.message);
  }

  int64_t tensorBytes = 0;
  for (int b : program->tensorParams)
    if (b >= 0)
      tensorBytes += program->buffers[b].elements * program->buffers[b].elementBytes;
  if (tensorBytes > options.memoryCapMb * (int64_t{1} << 20))
    usageError(fmt::format("the kernel's tensors need {} bytes, over the memory cap of {} MiB "
                           "(memory_cap_mb)",
                           tensorBytes, options.memoryCapMb));
  std::vector<HostTensor> tensors = allocateTensors(*program);
  std::optional<BoundProblem> problem;
  if (spec) {
    ProblemError bad;
    problem = bindProblem(*spec, *program, tensors, &bad);
    if (!problem)
      problemError(bad.offset, bad.message);
  }
  auto isIn = [](const std::vector<int> &list, int i) {
    return std::find(list.begin(), list.end(), i) != list.end();
  };
  for (size_t i = 0; i < tensors.size(); ++i) {
    int index = static_cast<int>(i);
    if (problem && isIn(problem->outputs, index))
      tool::poison(tensors[i]);
    else
      fillRandomInput(tensors[i], options.seed, problem && isIn(problem->scales, index));
  }
  for (const auto &input : options.inputs) {
    // Not a structured binding: clang 14 (the `asan` preset's compiler) rejects
    // capturing one in the lambda below.
    const std::string &name = input.first;
    const auto &values = input.second;
    auto it = std::find_if(tensors.begin(), tensors.end(),
                           [&](const HostTensor &h) { return h.name == name; });
    if (it == tensors.end())
      usageError(fmt::format("inputs names '{}', which is not a tensor parameter of '{}'", name,
                             kernel->name));
    if (problem && isIn(problem->outputs, static_cast<int>(it - tensors.begin())))
      usageError(fmt::format("inputs['{}']: '{}' is an output of the problem; its elements are "
                             "poisoned before the run, not read",
                             name, name));
    setValues(*it, values);
  }

  sim::SimulateOptions checked;
  checked.seed = options.seed;
  checked.maxSteps = options.maxSteps;
  checked.memoryCapBytes = options.memoryCapMb * (int64_t{1} << 20);
  checked.where = [&](llvm::SMLoc loc) -> std::string {
    unsigned buf = loc.isValid() ? sourceMgr.FindBufferContainingLoc(loc) : 0;
    if (!buf)
      return options.name;
    auto [line, col] = sourceMgr.getLineAndColumn(loc, buf);
    return fmt::format("{}:{}:{}", options.name, line, col);
  };
  if (options.ctas > 0) {
    int64_t total = program->grid[0] * program->grid[1] * program->grid[2];
    if (options.ctas < total)
      checked.ctas = sampleCtas(program->grid, options.ctas, options.seed);
  }
  // The checked simulation of `tilescope sim`: no problem is unknown,
  // poisoned memory, unwritten outputs, unchanged inputs.
  SimulationResult sim = simulateChecked(*program, problem ? &*problem : nullptr, tensors, checked);

  tool::SimReport report;
  report.file = options.name;
  report.kernel = kernel->name;
  if (problem)
    report.problem = problem->spec.text;
  report.problemFrom = !problem ? "" : fromSource ? "annotation" : "option";
  report.seed = options.seed;
  report.poison = std::string(poisonName(checked.poison));
  report.tensors = &tensors;
  report.result = &sim;
  report.notes = std::move(notes);
  json::Object out = tool::toJson(report);
  out["diagnostics"] = tool::diagnosticsJson(diag);

  SimulateResult result;
  llvm::raw_string_ostream os(result.json);
  os << json::Value(std::move(out));
  os.flush();
  for (const HostTensor &t : tensors)
    result.tensors.push_back(valuesOf(t));
  return result;
}

} // namespace tilescope::python
