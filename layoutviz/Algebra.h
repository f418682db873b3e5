// The page's layout-algebra panel: one operation of ir/LayoutAlgebra.h on
// the layout being viewed, the result in S/R/O notation and both layouts'
// owners per flat index (before / after), as JSON. Depends on ir/ only.
#pragma once

#include <llvm/Support/JSON.h>

#include <string>

namespace tilescope::viz {

struct AlgebraRequest {
  std::string layout;  // A
  std::string op;      // compose | complement | divide
  std::string operand; // B, M or T
};

// Never fails: errors come back as "ok": false with a diagnostic.
llvm::json::Value evaluateAlgebra(const AlgebraRequest &request);

} // namespace tilescope::viz
