// `tilescope fmt FILE`: print the module in canonical form.
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "tools/Command.h"
#include "tools/InputFile.h"

#include <llvm/Support/Format.h>
#include <llvm/Support/raw_ostream.h>

namespace tilescope::tool {
namespace {
namespace cl = llvm::cl;

cl::SubCommand fmtCommand("fmt", "Print a kernel file in canonical form");
cl::opt<std::string> input(cl::Positional, cl::desc("FILE"), cl::Required, cl::sub(fmtCommand));
cl::opt<bool> hashOnly("hash", cl::desc("Print each kernel's structural hash instead"),
                       cl::sub(fmtCommand));

int runFmt() {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr);
  std::optional<Module> loaded = loadModule(input, diag, Checked::No);
  if (!loaded)
    return kInputError;
  const Module &module = *loaded;
  if (hashOnly) {
    for (const Kernel &k : module.kernels)
      llvm::outs() << llvm::format_hex_no_prefix(structuralHash(k), 16) << "  " << k.name << "\n";
    return kClean;
  }
  llvm::outs() << print(module);
  return kClean;
}

CommandRegistration registration(fmtCommand, runFmt);
} // namespace
} // namespace tilescope::tool
