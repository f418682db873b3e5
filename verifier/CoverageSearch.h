// The concrete half of the write-coverage proof (WriteCoverage.h): the
// writes of a kernel's stores at one size assignment, every CTA, iteration
// and thread, for the element a failed query names or, in a kernel without
// shape symbols, for every element.
//
// Depends on ir/ and sync/BarrierSkeleton.h; no Z3.
#pragma once

#include "sync/BarrierSkeleton.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tilescope {

// One store into an output tensor: the statement and its global access.
struct StoreRef {
  const SyncEvent *event;
  const MemoryAccess *access;
};

// A written region, [lo, hi) per dimension; return true to stop.
using WriteVisit = std::function<bool(const std::vector<std::pair<int64_t, int64_t>> &)>;

// Calls `visit` with the region [lo, hi) per dimension of every write of
// every executor of `writers` at `sizes` (one thread per store whose
// region and guards read no thread index) until it returns true: then
// true; false when none did; nothing past the search cap or where a value
// does not evaluate.
std::optional<bool> forEachWrite(const BarrierSkeleton &skeleton,
                                 const std::vector<StoreRef> &stores,
                                 const std::map<std::string, int64_t> &sizes, size_t rank,
                                 size_t cap, const WriteVisit &visit);

} // namespace tilescope
