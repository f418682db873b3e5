// Diagnostics as JSON, the machine interface every command shares:
// [{"severity": "error", "file": ..., "line": 3, "column": 7, "message": ...}].
#pragma once

#include "ir/Diagnostics.h"

#include <llvm/Support/JSON.h>

namespace tilescope::tool {

llvm::json::Array diagnosticsJson(const Diagnostics &diag);

// The end of a command stopped by an input error: with `json`, prints
// {"ok": false, "status": 2, "diagnostics": [...]} (without it the
// diagnostics were printed as they came); returns exit status 2.
int finishInputError(const Diagnostics &diag, bool json);

} // namespace tilescope::tool
