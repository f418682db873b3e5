// The type and well-formedness checker: names resolve, dtypes agree, calls
// match the intrinsic table, tile-primitive operands have matching shapes,
// layouts admit their buffers' shapes and live on axes their scope can hold,
// and scoped calls are not reached by only part of their scope (a `wg.` call
// under `if tid_in_wg == 0`). Reports through Diagnostics; never throws.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Stmt.h"

#include <cstdint>

namespace tilescope {

// A kernel with parameters (ir/Space.h) is checked at each point of its space
// its constraints admit, up to this many points (the GEMM family has 8064:
// at 4096 `tune` and `predict` saw none of its 128-row points; with BN not a
// multiple of 64, BM = 192 and 256 it has 66,528, of which the first 16384
// are its 64-row points only). Enumerating the family takes about 2 s.
constexpr int64_t kMaxPointsChecked = int64_t{1} << 18;

// Checks every kernel of the module; returns the number of errors found.
unsigned checkModule(const Module &module, Diagnostics &diag);

} // namespace tilescope
