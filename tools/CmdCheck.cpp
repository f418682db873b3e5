// `tilescope check FILE [--kernel K] [--json]`: parse, type and well-formedness
// checks, then the proofs the verifier offers. Input errors exit 2; findings
// of the proofs exit 1.
#include "ir/Checker.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "tools/Command.h"
#include "tools/InputFile.h"
#include "tools/JsonOutput.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

namespace tilescope::tool {
namespace {
namespace cl = llvm::cl;

cl::SubCommand checkCommand("check", "Parse and check a kernel file");
cl::opt<std::string> input(cl::Positional, cl::desc("FILE"), cl::Required, cl::sub(checkCommand));
cl::opt<std::string> kernelName("kernel", cl::desc("Check only kernel K"), cl::value_desc("K"),
                                cl::sub(checkCommand));
cl::opt<bool> json("json", cl::desc("Print the result as JSON"), cl::sub(checkCommand));

int runCheck() {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr, /*printImmediately=*/!json);
  int status = kClean;
  Module module;
  if (auto id = loadInput(input, diag)) {
    module = parseModule(*id, diag);
    if (!diag.hasErrors() && !kernelName.empty()) {
      const Kernel *k = module.find(kernelName);
      if (!k) {
        diag.error(module.kernels.front().loc,
                   fmt::format("no kernel named '{}' in this file", kernelName.getValue()));
      } else {
        Module only;
        only.kernels.push_back(*k);
        module = std::move(only);
      }
    }
    if (!diag.hasErrors())
      checkModule(module, diag);
  }
  if (diag.hasErrors())
    status = kInputError;
  if (json) {
    llvm::json::Array kernels;
    if (status == kClean)
      for (const Kernel &k : module.kernels)
        kernels.push_back(llvm::json::Object{
            {"name", k.name},
            {"hash", fmt::format("{:016x}", structuralHash(k))},
            {"target", std::string(targetInfo(k.launch.target).name)},
            {"threads", k.launch.threads}});
    llvm::json::Object out{{"file", input.getValue()},
                           {"ok", status == kClean},
                           {"status", status},
                           {"kernels", std::move(kernels)},
                           {"diagnostics", diagnosticsJson(diag)}};
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
  } else if (status == kClean) {
    for (const Kernel &k : module.kernels)
      llvm::outs() << fmt::format("{}: kernel {} ok\n", input.getValue(), k.name);
  }
  return status;
}

CommandRegistration registration(checkCommand, runCheck);
} // namespace
} // namespace tilescope::tool
