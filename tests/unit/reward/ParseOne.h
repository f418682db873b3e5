// The one kernel of a test's tile text, parsed (the reward's unit tests).
#pragma once

#include "ir/Parser.h"

#include <doctest/doctest.h>

#include <llvm/Support/SourceMgr.h>

#include <string>

namespace tilescope {

inline Kernel parseOne(const std::string &text) {
  static llvm::SourceMgr sm; // the kernels' locations point into its buffers
  Diagnostics diag(sm, false);
  Module m = parseModuleText(text, "f.tile", diag);
  REQUIRE_FALSE(diag.hasErrors());
  REQUIRE(m.kernels.size() == 1);
  return m.kernels[0];
}

} // namespace tilescope
