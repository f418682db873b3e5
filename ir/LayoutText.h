// Layouts as users write them: the literal notation of docs/semantics.md
// (S[...] + R[...] + k@axis, swizzle(...)) or a named preset such as
// wgmma_acc(64, 128), parsed into a LayoutSpec that keeps the spelling.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Expr.h"
#include "ir/Layout.h"

#include <llvm/ADT/StringRef.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilescope {

// The numbers of a layout whose text names kernel parameters
// (`S[(STAGES, BM, 64):(BM * 64, 64, 1)]`, `wgmma_acc(64, BN)`), kept as
// expressions until a point of the kernel's space is instantiated
// (ir/Instantiate.h). The swizzle mode and the axes are constants.
struct LayoutTerms {
  struct IterTerms {
    Expr extent, stride;
    Axis axis = Axis::m;
  };
  std::vector<IterTerms> shard, replica;
  std::vector<std::pair<Axis, Expr>> offset;
  std::optional<Swizzle> swizzle;
  std::vector<Expr> presetArgs; // a preset's arguments
  std::string str(const std::string &preset) const;
  bool operator==(const LayoutTerms &o) const;
};

struct LayoutSpec {
  Layout layout;                   // the resolved layout (unset while `terms` is)
  std::string preset;              // preset name; empty for a literal layout
  std::vector<int64_t> presetArgs; // its integer arguments
  llvm::SMLoc loc;                 // where the layout text starts
  // Set when a number of the text names a kernel parameter: the layout is
  // resolved only once the parameters have values.
  std::shared_ptr<const LayoutTerms> terms;

  // Canonical text: the preset call, or the literal layout.
  std::string str() const;
  bool operator==(const LayoutSpec &o) const {
    if (bool(terms) != bool(o.terms) || (terms && !(*terms == *o.terms)))
      return false;
    return layout == o.layout && preset == o.preset && presetArgs == o.presetArgs;
  }
};

// The value of a number of a layout's text, or nothing when it has none yet.
using LayoutNumberValue = std::function<std::optional<int64_t>(const Expr &)>;

// The literal layout `terms` spell once each number has a value; nothing,
// with `why`, when a number has none or the layout is not legal.
std::optional<Layout> buildLayout(const LayoutTerms &terms, const LayoutNumberValue &value,
                                  std::string *why);

// `spec` with its terms resolved (a preset built from its arguments); a
// spec without terms comes back unchanged.
std::optional<LayoutSpec> resolveLayout(const LayoutSpec &spec, const LayoutNumberValue &value,
                                        std::string *why);

// Parses a whole string as one layout. The text becomes a buffer of
// diag.sourceMgr() named `bufferName`, so diagnostics point into it.
std::optional<LayoutSpec> parseLayoutText(llvm::StringRef text, llvm::StringRef bufferName,
                                          Diagnostics &diag);

} // namespace tilescope
