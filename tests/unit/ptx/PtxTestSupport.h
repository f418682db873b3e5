// Parsing PTX text in unit tests.
#pragma once

#include "ptx/Parser.h"

#include <llvm/Support/MemoryBuffer.h>

#include <memory>
#include <string>

namespace tilescope::ptx::test {

struct Parsed {
  llvm::SourceMgr sm;
  Diagnostics diag{sm, /*printImmediately=*/false};
  std::optional<Module> module;
};

inline std::unique_ptr<Parsed> parse(const std::string &text) {
  auto p = std::make_unique<Parsed>();
  unsigned id =
      p->sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "t.ptx"), llvm::SMLoc());
  p->module = parseModule(id, p->diag);
  return p;
}

} // namespace tilescope::ptx::test
