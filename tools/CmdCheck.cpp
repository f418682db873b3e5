// `tilescope check [FILE] [--kernel K] [--json]`: parse, type and
// well-formedness checks, then the proofs: layout legality, barrier
// protocols, static races. Without FILE it
// checks the bundled kernel library. Input errors exit 2; findings of the
// proofs exit 1.
#include "ir/Checker.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "kernels/BundledKernels.h"
#include "racecheck/StaticRaces.h"
#include "tools/Command.h"
#include "tools/InputFile.h"
#include "tools/JsonOutput.h"
#include "verifier/BarrierProofs.h"
#include "verifier/KernelLayouts.h"

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

// The proofs run on each well-formed kernel, in order. Each reports its
// findings as diagnostics and returns how many.
struct Proof {
  const char *name;
  unsigned (*run)(const Kernel &, Diagnostics &);
};
const Proof kProofs[] = {
    {"layouts", [](const Kernel &k, Diagnostics &d) { return checkKernelLayouts(k, d); }},
    {"barriers", verifyBarrierProtocols},
    {"races", verifyStaticRaces},
};

struct KernelResult {
  std::vector<std::pair<std::string, unsigned>> findings; // proof name, count
};

struct FileResult {
  std::string file;
  int status = kClean;
  Module module;
  std::vector<KernelResult> kernels;
};

// Parses and checks one buffer of `diag`'s source manager.
FileResult checkBuffer(unsigned id, const std::string &file, Diagnostics &diag) {
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
  if (diag.errorCount() != before) {
    r.status = kInputError;
    return r;
  }
  for (const Kernel &k : r.module.kernels) {
    KernelResult kr;
    for (const Proof &p : kProofs) {
      unsigned n = p.run(k, diag);
      kr.findings.push_back({p.name, n});
      if (n)
        r.status = kFindings;
    }
    r.kernels.push_back(std::move(kr));
  }
  return r;
}

int runCheck() {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr, /*printImmediately=*/!json);
  std::vector<FileResult> results;
  if (!input.empty()) {
    if (auto id = loadInput(input, diag))
      results.push_back(checkBuffer(*id, input, diag));
    else
      results.push_back({input.getValue(), kInputError, {}});
  } else {
    for (const BundledKernelFile &f : bundledKernelFiles()) {
      std::string name = "kernels/" + std::string(f.name);
      unsigned id = sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBuffer(f.text, name),
                                                 llvm::SMLoc());
      results.push_back(checkBuffer(id, name, diag));
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
        for (const auto &[name, n] : r.kernels[i].findings)
          proofs[name] = llvm::json::Object{{"findings", static_cast<int64_t>(n)}, {"ok", n == 0}};
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
        for (const auto &[name, n] : r.kernels[i].findings) {
          proofs += fmt::format("{}{} {}", proofs.empty() ? "" : ", ", name,
                                n ? fmt::format("{} finding{}", n, n == 1 ? "" : "s") : "proved");
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
