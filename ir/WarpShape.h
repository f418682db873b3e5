// The warp and warpgroup sizes, and how many of each a CTA of n threads has:
// the constants of the thread-index map (ir/ThreadIndex.h), apart so that
// code without the IR's expressions (ir/Target.cpp, which the hardware tests
// compile with nvcc) reads them too.
//
// Depends on nothing.
#pragma once

#include <cstdint>

namespace tilescope {

inline constexpr int64_t kThreadsPerWarp = 32;
inline constexpr int64_t kThreadsPerWarpgroup = 128;

// The warps and warpgroups a CTA of `threads` threads has (the last one
// may be partial).
constexpr int64_t warpsIn(int64_t threads) {
  return (threads + kThreadsPerWarp - 1) / kThreadsPerWarp;
}
constexpr int64_t warpgroupsIn(int64_t threads) {
  return (threads + kThreadsPerWarpgroup - 1) / kThreadsPerWarpgroup;
}

} // namespace tilescope
