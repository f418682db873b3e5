#include "tools/InputFile.h"

#include "ir/Checker.h"
#include "ir/Parser.h"

#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

namespace tilescope::tool {

std::optional<unsigned> loadInput(llvm::StringRef path, Diagnostics &diag) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/false,
                                                   /*RequiresNullTerminator=*/false);
  if (!buffer) {
    diag.error(llvm::SMLoc(), "cannot read '" + path + "': " + buffer.getError().message());
    return std::nullopt;
  }
  return diag.sourceMgr().AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
}

std::optional<Module> loadModule(llvm::StringRef path, Diagnostics &diag, Checked check) {
  auto id = loadInput(path, diag);
  if (!id)
    return std::nullopt;
  Module module = parseModule(*id, diag);
  if (!diag.hasErrors() && check == Checked::Yes)
    checkModule(module, diag);
  if (diag.hasErrors())
    return std::nullopt;
  return module;
}

bool CommandInput::load(llvm::StringRef path, llvm::StringRef kernel) {
  module = loadModule(path, diag, Checked::Yes);
  if (!module)
    return false;
  if (kernel.empty() || module->find(std::string_view(kernel)))
    return true;
  llvm::errs() << "tilescope: error: no kernel named '" << kernel << "'\n";
  return false;
}

} // namespace tilescope::tool
