// `tilescope calibrate FILE [--kernel K] --data TIMES.csv [--target h100 |
// --machine M.json] [--test-shapes MxNxK,...] [--fit KEY,... -o FITTED.json]
// [--min-spearman R] [--max-median-error E] [--min-best-within F] [--json]`:
// the performance model against times measured on a GPU (model/Calibration.h,
// docs/model.md). TIMES.csv has a header naming at least the columns point
// (a `--set` text), M, N, K, ms and ok (rows whose ok is not True are left
// out), as scripts/model/calib.py writes it. Each (point, shape) is traced
// once. Prints the metrics over the training shapes (those not in
// --test-shapes) and over the held-out ones, per shape the rank correlation
// and the predicted and measured best points (--json: and every sample's
// predicted and measured time and bound) (without --fit, the rows of the
// training shapes are not read). With --fit, first fits the
// named numbers of the machine description on the training shapes and writes
// the fitted description to -o (each fitted value's source says so).
//
// Exit: 0; 1 when the held-out metrics (all shapes without --test-shapes)
// fall below a --min-* / above the --max-* threshold given (the accuracy
// regressed); 2 input errors.
#include "ir/Checker.h"
#include "ir/Instantiate.h"
#include "model/Calibration.h"
#include "model/MachineData.h"
#include "tools/Command.h"
#include "tools/InputFile.h"
#include "tools/JsonOutput.h"
#include "tools/ModelInputs.h"
#include "tools/OptionValues.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace tilescope::tool {
namespace {
namespace cl = llvm::cl;

cl::SubCommand calibrateCommand("calibrate",
                                "The performance model against measured times: accuracy, fit");
cl::opt<std::string> input(cl::Positional, cl::desc("FILE"), cl::Required,
                           cl::sub(calibrateCommand));
cl::opt<std::string> kernelName("kernel", cl::desc("The kernel (needed when FILE has several)"),
                                cl::value_desc("K"), cl::sub(calibrateCommand));
cl::opt<std::string> dataFile("data", cl::desc("Measured times (CSV: point, M, N, K, ms, ok)"),
                              cl::value_desc("FILE"), cl::Required, cl::sub(calibrateCommand));
MachineOptions machineOptions(calibrateCommand);
cl::opt<std::string> testShapes("test-shapes",
                                cl::desc("Held-out shapes (the others train the fit)"),
                                cl::value_desc("MxNxK,..."), cl::sub(calibrateCommand));
cl::opt<std::string> fitKeys("fit", cl::desc("Machine numbers to fit, e.g. clock_ghz,launch_us"),
                             cl::value_desc("KEY,..."), cl::sub(calibrateCommand));
cl::opt<std::string> output("o", cl::desc("Write the fitted machine description to FILE"),
                            cl::value_desc("FILE"), cl::sub(calibrateCommand));
NumberOption minSpearman("min-spearman", cl::desc("Fail below this mean rank correlation"),
                            cl::init(-2), cl::sub(calibrateCommand));
NumberOption maxMedianError("max-median-error",
                               cl::desc("Fail above this median relative error"), cl::init(1e9),
                               cl::sub(calibrateCommand));
NumberOption minBestWithin("min-best-within",
                              cl::desc("Fail below this fraction of shapes whose predicted best "
                                       "is within 5% of the measured best"),
                              cl::init(-1), cl::sub(calibrateCommand));
cl::opt<bool> json("json", cl::desc("Print the result as JSON"), cl::sub(calibrateCommand));

// The fields of one CSV line (double quotes protect commas).
std::vector<std::string> csvFields(llvm::StringRef line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted)
      out.emplace_back();
    else if (c != '\r')
      out.back() += c;
  }
  return out;
}

// The bounds a fitted number stays in: a factor of 4 around the start, and
// efficiencies and the DRAM fraction at most 1, misaligned-row factors at
// least 1.
model::FreeNumber freeNumber(const std::string &key, double start) {
  double hi =
      key.rfind("wgmma_efficiency", 0) == 0 || key == "dram_exposed_fraction" ? 1.0 : start * 4;
  // A misaligned row's byte costs at least an aligned one's.
  double lo = key.rfind("misaligned_", 0) == 0 ? std::max(1.0, start / 4) : start / 4;
  return {key, lo, hi};
}

llvm::json::Object accuracyJson(const model::Accuracy &a) {
  llvm::json::Array shapes;
  for (const model::ShapeAccuracy &s : a.perShape) {
    llvm::json::Array rows;
    for (const model::SamplePrediction &p : s.samples)
      rows.push_back(llvm::json::Object{{"point", p.point},
                                        {"predicted_us", p.predictedUs},
                                        {"measured_us", p.measuredUs},
                                        {"bound", p.boundBy}});
    shapes.push_back(llvm::json::Object{{"shape", s.shape},
                                        {"points", static_cast<int64_t>(s.points)},
                                        {"spearman", s.spearman},
                                        {"predicted_best", s.predictedBest},
                                        {"measured_best", s.measuredBest},
                                        {"best_ratio", s.bestRatio},
                                        {"samples", std::move(rows)}});
  }
  return llvm::json::Object{{"samples", static_cast<int64_t>(a.samples)},
                            {"shapes", static_cast<int64_t>(a.shapes)},
                            {"mean_spearman", a.meanSpearman},
                            {"median_abs_error", a.medianAbsError},
                            {"best_within_5pct", a.bestWithin5},
                            {"per_shape", std::move(shapes)}};
}

void printAccuracy(const char *title, const model::Accuracy &a) {
  llvm::outs() << fmt::format("{}: {} samples, {} shapes: mean Spearman {:.3f}, median abs error "
                              "{:.1f}%, predicted best within 5% on {:.0f}% of shapes\n",
                              title, a.samples, a.shapes, a.meanSpearman, a.medianAbsError * 100,
                              a.bestWithin5 * 100);
  for (const model::ShapeAccuracy &s : a.perShape)
    llvm::outs() << fmt::format("  {:<18} {:>3} points  rho {:>6.3f}  best {:.3f}x  (predicted {}; "
                                "measured {})\n",
                                s.shape, s.points, s.spearman, s.bestRatio, s.predictedBest,
                                s.measuredBest);
}

int runCalibrate() {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr, /*printImmediately=*/!json);
  auto machine = machineOptions.load(diag);
  if (!machine)
    return finishInputError(diag, json);
  std::optional<Module> module = loadModule(input, diag, Checked::No);
  if (!module || checkModule(*module, diag))
    return finishInputError(diag, json);
  const Kernel *kernel = nullptr;
  if (!kernelName.empty())
    kernel = module->find(kernelName);
  else if (module->kernels.size() == 1)
    kernel = &module->kernels[0];
  if (!kernel || kernel->space.empty()) {
    diag.error(llvm::SMLoc(), kernel ? fmt::format("kernel '{}' has no parameters", kernel->name)
                                     : "choose a kernel with parameters with --kernel");
    return finishInputError(diag, json);
  }
  auto data = llvm::MemoryBuffer::getFile(dataFile);
  if (!data) {
    diag.error(llvm::SMLoc(), "cannot read '" + dataFile + "': " + data.getError().message());
    return finishInputError(diag, json);
  }
  llvm::SmallVector<llvm::StringRef> lines;
  (*data)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  std::map<std::string, size_t> column;
  if (!lines.empty()) {
    std::vector<std::string> header = csvFields(lines[0]);
    for (size_t i = 0; i < header.size(); ++i)
      column[header[i]] = i;
  }
  for (const char *name : {"point", "M", "N", "K", "ms", "ok"})
    if (!column.count(name)) {
      diag.error(llvm::SMLoc(),
                 fmt::format("{}: the header names no column '{}'", dataFile.getValue(), name));
      return finishInputError(diag, json);
    }
  std::set<std::string> heldOut;
  if (!testShapes.empty()) {
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(testShapes).split(parts, ',', -1, false);
    for (llvm::StringRef p : parts)
      heldOut.insert(p.trim().str());
  }

  std::vector<model::Sample> samples;
  size_t leftOut = 0;
  std::map<std::string, std::optional<Kernel>> instances;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> f = csvFields(lines[i]);
    auto field = [&](const char *name) -> llvm::StringRef {
      size_t c = column[name];
      return c < f.size() ? llvm::StringRef(f[c]) : llvm::StringRef();
    };
    std::string where = fmt::format("{}:{}", dataFile.getValue(), i + 1);
    if (field("ok") != "True") {
      ++leftOut;
      continue;
    }
    int64_t m = 0, n = 0, k = 0;
    double ms = 0;
    if (field("M").getAsInteger(10, m) || field("N").getAsInteger(10, n) ||
        field("K").getAsInteger(10, k) || field("ms").getAsDouble(ms) || ms <= 0) {
      diag.error(llvm::SMLoc(), where + ": M, N, K and ms must be positive numbers");
      return finishInputError(diag, json);
    }
    // Without a fit, only the held-out shapes are read (tracing is the cost).
    if (fitKeys.empty() && !heldOut.empty() &&
        !heldOut.count(fmt::format("{}x{}x{}", m, n, k)))
      continue;
    std::string point = field("point").str();
    auto &inst = instances[point];
    if (!inst) {
      auto p = parsePoint(*kernel, point, diag);
      if (!p)
        return finishInputError(diag, json);
      Instance made = instantiate(*kernel, *p);
      if (!made.kernel) {
        diag.error(llvm::SMLoc(),
                   fmt::format("{}: point {} does not instantiate: {}", where, point, made.reason));
        return finishInputError(diag, json);
      }
      inst = std::move(made.kernel);
    }
    std::string error;
    std::map<std::string, int64_t> sizes{{"M", m}, {"N", n}, {"K", k}};
    auto profile = model::profileKernel(*inst, sizes, 4096, &error);
    if (!profile) {
      diag.error(llvm::SMLoc(), fmt::format("{}: cannot trace {}: {}", where, point, error));
      return finishInputError(diag, json);
    }
    model::PredictCache cache = model::predictCache(*profile, *machine);
    samples.push_back({point, fmt::format("{}x{}x{}", m, n, k), ms * 1000, std::move(*profile),
                       std::move(cache)});
  }
  std::vector<const model::Sample *> train, test, all;
  for (const model::Sample &s : samples) {
    all.push_back(&s);
    (heldOut.empty() || heldOut.count(s.shape) ? test : train).push_back(&s);
  }
  if (samples.empty() || (!heldOut.empty() && test.empty())) {
    diag.error(llvm::SMLoc(), samples.empty() ? dataFile + ": no sample with ok True"
                                              : "--test-shapes names no shape of the data");
    return finishInputError(diag, json);
  }

  llvm::json::Object fitted;
  if (!fitKeys.empty()) {
    if (train.empty()) {
      diag.error(llvm::SMLoc(), "--fit needs training shapes: --test-shapes holds them all");
      return finishInputError(diag, json);
    }
    std::vector<model::FreeNumber> free;
    llvm::SmallVector<llvm::StringRef> keys;
    llvm::StringRef(fitKeys).split(keys, ',', -1, false);
    for (llvm::StringRef key : keys) {
      double *v = model::machineField(*machine, key.trim().str());
      if (!v) {
        diag.error(llvm::SMLoc(),
                   fmt::format("--fit: '{}' is not a number the fit can set", key.trim().str()));
        return finishInputError(diag, json);
      }
      free.push_back(freeNumber(key.trim().str(), *v));
    }
    model::Machine start = *machine;
    *machine = model::fit(train, start, free);
    for (const model::FreeNumber &n : free) {
      double before = *model::machineField(start, n.key);
      double after = *model::machineField(*machine, n.key);
      fitted[n.key] = llvm::json::Object{{"before", before}, {"after", after}};
      if (!json)
        llvm::outs() << fmt::format("fit {}: {:.4g} -> {:.4g}\n", n.key, before, after);
    }
    if (!output.empty()) {
      std::string text;
      if (!machineOptions.file.empty()) {
        if (auto b = llvm::MemoryBuffer::getFile(machineOptions.file))
          text = (*b)->getBuffer().str();
      } else {
        for (const model::BundledMachine &b : model::bundledMachines())
          if (b.target == machineOptions.target)
            text = std::string(b.text);
      }
      auto parsed = llvm::json::parse(text);
      llvm::json::Object *o = parsed ? parsed->getAsObject() : nullptr;
      if (!o) {
        diag.error(llvm::SMLoc(), "cannot re-read the machine description to write the fit");
        return finishInputError(diag, json);
      }
      for (const model::FreeNumber &n : free) {
        llvm::json::Object *entry = o->getObject(n.key);
        double after = *model::machineField(*machine, n.key);
        std::string prior =
            entry && entry->getString("source") ? entry->getString("source")->str() : std::string();
        (*o)[n.key] = llvm::json::Object{
            {"value", std::round(after * 1e4) / 1e4},
            {"source",
             fmt::format("fitted by `tilescope calibrate --fit` on {} samples of {} "
                         "({} training shapes); prior {:.4g}: {}",
                         train.size(), dataFile.getValue(), accuracy(train, *machine).shapes,
                         *model::machineField(start, n.key), prior)}};
      }
      std::error_code ec;
      llvm::raw_fd_ostream os(output, ec);
      if (ec) {
        diag.error(llvm::SMLoc(), "cannot write '" + output + "': " + ec.message());
        return finishInputError(diag, json);
      }
      os << llvm::formatv("{0:2}", llvm::json::Value(std::move(*parsed))) << "\n";
    }
  }

  model::Accuracy testAccuracy = model::accuracy(test, *machine);
  std::vector<std::string> failures;
  if (testAccuracy.meanSpearman < minSpearman)
    failures.push_back(fmt::format("mean Spearman {:.3f} < {:.3f}", testAccuracy.meanSpearman,
                                   minSpearman.getValue()));
  if (testAccuracy.medianAbsError > maxMedianError)
    failures.push_back(fmt::format("median abs error {:.3f} > {:.3f}", testAccuracy.medianAbsError,
                                   maxMedianError.getValue()));
  if (testAccuracy.bestWithin5 < minBestWithin)
    failures.push_back(fmt::format("best within 5% on {:.3f} < {:.3f} of shapes",
                                   testAccuracy.bestWithin5, minBestWithin.getValue()));
  if (json) {
    llvm::json::Array failed;
    for (const std::string &f : failures)
      failed.push_back(f);
    llvm::json::Object out{{"ok", failures.empty()},
                           {"status", static_cast<int64_t>(failures.empty() ? kClean : kFindings)},
                           {"machine", machine->name},
                           {"left_out", static_cast<int64_t>(leftOut)},
                           {"test", accuracyJson(testAccuracy)},
                           {"failures", std::move(failed)}};
    if (!train.empty())
      out["train"] = accuracyJson(model::accuracy(train, *machine));
    if (!fitKeys.empty())
      out["fitted"] = std::move(fitted);
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
  } else {
    llvm::outs() << fmt::format("{} on {} ({} rows left out: not ok)\n", kernel->name,
                                machine->name, leftOut);
    if (!train.empty())
      printAccuracy("training shapes", model::accuracy(train, *machine));
    printAccuracy(heldOut.empty() ? "all shapes" : "held-out shapes", testAccuracy);
    for (const std::string &f : failures)
      llvm::outs() << "accuracy regressed: " << f << "\n";
  }
  return failures.empty() ? kClean : kFindings;
}

CommandRegistration registration(calibrateCommand, runCalibrate);
} // namespace
} // namespace tilescope::tool
