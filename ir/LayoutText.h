// Layouts as users write them: the literal notation of docs/semantics.md
// (S[...] + R[...] + k@axis, swizzle(...)) or a named preset such as
// wgmma_acc(64, 128), parsed into a LayoutSpec that keeps the spelling.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Layout.h"

#include <llvm/ADT/StringRef.h>

#include <optional>
#include <string>
#include <vector>

namespace tilescope {

struct LayoutSpec {
  Layout layout;                   // the resolved layout
  std::string preset;              // preset name; empty for a literal layout
  std::vector<int64_t> presetArgs; // its integer arguments
  llvm::SMLoc loc;                 // where the layout text starts

  // Canonical text: the preset call, or the literal layout.
  std::string str() const;
  bool operator==(const LayoutSpec &o) const {
    return layout == o.layout && preset == o.preset && presetArgs == o.presetArgs;
  }
};

// Parses a whole string as one layout. The text becomes a buffer of
// diag.sourceMgr() named `bufferName`, so diagnostics point into it.
std::optional<LayoutSpec> parseLayoutText(llvm::StringRef text, llvm::StringRef bufferName,
                                          Diagnostics &diag);

} // namespace tilescope
