// The type and well-formedness checker: names resolve, dtypes agree, calls
// match the intrinsic table, tile-primitive operands have matching shapes,
// layouts admit their buffers' shapes and live on axes their scope can hold,
// and scoped calls are not reached by only part of their scope (a `wg.` call
// under `if tid_in_wg == 0`). Reports through Diagnostics; never throws.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Stmt.h"

namespace tilescope {

// Checks every kernel of the module; returns the number of errors found.
unsigned checkModule(const Module &module, Diagnostics &diag);

} // namespace tilescope
