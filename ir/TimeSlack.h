// Time limits as the budgets count them (ir/Budget.cpp): the sanitized test
// build (preset `asan`) counts each time limit 8 times over, every other build
// once. Apart from ir/Budget.h so that the few users of a time limit kept
// outside a Budget (the batch's wall time per candidate) do not rebuild with
// it.
//
// Depends on the standard library only.
#pragma once

#include <cstdint>

namespace tilescope {

// A time limit of `ms` milliseconds as the budgets count it, in nanoseconds:
// times the build's slack, saturated at about 73 years.
int64_t budgetLimitNs(int64_t ms);

} // namespace tilescope
