// How an integer expression moves as one loop variable grows, the others
// held: for the threshold sizes' loop decisions (ThresholdSizes.h), whose
// outcomes over a loop are those at its first and last values only where
// the compared term is monotone in the variable.
// Internal to reward/.
#pragma once

#include "ir/Expr.h"

#include <set>
#include <string>

namespace tilescope::reward_detail {

enum class Direction { Constant, Up, Down, Unknown };

// How `e` moves with `v`; `symbols` are the shape symbols (at least 1).
Direction direction(const Expr &e, const std::string &v, const std::set<std::string> &symbols);

// A comparison `a < b` moves as `a - b` does; any other expression as itself.
Direction comparedDirection(const Expr &e, const std::string &v,
                            const std::set<std::string> &symbols);

// How the truth of a condition moves with `v`: a comparison as its sides'
// difference (`a > b` true more often as a - b grows: Up), `!` flipped,
// `&&` and `||` of conditions that move the same way (`t >= 132 &&
// blockIdx.x > 1`: Up); Unknown otherwise.
Direction truthDirection(const Expr &e, const std::string &v,
                         const std::set<std::string> &symbols);

// Whether `e` is never negative by its form: literals at least 0, blockIdx,
// shape symbols, and sums, products and quotients of such terms.
bool nonNegativeByForm(const Expr &e, const std::set<std::string> &symbols);

} // namespace tilescope::reward_detail
