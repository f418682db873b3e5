#include "tools/InputFile.h"

#include <llvm/Support/MemoryBuffer.h>

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

} // namespace tilescope::tool
