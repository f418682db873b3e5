// `tilescope dispatch FILE [--kernel K] [--explain]`: parse, check, dispatch
// every tile primitive to native IR and print the result in canonical form.
// --explain prints, per call, the implementation chosen and why each one
// before it refused.
#include "dispatch/Dispatch.h"
#include "ir/Checker.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "tools/Command.h"
#include "tools/InputFile.h"

#include <llvm/Support/raw_ostream.h>

namespace tilescope::tool {
namespace {
namespace cl = llvm::cl;

cl::SubCommand dispatchCommand("dispatch", "Dispatch tile primitives to native IR and print it");
cl::opt<std::string> input(cl::Positional, cl::desc("FILE"), cl::Required,
                           cl::sub(dispatchCommand));
cl::opt<std::string> kernelName("kernel", cl::desc("Dispatch only kernel K"), cl::value_desc("K"),
                                cl::sub(dispatchCommand));
cl::opt<bool> explain("explain", cl::desc("Print each decision and the refusals before it"),
                      cl::sub(dispatchCommand));

int runDispatch() {
  CommandInput in;
  if (!in.load(input, kernelName))
    return kInputError;
  const Module &module = *in.module;
  Diagnostics &diag = in.diag;
  Module out;
  for (const Kernel &k : module.kernels) {
    if (!kernelName.empty() && k.name != kernelName)
      continue;
    auto r = dispatchKernel(k, diag);
    if (!r)
      return kInputError;
    if (explain) {
      for (const DispatchDecision &d : r->decisions) {
        auto lc = in.sourceMgr.getLineAndColumn(d.loc);
        llvm::outs() << "// " << k.name << ":" << lc.first << ":" << lc.second << " "
                     << d.primitive << " -> " << d.chosen << "\n";
        for (const auto &[n, why] : d.refused)
          llvm::outs() << "//   " << n << " refused: " << why << "\n";
      }
    }
    out.kernels.push_back(std::move(r->kernel));
  }
  llvm::outs() << print(out);
  return kClean;
}

CommandRegistration registration(dispatchCommand, runDispatch);
} // namespace
} // namespace tilescope::tool
