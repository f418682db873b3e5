// Expression helpers of the lifting (Lift.h): ring indices and guards.
//
// Depends on ir/Expr.h.
#pragma once

#include "ir/Expr.h"

#include <optional>
#include <vector>

namespace tilescope::ptx {

// The smallest value of `rest` over the iterations of the loops it names
// (it<L> from 0 to 63); nullopt when it reads anything else.
std::optional<int64_t> minOver(const Expr &rest);
// `e / 8` when e is a sum of multiples of 8 (null is 0); null otherwise.
Expr divide8(const Expr &e);
// A guard as a list of conjuncts, negations pushed into comparisons, and
// `it != 0` on a loop counter (never negative) written `it > 0`.
std::vector<Expr> conjuncts(const Expr &g);

} // namespace tilescope::ptx
