// `tilescope predict FILE [--kernel K] [--set P=V,...] --args M=..,N=..,K=..
// [--target h100|h200] [--machine FILE.json] [--json]`: the performance
// model's predicted time (model/Predict.h) and what bounds it. A kernel with
// parameters is predicted at the point of --set, or at every valid point of
// its space, fastest first. Not calibrated on hardware (docs/model.md).
#include "ir/Checker.h"
#include "ir/Instantiate.h"
#include "ir/Printer.h"
#include "model/Predict.h"
#include "tools/Command.h"
#include "tools/InputFile.h"
#include "tools/JsonOutput.h"
#include "tools/ModelInputs.h"
#include "tools/NameValues.h"
#include "tools/OptionValues.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <algorithm>

namespace tilescope::tool {
namespace {
namespace cl = llvm::cl;

cl::SubCommand predictCommand("predict", "Predict a kernel's time with the performance model");
cl::opt<std::string> input(cl::Positional, cl::desc("FILE"), cl::Required, cl::sub(predictCommand));
cl::opt<std::string> kernelName("kernel", cl::desc("The kernel (needed when FILE has several)"),
                                cl::value_desc("K"), cl::sub(predictCommand));
cl::opt<std::string> setText("set",
                             cl::desc("A point of a kernel with parameters (default: every "
                                      "valid point, fastest first)"),
                             cl::value_desc("NAME=VALUE,..."), cl::sub(predictCommand));
cl::opt<std::string> argsText("args", cl::desc("Sizes, e.g. M=4096,N=4096,K=4096"),
                              cl::value_desc("NAME=VALUE,..."), cl::Required,
                              cl::sub(predictCommand));
MachineOptions machineOptions(predictCommand);
IntOption<int64_t> maxCtas("max-ctas", cl::desc("CTAs traced at most (the rest cost the average)"),
                         cl::init(4096), cl::sub(predictCommand));
cl::opt<bool> json("json", cl::desc("Print the result as JSON"), cl::sub(predictCommand));

struct Row {
  std::string point; // empty for a kernel without parameters
  model::Prediction prediction;
};

llvm::json::Object predictionJson(const Row &r) {
  const model::Prediction &p = r.prediction;
  llvm::json::Array bounds;
  for (const model::Bound &b : p.bounds)
    bounds.push_back(
        llvm::json::Object{{"resource", b.resource}, {"us", b.us}, {"detail", b.detail}});
  llvm::json::Object wgmma;
  for (const auto &[n, c] : p.wgmmaByN)
    wgmma[fmt::format("m64n{}k16", n)] = c;
  llvm::json::Object o{{"us", p.us},
                       {"bound_by", p.boundBy},
                       {"tflops", p.tflops},
                       {"peak_fraction", p.peakFraction},
                       {"grid", p.grid},
                       {"ctas_per_sm", p.ctasPerSm},
                       {"occupancy_limit", p.occupancyLimit},
                       {"stages", p.stages},
                       {"waves", p.waves},
                       {"wave_efficiency", p.waveEfficiency},
                       {"shared_bytes", p.sharedBytes},
                       {"flops", p.flops},
                       {"load_bytes", p.loadBytes},
                       {"dram_bytes", p.dramBytes},
                       {"store_bytes", p.storeBytes},
                       {"tiles", p.tiles},
                       {"wgmma", std::move(wgmma)},
                       {"bounds", std::move(bounds)}};
  if (!r.point.empty())
    o["point"] = r.point;
  return o;
}

int runPredict() {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr, /*printImmediately=*/!json);
  std::string error;
  std::optional<model::Machine> machine = machineOptions.load(diag);
  if (!machine)
    return finishInputError(diag, json);
  auto sizes = parseNameValues(argsText, &error);
  if (!sizes) {
    diag.error(llvm::SMLoc(), error);
    return finishInputError(diag, json);
  }
  std::optional<Module> module = loadModule(input, diag, Checked::No);
  if (!module || checkModule(*module, diag))
    return finishInputError(diag, json);
  const Kernel *kernel = chooseKernel(*module, kernelName, input, diag);
  if (!kernel)
    return finishInputError(diag, json);
  std::vector<std::pair<std::string, Kernel>> candidates;
  if (kernel->space.empty()) {
    if (!setText.empty()) {
      parsePoint(*kernel, setText, diag); // says it has no parameters
      return finishInputError(diag, json);
    }
    candidates.emplace_back("", *kernel);
  } else if (!setText.empty()) {
    auto point = parsePoint(*kernel, setText, diag);
    if (!point)
      return finishInputError(diag, json);
    Instance inst = instantiate(*kernel, *point);
    if (!inst.kernel) {
      diag.error(inst.loc, fmt::format("point {} {}", pointText(*point),
                                       whyNotInstantiated(inst)));
      return finishInputError(diag, json);
    }
    candidates.emplace_back(pointText(*point), std::move(*inst.kernel));
  } else {
    for (const SpacePoint &p : enumerateSpace(*kernel, kMaxPointsChecked).points)
      if (p.instance.kernel)
        candidates.emplace_back(pointText(p.point), *p.instance.kernel);
  }
  std::vector<Row> rows;
  std::vector<std::string> skipped;
  for (const auto &[point, k] : candidates) {
    std::string why;
    llvm::SMLoc where = k.loc;
    auto admitted = admits(k, sizes->ints, &why, &where);
    if (!admitted || (!*admitted && candidates.size() == 1)) {
      diag.error(where, admitted ? "--args break the constraints: " + why : "--args: " + why);
      return finishInputError(diag, json);
    }
    if (!*admitted) { // listed as not admitted, not predicted
      skipped.push_back(fmt::format("{}: {}", point, why));
      continue;
    }
    auto profile = model::profileKernel(k, sizes->ints, maxCtas, &error);
    if (!profile) {
      diag.error(k.loc, fmt::format("cannot trace kernel '{}'{}: {}", k.name,
                                    point.empty() ? "" : " at " + point, error));
      return finishInputError(diag, json);
    }
    rows.push_back({point, model::predict(*profile, *machine)});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row &a, const Row &b) { return a.prediction.us < b.prediction.us; });
  if (json) {
    llvm::json::Array predictions;
    for (const Row &r : rows)
      predictions.push_back(predictionJson(r));
    llvm::json::Array skippedJson;
    for (const std::string &s : skipped)
      skippedJson.push_back(s);
    llvm::json::Object out{{"ok", true},
                           {"status", static_cast<int64_t>(kClean)},
                           {"kernel", kernel->name},
                           {"machine", machine->name},
                           {"calibrated", false},
                           {"peak_tflops", machine->peakTflopsDatasheet},
                           {"predictions", std::move(predictions)},
                           {"skipped", std::move(skippedJson)}};
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
    return kClean;
  }
  llvm::outs() << fmt::format("kernel {} on {} (model not calibrated on hardware; datasheet "
                              "peak {:.0f} TFLOP/s, {:.0f} at the model's {:.2f} GHz)\n",
                              kernel->name, machine->name, machine->peakTflopsDatasheet,
                              machine->peakTflopsAtClock(), machine->clockGHz);
  for (const Row &r : rows) {
    const model::Prediction &p = r.prediction;
    llvm::outs() << fmt::format("{}{:.2f} us  {:.0f} TFLOP/s ({:.0f}% of peak)  bound by {}\n",
                                r.point.empty() ? "" : r.point + "  ", p.us, p.tflops,
                                p.peakFraction * 100, p.boundBy);
    if (rows.size() > 1)
      continue;
    llvm::outs() << fmt::format("  grid {} CTAs, {} per SM (limited by {}), {}-stage ring, {} "
                                "output tiles\n",
                                p.grid, p.ctasPerSm, p.occupancyLimit, p.stages, p.tiles);
    for (const model::Bound &b : p.bounds)
      llvm::outs() << fmt::format("  {:<22} {:>9.2f} us  {}\n", b.resource, b.us, b.detail);
  }
  for (const std::string &s : skipped)
    llvm::outs() << "  not admitted: " << s << "\n";
  return kClean;
}

CommandRegistration registration(predictCommand, runPredict);
} // namespace
} // namespace tilescope::tool
