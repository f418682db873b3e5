// tilescope.check(): what `tilescope check --json` decides, as one verdict
// per proof, per kernel and overall. A verdict is `proved` (for all sizes,
// or checked exhaustively at the sizes `method` states), `finding` (a
// diagnostic with the witness says where) or `unknown` (not proved, not
// checked: never a pass).
#include "python/Api.h"

#include "ir/Checker.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "racecheck/StaticRaces.h"
#include "tools/InputFile.h"
#include "tools/JsonOutput.h"
#include "tools/NameValues.h"
#include "tools/ProblemSizes.h"
#include "verifier/BarrierProofs.h"
#include "verifier/KernelLayouts.h"

#include <fmt/format.h>

namespace tilescope::python {

namespace json = llvm::json;

namespace {

enum class Verdict { Proved, Unknown, Finding };

const char *verdictName(Verdict v) {
  return v == Verdict::Proved ? "proved" : v == Verdict::Unknown ? "unknown" : "finding";
}

Verdict verdictOf(size_t findings, size_t open) {
  return findings ? Verdict::Finding : open ? Verdict::Unknown : Verdict::Proved;
}

[[noreturn]] void inputError(const Diagnostics &diag) {
  std::string message = "input error";
  for (const Diagnostic &d : diag.all())
    if (d.kind == Diagnostic::Error) {
      message = fmt::format("{}:{}:{}: error: {}", d.file, d.line, d.column, d.message);
      break;
    }
  throw ApiError{ApiError::Input, message, tool::diagnosticsJson(diag), {}};
}

json::Object proofJson(Verdict v, size_t findings) {
  return json::Object{{"verdict", verdictName(v)}, {"findings", static_cast<int64_t>(findings)}};
}

} // namespace

std::string checkJson(const std::string &source, const CheckOptions &options) {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr, /*printImmediately=*/false);
  Module module = parseModuleText(source, options.name, diag);
  if (diag.hasErrors())
    inputError(diag);
  if (!options.kernel.empty()) {
    const Kernel *k = module.find(options.kernel);
    if (!k)
      throw ApiError{ApiError::Usage, fmt::format("no kernel named '{}'", options.kernel), {}, {}};
    Kernel only = *k;
    module.kernels = {std::move(only)};
  }
  checkModule(module, diag);
  // A kernel with parameters is proved as an instance (tilescope instantiate).
  if (!diag.hasErrors())
    tool::instantiateChosen(module, {options.kernel, {}}, diag);
  if (diag.hasErrors())
    inputError(diag);

  tool::NameValues sizes;
  sizes.ints = options.args;
  std::vector<const Kernel *> all;
  for (const Kernel &k : module.kernels)
    all.push_back(&k);
  for (const std::string &name : tool::namesNoKernelTakes(sizes, all))
    throw ApiError{ApiError::Usage,
                   fmt::format("args gives '{}', but no kernel checked has a shape symbol or "
                               "scalar parameter of that name",
                               name),
                   {},
                   {}};
  tool::reportBrokenConstraints(sizes, module.kernels, diag);
  if (diag.hasErrors())
    inputError(diag);

  llvm::StringRef text = sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer();
  Verdict overall = Verdict::Proved;
  json::Array kernels;
  for (const Kernel &k : module.kernels) {
    BarrierProofOptions barrierOptions;
    barrierOptions.sizes = options.args;
    if (options.args.empty()) {
      auto annotated = tool::problemSizesOf(k, text, diag);
      if (!annotated)
        inputError(diag);
      if (!annotated->empty()) {
        barrierOptions.sizes = std::move(*annotated);
        barrierOptions.sizesFrom = tool::kProblemSizesFrom;
      }
    }

    KernelLayoutInput in = collectKernelLayouts(k);
    KernelLayoutReport layouts =
        verifyKernelLayouts(in.buffers, in.uses, targetInfo(in.target), in.launch);
    KernelLayoutReport strides = verifyGlobalStrides(in.globalStrides, in.constraints);
    for (auto &f : strides.findings)
      layouts.findings.push_back(std::move(f));
    for (auto &u : strides.undecided)
      layouts.undecided.push_back(std::move(u));
    reportKernelLayouts(layouts, diag);
    Verdict layoutVerdict = verdictOf(layouts.findings.size(), layouts.undecided.size());

    BarrierReport barriers = proveBarrierProtocols(k, barrierOptions);
    reportBarrierProtocols(barriers, diag);
    bool barriersOpen =
        !barriers.notProved.empty() || llvm::StringRef(barriers.method).startswith("not ");
    Verdict barrierVerdict = verdictOf(barriers.findings.size(), barriersOpen);

    RaceReport races = checkStaticRaces(k);
    reportStaticRaces(races, diag);
    Verdict raceVerdict = verdictOf(races.findings.size(), races.notChecked.size());

    json::Object layoutJson = proofJson(layoutVerdict, layouts.findings.size());
    layoutJson["undecided"] = static_cast<int64_t>(layouts.undecided.size());
    json::Object barrierJson = proofJson(barrierVerdict, barriers.findings.size());
    barrierJson["method"] = barriers.method;
    barrierJson["not_proved"] = static_cast<int64_t>(barriers.notProved.size());
    json::Object raceJson = proofJson(raceVerdict, races.findings.size());
    raceJson["not_checked"] = static_cast<int64_t>(races.notChecked.size());

    Verdict kernelVerdict = std::max({layoutVerdict, barrierVerdict, raceVerdict});
    overall = std::max(overall, kernelVerdict);
    kernels.push_back(json::Object{{"name", k.name},
                                   {"verdict", verdictName(kernelVerdict)},
                                   {"hash", fmt::format("{:016x}", structuralHash(k))},
                                   {"target", std::string(targetInfo(k.launch.target).name)},
                                   {"threads", k.launch.threads},
                                   {"proofs", json::Object{{"layouts", std::move(layoutJson)},
                                                           {"barriers", std::move(barrierJson)},
                                                           {"races", std::move(raceJson)}}}});
  }
  json::Object out{{"verdict", verdictName(overall)},
                   {"kernels", std::move(kernels)},
                   {"diagnostics", tool::diagnosticsJson(diag)}};
  std::string result;
  llvm::raw_string_ostream os(result);
  os << json::Value(std::move(out));
  return os.str();
}

} // namespace tilescope::python
