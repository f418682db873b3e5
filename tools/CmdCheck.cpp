// `tilescope check [FILE] [--kernel K] [--args M=..,K=..] [--max-states N]
// [--json]`: parse, type and well-formedness checks, then the proofs: layout
// legality, barrier protocols, static races. Where a barrier proof is out of
// reach, the exhaustive check of the concrete run decides it at the sizes of
// --args (else the smallest the where clause admits that run every ring
// twice), and the summary says which method decided. --args must fit the
// kernels checked whether or not a proof needs it: a name none of them has,
// or sizes their where clause does not admit, are input errors. Without FILE
// it checks the bundled kernel library. Input errors exit 2; findings of the
// proofs exit 1.
#include "ir/Checker.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "kernels/BundledKernels.h"
#include "racecheck/StaticRaces.h"
#include "tools/Command.h"
#include "tools/InputFile.h"
#include "tools/JsonOutput.h"
#include "tools/NameValues.h"
#include "tools/ProblemSizes.h"
#include "verifier/BarrierProofs.h"
#include "verifier/KernelLayouts.h"
#include "verifier/WriteCoverage.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

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
cl::opt<unsigned> maxStates("max-states",
                            cl::desc("States the exhaustive barrier check may visit"),
                            cl::init(200000), cl::sub(checkCommand));

// What one proof found on one kernel, and how it decided.
struct ProofRun {
  unsigned findings = 0;
  std::string method; // empty: "proved"
};

// The proofs run on each well-formed kernel, in order. Each reports its
// findings as diagnostics.
struct Proof {
  const char *name;
  ProofRun (*run)(const Kernel &, Diagnostics &, const BarrierProofOptions &);
};
const Proof kProofs[] = {
    {"layouts",
     [](const Kernel &k, Diagnostics &d, const BarrierProofOptions &) {
       return ProofRun{checkKernelLayouts(k, d), ""};
     }},
    {"barriers",
     [](const Kernel &k, Diagnostics &d, const BarrierProofOptions &o) {
       ProofRun r;
       r.findings = verifyBarrierProtocols(k, d, o, &r.method);
       return r;
     }},
    {"races",
     [](const Kernel &k, Diagnostics &d, const BarrierProofOptions &) {
       return ProofRun{verifyStaticRaces(k, d), ""};
     }},
    {"coverage",
     [](const Kernel &k, Diagnostics &d, const BarrierProofOptions &) {
       CoverageReport report = proveWriteCoverage(k);
       return ProofRun{reportWriteCoverage(report, d), report.method};
     }},
};

struct KernelResult {
  std::vector<std::pair<std::string, ProofRun>> proofs; // by proof name
};

struct FileResult {
  std::string file;
  int status = kClean;
  Module module;
  std::vector<KernelResult> kernels;
};

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
  for (size_t i = 0; i < r.module.kernels.size(); ++i) {
    const Kernel &k = r.module.kernels[i];
    KernelResult kr;
    for (const Proof &p : kProofs) {
      ProofRun run = p.run(k, diag, kernelOptions[i]);
      if (run.findings)
        r.status = kFindings;
      kr.proofs.push_back({p.name, std::move(run)});
    }
    r.kernels.push_back(std::move(kr));
  }
  return r;
}

int runCheck() {
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
    else
      results.push_back({input.getValue(), kInputError, {}});
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
      results.push_back(checkBuffer(id, name, diag, *sizes, false, options));
    }
  }
  int status = kClean;
  size_t kernelsFound = 0;
  for (const FileResult &r : results) {
    status = std::max(status, r.status);
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
        for (const auto &[name, run] : r.kernels[i].proofs) {
          llvm::json::Object o{{"findings", static_cast<int64_t>(run.findings)},
                               {"ok", run.findings == 0}};
          if (!run.method.empty()) // how the barrier protocol was decided
            o["method"] = run.method;
          proofs[name] = std::move(o);
        }
        kernels.push_back(
            llvm::json::Object{{"name", k.name},
                               {"hash", fmt::format("{:016x}", structuralHash(k))},
                               {"target", std::string(targetInfo(k.launch.target).name)},
                               {"threads", k.launch.threads},
                               {"proofs", std::move(proofs)}});
      }
      files.push_back(llvm::json::Object{
          {"file", r.file}, {"status", r.status}, {"kernels", std::move(kernels)}});
    }
    llvm::json::Object out{{"ok", status == kClean},
                           {"status", status},
                           {"files", std::move(files)},
                           {"diagnostics", diagnosticsJson(diag)}};
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
  } else {
    for (const FileResult &r : results)
      for (size_t i = 0; i < r.kernels.size(); ++i) {
        const Kernel &k = r.module.kernels[i];
        std::string proofs;
        unsigned total = 0;
        for (const auto &[name, run] : r.kernels[i].proofs) {
          unsigned n = run.findings;
          bool proved = run.method.empty() || run.method == "proved for all sizes";
          proofs += fmt::format("{}{} {}", proofs.empty() ? "" : ", ", name,
                                n        ? fmt::format("{} finding{}", n, n == 1 ? "" : "s")
                                : proved ? std::string("proved")
                                         : run.method);
          total += n;
        }
        llvm::outs() << fmt::format("{}: kernel {} {} ({}, {} threads; {})\n", r.file, k.name,
                                    total ? "has findings" : "ok", targetInfo(k.launch.target).name,
                                    k.launch.threads, proofs);
      }
  }
  return status;
}

CommandRegistration registration(checkCommand, runCheck);
} // namespace
} // namespace tilescope::tool
