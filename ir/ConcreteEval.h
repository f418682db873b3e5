// Integer expressions of the IR evaluated at concrete values: the thread
// conditions of the skeleton (every thread of the launch) and the barrier
// indices, parities, guards and loop bounds of the exhaustive fallback (one
// size assignment), and the checker's thread-uniformity of conditions.
// Names and builtins are the caller's: `leaf` gives the value of a Var or
// Builtin, or nothing when it has none.
#pragma once

#include "ir/Expr.h"

#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace tilescope {

using LeafValue = std::function<std::optional<int64_t>(const Expr &)>;

// Literals, + - * / % (C semantics), comparisons and logic (0 or 1), unary
// minus and not, min / max / select; nothing for anything else, for a leaf
// without a value, or on overflow and division by zero.
std::optional<int64_t> evalConcrete(const Expr &e, const LeafValue &leaf);

// Whether thread `tx` takes a path of conditions (each with the branch
// taken): true, false, or nothing when a condition reads something other
// than thread indices.
std::optional<bool> pathRunsAtThread(const std::vector<std::pair<Expr, bool>> &path,
                                     int64_t tx);

} // namespace tilescope
