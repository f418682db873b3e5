// Bounds on integer expressions over a kernel's sizes that hold at every
// admitted size, for the threshold sizes (ThresholdSizes.h): symbols at
// least their least value by the where clause's conjuncts alone (`X > c`,
// `X >= c`, `X % c == 0`), blockIdx at least 0. An outcome they rule out
// (`(K + 63) / 64 == 0` where K >= 1) needs no solver.
// Internal to reward/.
#pragma once

#include "ir/Stmt.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace tilescope::reward_detail {

// What an integer expression may be: `lo`/`hi` absent, unbounded that way.
struct Range {
  std::optional<int64_t> lo, hi;
};

// The least value of each symbol the where clause gives by a conjunct alone.
using LeastValues = std::map<std::string, int64_t>;
LeastValues leastValues(const Kernel &kernel);

// The range of `e` (nothing: not an integer the rules bound).
std::optional<Range> rangeOf(const Expr &e, const LeastValues &least);

// Whether `cond` is false at every size by the ranges alone.
bool falseByRanges(const Expr &cond, const LeastValues &least);

} // namespace tilescope::reward_detail
