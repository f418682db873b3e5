// The problem sizes a kernel file names (`// problem: gemm(A, B^T -> C,
// M = 4096, N = 4096, K = 4096)`, simulator/Problem.h), read by `check` and
// `race --static` for the exhaustive barrier check when no --args is given.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Placement.h"
#include "ir/Stmt.h"

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace tilescope::tool {

// How the sizes are named in the fallback's messages (BarrierProofOptions::sizesFrom).
inline constexpr const char *kProblemSizesFrom = "its `// problem:` annotation";

// The sizes the annotation of `kernel` in `source` names (empty without an
// annotation or sizes): nothing, with an input error at the piece of the
// annotation at fault, when it does not parse, when a size is not a positive
// integer, or when the sizes break a where constraint whose names they bind.
std::optional<std::map<std::string, int64_t>>
problemSizesOf(const Kernel &kernel, llvm::StringRef source, Diagnostics &diag);

// What the annotation of `kernel` reads of its tensors' placements over the
// devices (simulator/DeviceSimulate.h, problemPlacements); empty without an
// annotation that parses or for a problem that is not a device problem.
std::vector<ProblemPlacement> problemPlacementsOf(const Kernel &kernel, llvm::StringRef source);

} // namespace tilescope::tool
