// tilescope.check(): what `tilescope check FILE --json` says about one
// file — the verdict of each proof, each kernel and the file (ir/Verdict.h:
// proved, finding, unknown, budget; unknown is never a pass) — with the same
// fields: {"ok", "verdict", "status", "kernels", "diagnostics"}. The proofs
// are check/KernelProofs.h's, as the command line runs them.
#include "python/Api.h"

#include "check/KernelProofs.h"
#include "ir/Budget.h"
#include "ir/Checker.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "tools/InputFile.h"
#include "ir/Verdict.h"
#include "tools/JsonOutput.h"
#include "tools/NameValues.h"
#include "tools/ProblemSizes.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace tilescope::python {

namespace json = llvm::json;

std::string checkJson(const std::string &source, const CheckOptions &options) {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr, /*printImmediately=*/false);
  Module module = parseModuleText(source, options.name, diag);
  if (diag.hasErrors())
    throwInputError(diag);
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
    throwInputError(diag);

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
    throwInputError(diag);

  llvm::StringRef text = sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer();
  // The time budget of `tilescope check` (ir/Budget.h: processor time of this thread, so
  // concurrent calls with the GIL released each have their own).
  Budget budget(BudgetLimits{std::max<int64_t>(options.timeoutMs, 0), 0, 0});
  std::optional<ActiveBudget> active;
  if (options.timeoutMs > 0)
    active.emplace(budget);
  Verdict overall = Verdict::Proved;
  json::Array kernels;
  for (const Kernel &k : module.kernels) {
    BarrierProofOptions barrierOptions;
    barrierOptions.sizes = options.args;
    barrierOptions.problemPlacements = tool::problemPlacementsOf(k, text);
    if (options.args.empty()) {
      auto annotated = tool::problemSizesOf(k, text, diag);
      if (!annotated)
        throwInputError(diag);
      if (!annotated->empty()) {
        barrierOptions.sizes = std::move(*annotated);
        barrierOptions.sizesFrom = tool::kProblemSizesFrom;
      }
    }
    KernelProofs proofs = runKernelProofs(k, diag, barrierOptions);
    json::Object proofsJson;
    for (const NamedProofOutcome &p : proofs.proofs) {
      const ProofOutcome &o = p.outcome;
      json::Object po{{"verdict", std::string(verdictName(o.verdict()))},
                      {"findings", static_cast<int64_t>(o.findings)},
                      {"ok", o.verdict() == Verdict::Proved}};
      if (!o.unknown.empty()) {
        json::Array unknown;
        for (const auto &[loc, why] : o.unknown)
          unknown.push_back(why);
        po["unknown"] = std::move(unknown);
      }
      if (!o.method.empty())
        po["method"] = o.method;
      proofsJson[p.name] = std::move(po);
    }
    Verdict v = proofs.verdict();
    overall = combine(overall, v);
    kernels.push_back(json::Object{{"name", k.name},
                                   {"verdict", std::string(verdictName(v))},
                                   {"ok", v == Verdict::Proved},
                                   {"hash", fmt::format("{:016x}", structuralHash(k))},
                                   {"target", std::string(targetInfo(k.launch.target).name)},
                                   {"threads", k.launch.threads},
                                   {"proofs", std::move(proofsJson)}});
  }
  json::Object out{{"ok", overall == Verdict::Proved},
                   {"verdict", std::string(verdictName(overall))},
                   {"status", static_cast<int64_t>(verdictExitCode(overall))},
                   {"kernels", std::move(kernels)},
                   {"diagnostics", tool::diagnosticsJson(diag)}};
  std::string result;
  llvm::raw_string_ostream os(result);
  os << json::Value(std::move(out));
  return os.str();
}

} // namespace tilescope::python
