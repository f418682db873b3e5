// Diagnostics as JSON, the machine interface every command shares:
// [{"severity": "error", "file": ..., "line": 3, "column": 7, "message": ...}].
#pragma once

#include "ir/Diagnostics.h"

#include <llvm/Support/JSON.h>

namespace tilescope::tool {

llvm::json::Array diagnosticsJson(const Diagnostics &diag);

} // namespace tilescope::tool
