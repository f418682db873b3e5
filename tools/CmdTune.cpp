// `tilescope tune FILE [--kernel K] --shapes MxNxK,... [--target h100|h200]
// [--machine FILE.json] [--budget N] [--points FILE] [--timeout-ms MS]
// [--total-timeout-ms MS] [--total-wall-timeout-ms MS] [-o table.json] [--json]`: chooses a point of a kernel with parameters (ir/Space.h) for
// each shape. It enumerates the space, drops the points whose resources do
// not fit (verifier/Resources.h), ranks the rest by the performance model's
// predicted time (model/Predict.h) at the shape (points whose where clause
// does not admit it left out), and runs the proofs of `tilescope check` on
// the best-ranked points in order until one is `proved`, at most N proof runs
// per shape (--budget, default 4; a point's verdict is kept for the other
// shapes; --points ranks only the points a file lists). Each proof run has a Z3 context and a
// --timeout-ms budget of its own. A finding, unknown or budget drops the point. The whole
// command's processor and wall time are capped by --total-timeout-ms and
// --total-wall-timeout-ms (tools/Budgets.h, as for `check` of a space): once
// one runs out, the proof run in progress ends as budget and no later one
// starts; the shapes left without a point say so. The table
// (model/TuningTable.h) maps each shape, as a bucket centre, to its point;
// `lower --auto` and `bench --auto` read it.
// --measured CSV,... (calib.py's rows: point, M, N, K, ms, ok) stands for
// `--gpu` with times taken earlier: at a shape with measured rows, the
// points among the model's best --measured-top ranks that were timed there
// are proved fastest measured first (median of their rows), the rest after
// them in the model's order; the entry records the measured time. The rows
// must be of the same kernel text (the point names a kernel only with it).
//
// Exit: 0 every shape got a proved point; 3 some shape got none within the
// budget (the table says why); 4 the whole command's total ran out; 2 input
// errors.
#include "check/KernelProofs.h"
#include "ir/Checker.h"
#include "ir/Instantiate.h"
#include "ir/Printer.h"
#include "ir/Verdict.h"
#include "model/Predict.h"
#include "model/TuningTable.h"
#include "tools/Budgets.h"
#include "tools/Command.h"
#include "tools/InputFile.h"
#include "tools/JsonOutput.h"
#include "tools/ModelInputs.h"
#include "tools/ProblemSizes.h"
#include "tools/OptionValues.h"
#include "proof/ProofContext.h"
#include "verifier/Resources.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace tilescope::tool {
namespace {
namespace cl = llvm::cl;

cl::SubCommand tuneCommand("tune", "Choose a kernel's point per shape: model ranking, proofs");
cl::opt<std::string> input(cl::Positional, cl::desc("FILE"), cl::Required, cl::sub(tuneCommand));
cl::opt<std::string> kernelName("kernel", cl::desc("The kernel (needed when FILE has several)"),
                                cl::value_desc("K"), cl::sub(tuneCommand));
cl::opt<std::string> shapesText("shapes",
                                cl::desc("Shapes M x N x K, e.g. 4096x4096x4096,512x512x8192"),
                                cl::value_desc("MxNxK,..."), cl::Required, cl::sub(tuneCommand));
MachineOptions machineOptions(tuneCommand);
IntOption<unsigned> proofBudget("budget", cl::desc("Proof runs per shape at most (default 4)"),
                              cl::init(4), cl::sub(tuneCommand));
cl::opt<std::string> pointsFile("points",
                                cl::desc("Rank only the points listed in FILE (one --set text a "
                                         "line), e.g. those `tilescope check` proved"),
                                cl::value_desc("FILE"), cl::sub(tuneCommand));
cl::opt<std::string> measuredFiles(
    "measured",
    cl::desc("CSV files of measured times (calib.py: point,M,N,K,ms,ok): at a shape they cover, "
             "the fastest measured of the model's best --measured-top points is chosen first"),
    cl::value_desc("FILE,..."), cl::sub(tuneCommand));
IntOption<unsigned> measuredTop("measured-top",
                              cl::desc("Model ranks --measured may choose from (default 24)"),
                              cl::init(24), cl::sub(tuneCommand));
cl::opt<std::string> output("o", cl::desc("Write the tuning table (JSON) to FILE"),
                            cl::value_desc("FILE"), cl::sub(tuneCommand));
cl::opt<bool> json("json", cl::desc("Print the table as JSON"), cl::sub(tuneCommand));
BudgetOptions budgetOptions(tuneCommand, /*withSteps=*/false, kDefaultTimeoutMs,
                            kDefaultWallTimeoutMs, /*withTotals=*/true);

// "4096x4096x4096" -> {M, N, K}; nothing after an input error.
std::optional<std::vector<std::map<std::string, int64_t>>> parseShapes(llvm::StringRef text,
                                                                       Diagnostics &diag) {
  std::vector<std::map<std::string, int64_t>> out;
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef part : parts) {
    llvm::SmallVector<llvm::StringRef> dims;
    part.trim().split(dims, 'x');
    std::map<std::string, int64_t> shape;
    const char *names[] = {"M", "N", "K"};
    bool ok = dims.size() == 3;
    for (size_t i = 0; ok && i < 3; ++i) {
      int64_t v = 0;
      ok = !dims[i].getAsInteger(10, v) && v > 0 && v <= (int64_t{1} << 31);
      shape[names[i]] = v;
    }
    if (!ok) {
      diag.error(llvm::SMLoc(), fmt::format("--shapes: '{}' is not M x N x K with positive sizes "
                                            "(e.g. 4096x4096x4096)",
                                            part.str()));
      return std::nullopt;
    }
    out.push_back(std::move(shape));
  }
  if (out.empty()) {
    diag.error(llvm::SMLoc(), "--shapes names no shape");
    return std::nullopt;
  }
  return out;
}

std::string shapeText(const std::map<std::string, int64_t> &s) {
  return fmt::format("{}x{}x{}", s.at("M"), s.at("N"), s.at("K"));
}

struct Candidate {
  std::string point;
  Kernel kernel;
  std::string dropped; // why resources rule it out; empty: a candidate
  std::optional<Verdict> verdict;
  std::tuple<int64_t, int64_t, double> rank; // model::rankKey at the shape being ranked
  std::string why;    // of a verdict other than proved
};

// Adds calib.py's rows (header: ...,point,M,N,K,ms,...,ok,...; points
// quoted) that are ok to `rows`, keyed by (the point as `pointText` writes
// it, MxNxK), in microseconds; false when the text is not such a CSV.
bool readMeasured(llvm::StringRef text, const Kernel &kernel,
                  std::map<std::pair<std::string, std::string>, std::vector<double>> &rows) {
  // Splits a line at commas outside double quotes.
  auto fields = [](llvm::StringRef line) {
    std::vector<std::string> out(1);
    bool quoted = false;
    for (char ch : line) {
      if (ch == '"')
        quoted = !quoted;
      else if (ch == ',' && !quoted)
        out.emplace_back();
      else if (ch != '\r')
        out.back() += ch;
    }
    return out;
  };
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n', -1, false);
  std::map<std::string, size_t> column;
  for (llvm::StringRef line : lines) {
    if (line.trim().empty() || line.startswith("#"))
      continue;
    std::vector<std::string> f = fields(line);
    if (std::find(f.begin(), f.end(), "point") != f.end()) {
      // The header (again at each section of run_tune_dev.sh's results).
      column.clear();
      for (size_t i = 0; i < f.size(); ++i)
        column[f[i]] = i;
      continue;
    }
    if (column.empty())
      return false;
    for (const char *name : {"point", "M", "N", "K", "ms", "ok"})
      if (!column.count(name) || column[name] >= f.size())
        return false;
    if (f[column["ok"]] != "True")
      continue;
    llvm::SourceMgr sm;
    Diagnostics quiet(sm, /*printImmediately=*/false);
    auto p = parsePoint(kernel, f[column["point"]], quiet);
    double ms = 0;
    if (!p || llvm::StringRef(f[column["ms"]]).getAsDouble(ms) || !(ms > 0))
      return false;
    rows[{pointText(*p), f[column["M"]] + "x" + f[column["N"]] + "x" + f[column["K"]]}].push_back(
        ms * 1e3);
  }
  return !column.empty();
}

int runTuneInner();

int runTune() {
  if (int bad = budgetOptions.usageError("tune"))
    return bad;
  Budget budget(budgetOptions.limits());
  return runWithinBudget(budget, runTuneInner, [&] {
    llvm::SourceMgr sm;
    Diagnostics none(sm, false);
    return finishBudget(budget, none, json, "tune");
  });
}

int runTuneInner() {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr, /*printImmediately=*/!json);
  auto machine = machineOptions.load(diag);
  if (!machine)
    return finishInputError(diag, json);
  auto shapes = parseShapes(shapesText, diag);
  if (!shapes)
    return finishInputError(diag, json);
  std::optional<Module> module = loadModule(input, diag, Checked::No);
  if (!module || checkModule(*module, diag))
    return finishInputError(diag, json);
  const Kernel *kernel = chooseKernel(*module, kernelName, input, diag);
  if (!kernel)
    return finishInputError(diag, json);
  if (kernel->space.empty()) {
    diag.error(kernel->loc, fmt::format("kernel '{}' has no parameters: there is nothing to tune",
                                        kernel->name));
    return finishInputError(diag, json);
  }
  for (const char *name : {"M", "N", "K"})
    if (!std::any_of(kernel->params.begin(), kernel->params.end(), [&](const Param &p) {
          return std::any_of(p.shape.begin(), p.shape.end(),
                             [&](const Expr &d) { return print(d) == name; });
        })) {
      diag.error(kernel->loc,
                 fmt::format("--shapes gives M x N x K, but kernel '{}' has no shape symbol {}",
                             kernel->name, name));
      return finishInputError(diag, json);
    }

  // The points of --points, as `pointText` writes them.
  std::optional<std::set<std::string>> listed;
  if (!pointsFile.empty()) {
    auto text = llvm::MemoryBuffer::getFile(pointsFile);
    if (!text) {
      diag.error(llvm::SMLoc(), "cannot read '" + pointsFile + "': " + text.getError().message());
      return finishInputError(diag, json);
    }
    listed.emplace();
    llvm::SmallVector<llvm::StringRef> lines;
    (*text)->getBuffer().split(lines, '\n', -1, false);
    for (llvm::StringRef line : lines) {
      if (line.trim().empty() || line.trim().startswith("#"))
        continue;
      auto p = parsePoint(*kernel, line.trim(), diag);
      if (!p)
        return finishInputError(diag, json);
      listed->insert(pointText(*p));
    }
  }

  // Measured times by (point, shape): the median of the rows that were ok.
  std::map<std::pair<std::string, std::string>, double> measured;
  if (!measuredFiles.empty()) {
    std::map<std::pair<std::string, std::string>, std::vector<double>> rows;
    llvm::SmallVector<llvm::StringRef> files;
    llvm::StringRef(measuredFiles).split(files, ',', -1, false);
    for (llvm::StringRef file : files) {
      auto text = llvm::MemoryBuffer::getFile(file.trim());
      if (!text) {
        diag.error(llvm::SMLoc(),
                   "cannot read '" + file.trim().str() + "': " + text.getError().message());
        return finishInputError(diag, json);
      }
      if (!readMeasured((*text)->getBuffer(), *kernel, rows)) {
        diag.error(llvm::SMLoc(), "'" + file.trim().str() +
                                      "' is not calib.py's CSV (a header with point, M, N, K, "
                                      "ms and ok; a point of the kernel a row)");
        return finishInputError(diag, json);
      }
    }
    for (auto &[key, times] : rows) {
      std::sort(times.begin(), times.end());
      size_t n = times.size();
      measured[key] = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
    }
  }

  // The valid points whose resources fit.
  std::vector<Candidate> candidates;
  size_t droppedByResources = 0;
  for (SpacePoint &p : enumerateSpace(*kernel, kMaxPointsChecked).points) {
    if (!p.instance.kernel || (listed && !listed->count(pointText(p.point))))
      continue;
    Candidate c{pointText(p.point), std::move(*p.instance.kernel), {}, {}, {}, {}};
    ResourceReport r = checkResources(c.kernel);
    if (!r.findings.empty()) {
      c.dropped = r.findings.front().message;
      ++droppedByResources;
    }
    candidates.push_back(std::move(c));
  }
  llvm::StringRef source = sourceMgr.getMemoryBuffer(1)->getBuffer();

  model::TuningTable table;
  table.kernel = kernel->name;
  table.target = machine->target;
  table.machine = machine->name;
  table.note = fmt::format("tilescope tune: the model's fastest point that the proofs passed, "
                           "of {} valid points ({} dropped by resources); not timed on a GPU",
                           candidates.size(), droppedByResources);
  if (!measured.empty())
    table.note = fmt::format("tilescope tune: of {} valid points ({} dropped by resources), at a "
                             "shape with measured_us the fastest measured of the model's best {} "
                             "that the proofs passed (times of --measured), elsewhere the model's "
                             "fastest",
                             candidates.size(), droppedByResources, measuredTop.getValue());
  bool allFound = true;
  size_t proofRuns = 0;
  // The budget's message once the whole command's total ran out: no proof
  // runs after it.
  std::string totalSpent;
  for (const auto &shape : *shapes) {
    std::vector<std::pair<double, Candidate *>> ranked;
    std::string error;
    for (Candidate &c : candidates) {
      if (!c.dropped.empty())
        continue;
      std::string why;
      auto ok = admits(c.kernel, shape, &why);
      if (!ok) {
        diag.error(kernel->loc, why);
        return finishInputError(diag, json);
      }
      if (!*ok)
        continue;
      auto profile = model::profileKernel(c.kernel, shape, 4096, &error);
      if (!profile) {
        diag.error(kernel->loc,
                   fmt::format("cannot trace kernel '{}' at {}: {}", kernel->name, c.point, error));
        return finishInputError(diag, json);
      }
      model::Prediction prediction = model::predict(*profile, *machine);
      c.rank = model::rankKey(prediction);
      ranked.emplace_back(prediction.us, &c);
    }
    // Fastest first, ties as model::rankKey breaks them.
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto &a, const auto &b) { return a.second->rank < b.second->rank; });
    // --measured: the timed points among the best ranks go first, fastest
    // measured first.
    std::map<Candidate *, double> timed;
    for (size_t i = 0; i < ranked.size() && i < measuredTop; ++i)
      if (auto it = measured.find({ranked[i].second->point, shapeText(shape)});
          it != measured.end())
        timed[ranked[i].second] = it->second;
    std::stable_sort(ranked.begin(), ranked.end(), [&](const auto &a, const auto &b) {
      auto ta = timed.find(a.second), tb = timed.find(b.second);
      if (ta == timed.end() || tb == timed.end())
        return ta != timed.end() && tb == timed.end();
      return ta->second < tb->second;
    });
    model::TableEntry entry;
    entry.shape = shape;
    unsigned runs = 0;
    std::string tried;
    for (auto &[us, c] : ranked) {
      if (!c->verdict) {
        if (runs == proofBudget || !totalSpent.empty())
          break;
        ++runs;
        ++proofRuns;
        Diagnostics quiet(sourceMgr, /*printImmediately=*/false);
        BarrierProofOptions options;
        if (auto sizes = problemSizesOf(c->kernel, source, quiet); sizes && !sizes->empty()) {
          options.sizes = std::move(*sizes);
          options.sizesFrom = kProblemSizesFrom;
        }
        activeBudget()->restart();
        ProofContextScope context;
        KernelProofs proofs = runKernelProofs(c->kernel, quiet, options);
        c->verdict = proofs.verdict();
        if (activeBudget()->exceeded() != BudgetKind::None && activeBudget()->exceededTotal())
          totalSpent = activeBudget()->message();
        for (const NamedProofOutcome &p : proofs.proofs)
          if (p.outcome.verdict() != Verdict::Proved)
            c->why += fmt::format("{}{} {}", c->why.empty() ? "" : ", ", p.name,
                                  verdictName(p.outcome.verdict()));
      }
      if (*c->verdict == Verdict::Proved) {
        entry.point = c->point;
        entry.hash = fmt::format("{:016x}", structuralHash(c->kernel));
        entry.predictedUs = us;
        entry.verdict = "proved";
        if (auto t = timed.find(c); t != timed.end()) {
          entry.measuredUs = t->second;
          table.measured = true;
        }
        break;
      }
      tried += fmt::format("{}{} ({})", tried.empty() ? "" : "; ", c->point, c->why);
    }
    if (entry.point.empty()) {
      allFound = false;
      entry.reason = ranked.empty() ? "no valid point admits the shape"
                     : !totalSpent.empty()
                         ? fmt::format("no point proved before the whole command's budget ran "
                                       "out ({}){}{}",
                                       totalSpent, tried.empty() ? "" : ": ", tried)
                         : fmt::format("no point proved within {} proof runs: {}",
                                       proofBudget.getValue(), tried);
    }
    if (!json)
      llvm::outs() << fmt::format(
          "{}: {}\n", shapeText(shape),
          entry.point.empty()
              ? "none (" + entry.reason + ")"
              : fmt::format("{}  predicted {:.1f} us{}, proved", entry.point, entry.predictedUs,
                            entry.measuredUs > 0
                                ? fmt::format(", measured {:.1f} us", entry.measuredUs)
                                : std::string()));
    table.entries.push_back(std::move(entry));
  }
  std::string text = model::tuningTableJson(table);
  if (!output.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(output, ec);
    if (ec) {
      diag.error(llvm::SMLoc(), "cannot write '" + output + "': " + ec.message());
      return finishInputError(diag, json);
    }
    os << text;
  }
  if (json)
    llvm::outs() << text;
  else
    llvm::outs() << fmt::format("{} valid points ({} dropped by resources), {} proof runs on {}\n",
                                candidates.size(), droppedByResources, proofRuns, machine->name);
  if (!totalSpent.empty()) {
    if (!json)
      llvm::errs() << "tilescope tune: error: " << totalSpent << "\n";
    return kBudget;
  }
  return allFound ? kClean : kUnknown;
}

CommandRegistration registration(tuneCommand, runTune);
} // namespace
} // namespace tilescope::tool
