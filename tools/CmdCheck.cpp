// `tilescope check [FILE] [--kernel K] [--set P=V,...] [--args M=..,K=..]
// [--max-states N] [--json]`: parse, type and well-formedness checks, then the proofs: layout
// legality, barrier protocols, static races. Where a barrier proof is out of
// reach, the exhaustive check of the concrete run decides it at the sizes of
// --args (else the smallest the where clause admits that run every ring
// twice), and the summary says which method decided. --args must fit the
// kernels checked whether or not a proof needs it: a name none of them has,
// or sizes their where clause does not admit, are input errors. Without FILE
// it checks the bundled kernel library. Each kernel gets a verdict
// (ir/Verdict.h): proved (exit 0), finding (1), unknown (3: an obligation
// neither proved nor checked), budget (4); input errors exit 2. Several
// kernels exit with the weightiest verdict. --timeout-ms and --max-memory-mb
// bound each file's run (tools/Budgets.h): past one, the proofs left are not
// run and the kernel's verdict is budget, unless a finding came first.
// A kernel with parameters (ir/Space.h) is proved at every point its
// constraints admit, or at the point of --set, one verdict per point; the
// library check proves a family's named points (a point whose instance is a
// library kernel, name aside, is checked as that kernel). Each point is
// checked in a Z3 context of its own (proof/ProofContext.h), so its
// verdict does not depend on the points or kernels checked before it, and
// with the whole --timeout-ms and --max-memory-mb: a point out of budget is
// `budget`, and the points after it are still checked.
#include "check/KernelProofs.h"
#include "ir/Checker.h"
#include "ir/Instantiate.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "kernels/BundledKernels.h"
#include "tools/Budgets.h"
#include "tools/Command.h"
#include "tools/InputFile.h"
#include "tools/JsonOutput.h"
#include "tools/NameValues.h"
#include "tools/ProblemSizes.h"
#include "tools/OptionValues.h"
#include "verifier/BarrierProofs.h"
#include "proof/ProofContext.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace tilescope::tool {
namespace {
namespace cl = llvm::cl;

cl::SubCommand checkCommand("check", "Parse and check a kernel file");
cl::opt<std::string> input(cl::Positional, cl::desc("[FILE]"), cl::sub(checkCommand));
cl::opt<std::string> kernelName("kernel", cl::desc("Check only kernel K"), cl::value_desc("K"),
                                cl::sub(checkCommand));
cl::opt<bool> json("json", cl::desc("Print the result as JSON"), cl::sub(checkCommand));

cl::opt<std::string> argsText("args",
                              cl::desc("Sizes for the exhaustive barrier check where a proof is "
                                       "out of reach, e.g. M=128,N=128,K=512"),
                              cl::value_desc("NAME=VALUE,..."), cl::sub(checkCommand));
cl::opt<std::string> setText("set",
                             cl::desc("Check one point of a kernel with parameters: "
                                      "NAME=VALUE,... or a named point (default: every valid "
                                      "point; the library check: its named points)"),
                             cl::value_desc("NAME=VALUE,..."), cl::sub(checkCommand));
IntOption<unsigned> maxStates("max-states",
                            cl::desc("States the exhaustive barrier check may visit"),
                            cl::init(200000), cl::sub(checkCommand));
BudgetOptions budgetOptions(checkCommand, /*withSteps=*/false, kDefaultTimeoutMs,
                            kDefaultWallTimeoutMs, /*withTotals=*/true);

struct FileResult {
  std::string file;
  int status = kClean;
  Module module;
  std::vector<std::string> points; // per kernel: the point it instantiates, or empty
  std::vector<KernelProofs> kernels;
  std::vector<std::string> notes; // points left out, said after the results
};

// Kernels of the bundled library without parameters, by the hash of their
// canonical text with the name left out, and where they are.
const std::map<uint64_t, std::string> &libraryKernelsByText() {
  static const std::map<uint64_t, std::string> byText = [] {
    std::map<uint64_t, std::string> out;
    llvm::SourceMgr sm;
    Diagnostics quiet(sm, false);
    for (const BundledKernelFile &f : bundledKernelFiles())
      for (Kernel k : parseModuleText(f.text, f.name, quiet).kernels)
        if (k.space.empty()) {
          std::string where = fmt::format("kernel {} of kernels/{}", k.name, f.name);
          k.name.clear();
          out.emplace(structuralHash(k), where);
        }
    return out;
  }();
  return byText;
}

// The library kernel (without parameters) that `k` is, name aside, if any.
std::string sameAsLibraryKernel(Kernel k) {
  k.name.clear();
  auto it = libraryKernelsByText().find(structuralHash(k));
  return it == libraryKernelsByText().end() ? std::string() : it->second;
}

// Replaces each kernel of `r.module` that has parameters by its instances:
// the point of --set, the named points (`namedOnly`: the library check,
// which leaves out a point whose instance is a library kernel, name aside,
// checked as that kernel), or every point the constraints admit. False
// after diagnostics when --set names no point.
bool expandSpaces(FileResult &r, bool namedOnly, Diagnostics &diag) {
  std::vector<Kernel> kernels;
  std::vector<std::string> points;
  for (const Kernel &k : r.module.kernels) {
    if (k.space.empty()) {
      kernels.push_back(k);
      points.emplace_back();
      continue;
    }
    std::vector<Point> chosen;
    if (!setText.empty()) {
      auto p = parsePoint(k, setText, diag);
      if (!p)
        return false;
      chosen.push_back(std::move(*p));
    } else if (namedOnly) {
      for (const NamedPoint &n : k.space.points)
        chosen.push_back(n.values);
    }
    size_t others = 0;
    SpaceEnumeration all;
    if (setText.empty())
      all = enumerateSpace(k, kMaxPointsChecked);
    for (const SpacePoint &p : all.points)
      if (p.instance.kernel) {
        if (!namedOnly)
          chosen.push_back(p.point);
        else
          others += std::none_of(chosen.begin(), chosen.end(), [&](const Point &c) {
            return pointText(c) == pointText(p.point);
          });
      }
    if (namedOnly && others)
      r.notes.push_back(fmt::format("kernel {}: its {} named point{} checked here; its {} other "
                                    "valid point{} are checked by `tilescope check {}`",
                                    k.name, chosen.size(), chosen.size() == 1 ? "" : "s", others,
                                    others == 1 ? "" : "s", r.file));
    if (all.capped)
      r.notes.push_back(fmt::format("kernel {}: the space has {} points; only the first {} were "
                                    "checked",
                                    k.name, all.total, kMaxPointsChecked));
    for (const Point &p : chosen) {
      Instance inst = instantiate(k, p);
      if (!inst.kernel) {
        diag.error(inst.loc,
                   fmt::format("point {} of kernel '{}' {}", pointText(p), k.name,
                               whyNotInstantiated(inst)));
        return false;
      }
      if (namedOnly)
        if (std::string same = sameAsLibraryKernel(*inst.kernel); !same.empty()) {
          r.notes.push_back(fmt::format("kernel {} at {} is {} (the same canonical text, name "
                                        "aside): checked as that kernel",
                                        k.name, pointText(p), same));
          continue;
        }
      kernels.push_back(std::move(*inst.kernel));
      points.push_back(pointText(p));
    }
  }
  r.module.kernels = std::move(kernels);
  r.points = std::move(points);
  return true;
}

// An input error, at the first kernel, for each name of `args` that no
// kernel of `kernels` (one file's) can take.
void reportUnknownArgs(const NameValues &args, const std::vector<Kernel> &kernels,
                       Diagnostics &diag) {
  std::vector<const Kernel *> all;
  for (const Kernel &k : kernels)
    all.push_back(&k);
  for (const std::string &name : namesNoKernelTakes(args, all))
    diag.error(kernels.front().loc,
               kernels.size() == 1
                   ? fmt::format("--args gives '{}', but kernel '{}' has no shape symbol or scalar "
                                 "parameter of that name (it has {})",
                                 name, kernels.front().name, namesKernelTakes(kernels.front()))
                   : fmt::format("--args gives '{}', but no kernel in this file has a shape "
                                 "symbol or scalar parameter of that name",
                                 name));
}

// The names of `args` that no kernel of the bundled library can take
// (checking the whole library, each file's kernels need only some of them).
std::vector<std::string> namesNoLibraryKernelTakes(const NameValues &args) {
  llvm::SourceMgr sm;
  Diagnostics quiet(sm, false);
  std::vector<Module> modules;
  for (const BundledKernelFile &f : bundledKernelFiles())
    modules.push_back(parseModuleText(f.text, f.name, quiet));
  std::vector<const Kernel *> all;
  for (const Module &m : modules)
    for (const Kernel &k : m.kernels)
      all.push_back(&k);
  return namesNoKernelTakes(args, all);
}

// Parses and checks one buffer of `diag`'s source manager. The sizes of
// `args` must be admitted by its kernels' where clauses, and with
// `namesMustFit` every name must be one of theirs.
FileResult checkBuffer(unsigned id, const std::string &file, Diagnostics &diag,
                       const NameValues &args, bool namesMustFit,
                       const BarrierProofOptions &options) {
  FileResult r;
  r.file = file;
  unsigned before = diag.errorCount();
  r.module = parseModule(id, diag);
  if (diag.errorCount() == before && !kernelName.empty()) {
    if (const Kernel *k = r.module.find(kernelName)) {
      Module only;
      only.kernels.push_back(*k);
      r.module = std::move(only);
    } else {
      r.module.kernels.clear();
    }
  }
  if (diag.errorCount() == before)
    checkModule(r.module, diag);
  if (diag.errorCount() == before)
    expandSpaces(r, /*namedOnly=*/!namesMustFit, diag);
  else
    r.points.assign(r.module.kernels.size(), "");
  // Sizes the kernels cannot take are an input error even where no proof
  // reads them (only the exhaustive check does), rather than ignored.
  if (diag.errorCount() == before && !r.module.kernels.empty()) {
    if (namesMustFit)
      reportUnknownArgs(args, r.module.kernels, diag);
    reportBrokenConstraints(args, r.module.kernels, diag);
  }
  if (diag.errorCount() != before) {
    r.status = kInputError;
    return r;
  }
  // Per kernel, the sizes of its problem annotation where --args gives none.
  std::vector<BarrierProofOptions> kernelOptions(r.module.kernels.size(), options);
  llvm::StringRef source = diag.sourceMgr().getMemoryBuffer(id)->getBuffer();
  for (size_t i = 0; i < r.module.kernels.size(); ++i)
    kernelOptions[i].problemPlacements = problemPlacementsOf(r.module.kernels[i], source);
  for (size_t i = 0; i < r.module.kernels.size() && args.ints.empty() && args.floats.empty(); ++i) {
    auto sizes = problemSizesOf(r.module.kernels[i], source, diag);
    if (sizes && !sizes->empty()) {
      kernelOptions[i].sizes = std::move(*sizes);
      kernelOptions[i].sizesFrom = kProblemSizesFrom;
    }
  }
  if (diag.errorCount() != before) {
    r.status = kInputError;
    return r;
  }
  Verdict verdict = Verdict::Proved;
  for (size_t i = 0; i < r.module.kernels.size(); ++i) {
    if (r.points[i].empty()) {
      r.kernels.push_back(runKernelProofs(r.module.kernels[i], diag, kernelOptions[i]));
    } else {
      // A point of a space: the verdict a process of its own would give (a
      // Z3 context of its own, proof/ProofContext.h) within a budget of
      // its own (the whole --timeout-ms, as each library file has), as
      // far as the command's total (--total-timeout-ms) leaves it: points
      // x budget is no bound on a space of thousands of points.
      activeBudget()->restart();
      ProofContextScope context;
      r.kernels.push_back(runKernelProofs(r.module.kernels[i], diag, kernelOptions[i]));
    }
    verdict = combine(verdict, r.kernels.back().verdict());
  }
  r.status = verdictExitCode(verdict);
  return r;
}

// Of two exit statuses, the one to report: an input error, then a finding,
// then a budget, then unknown, then clean.
int weightierStatus(int a, int b) {
  auto weight = [](int s) {
    switch (s) {
    case kInputError:
      return 4;
    case kFindings:
      return 3;
    case kBudget:
      return 2;
    case kUnknown:
      return 1;
    default:
      return 0;
    }
  };
  return weight(a) >= weight(b) ? a : b;
}

std::string_view statusVerdict(int status) {
  switch (status) {
  case kClean:
    return "proved";
  case kFindings:
    return "finding";
  case kUnknown:
    return "unknown";
  case kBudget:
    return "budget";
  default:
    return "error";
  }
}

int runChecks();

int runCheck() {
  if (int bad = budgetOptions.usageError("check"))
    return bad;
  Budget budget(budgetOptions.limits());
  return runWithinBudget(budget, runChecks, [&] {
    llvm::SourceMgr sm;
    Diagnostics none(sm, false);
    return finishBudget(budget, none, json, "check");
  });
}

int runChecks() {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr, /*printImmediately=*/!json);
  std::vector<FileResult> results;
  BarrierProofOptions options;
  options.stateCap = maxStates;
  std::string argsError;
  auto sizes = parseNameValues(argsText, &argsError);
  if (!sizes) {
    diag.error(llvm::SMLoc(), argsError);
    return finishInputError(diag, json);
  }
  options.sizes = sizes->ints;
  if (!input.empty()) {
    if (auto id = loadInput(input, diag))
      results.push_back(checkBuffer(*id, input, diag, *sizes, true, options));
    else {
      FileResult unread;
      unread.file = input.getValue();
      unread.status = kInputError;
      results.push_back(std::move(unread));
    }
  } else {
    for (const std::string &name : namesNoLibraryKernelTakes(*sizes))
      diag.error(llvm::SMLoc(), fmt::format("--args gives '{}', but no kernel of the library has a "
                                            "shape symbol or scalar parameter of that name",
                                            name));
    if (diag.hasErrors())
      return finishInputError(diag, json);
    for (const BundledKernelFile &f : bundledKernelFiles()) {
      std::string name = "kernels/" + std::string(f.name);
      unsigned id = sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBuffer(f.text, name),
                                                 llvm::SMLoc());
      activeBudget()->restart(); // each library file has the whole budget
      results.push_back(checkBuffer(id, name, diag, *sizes, false, options));
    }
  }
  int status = kClean;
  size_t kernelsFound = 0;
  for (const FileResult &r : results) {
    status = weightierStatus(status, r.status);
    kernelsFound += r.module.kernels.size();
  }
  if (status != kInputError && !kernelName.empty() && kernelsFound == 0) {
    diag.error(llvm::SMLoc(), fmt::format("no kernel named '{}'", kernelName.getValue()));
    status = kInputError;
  }
  if (json) {
    llvm::json::Array files;
    for (const FileResult &r : results) {
      llvm::json::Array kernels;
      for (size_t i = 0; i < r.kernels.size(); ++i) {
        const Kernel &k = r.module.kernels[i];
        llvm::json::Object proofs;
        for (const NamedProofOutcome &p : r.kernels[i].proofs) {
          const ProofOutcome &o = p.outcome;
          llvm::json::Array unknown;
          for (const auto &[loc, why] : o.unknown)
            unknown.push_back(why);
          llvm::json::Object po{{"verdict", std::string(verdictName(o.verdict()))},
                                {"findings", static_cast<int64_t>(o.findings)},
                                {"ok", o.verdict() == Verdict::Proved}};
          if (!o.unknown.empty())
            po["unknown"] = std::move(unknown);
          if (!o.method.empty()) // how the barrier protocol was decided
            po["method"] = o.method;
          proofs[p.name] = std::move(po);
        }
        Verdict v = r.kernels[i].verdict();
        llvm::json::Object kernelJson{{"name", k.name},
                                      {"verdict", std::string(verdictName(v))},
                                      {"ok", v == Verdict::Proved},
                                      {"hash", fmt::format("{:016x}", structuralHash(k))},
                                      {"target", std::string(targetInfo(k.launch.target).name)},
                                      {"threads", k.launch.threads},
                                      {"proofs", std::move(proofs)}};
        if (!r.points[i].empty())
          kernelJson["point"] = r.points[i];
        kernels.push_back(std::move(kernelJson));
      }
      files.push_back(llvm::json::Object{{"file", r.file},
                                         {"status", r.status},
                                         {"verdict", std::string(statusVerdict(r.status))},
                                         {"kernels", std::move(kernels)}});
    }
    llvm::json::Object out{{"ok", status == kClean},
                           {"verdict", std::string(statusVerdict(status))},
                           {"status", status},
                           {"files", std::move(files)},
                           {"diagnostics", diagnosticsJson(diag)}};
    if (activeBudget()->exceeded() != BudgetKind::None)
      out["budget"] = budgetJson(*activeBudget());
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
  } else {
    for (const FileResult &r : results)
      for (size_t i = 0; i < r.kernels.size(); ++i) {
        const Kernel &k = r.module.kernels[i];
        std::string proofs;
        for (const NamedProofOutcome &p : r.kernels[i].proofs) {
          const ProofOutcome &o = p.outcome;
          std::string said;
          switch (o.verdict()) {
          case Verdict::Finding:
            said = fmt::format("{} finding{}", o.findings, o.findings == 1 ? "" : "s");
            break;
          case Verdict::Unknown:
            said = llvm::StringRef(o.method).startswith("not ")
                       ? o.method
                       : fmt::format("not proved: {}{}", o.unknown.front().second,
                                     o.unknown.size() == 1
                                         ? std::string()
                                         : fmt::format(" (and {} more)", o.unknown.size() - 1));
            break;
          case Verdict::Budget:
            said = "budget exceeded";
            break;
          case Verdict::Proved:
            said = o.method.empty() || o.method == "proved for all sizes" ? std::string("proved")
                                                                          : o.method;
            break;
          }
          proofs += fmt::format("{}{} {}", proofs.empty() ? "" : ", ", p.name, said);
        }
        Verdict v = r.kernels[i].verdict();
        std::string_view summary = v == Verdict::Proved    ? "ok"
                                   : v == Verdict::Finding ? "has findings"
                                   : v == Verdict::Budget  ? "budget exceeded"
                                                           : "unknown";
        std::string at = r.points[i].empty() ? "" : " at " + r.points[i];
        llvm::outs() << fmt::format("{}: kernel {}{} {} ({}, {} threads; {})\n", r.file, k.name, at,
                                    summary, targetInfo(k.launch.target).name, k.launch.threads,
                                    proofs);
      }
    for (const FileResult &r : results)
      for (const std::string &note : r.notes)
        llvm::outs() << r.file << ": note: " << note << "\n";
  }
  return status;
}

CommandRegistration registration(checkCommand, runCheck);
} // namespace
} // namespace tilescope::tool
