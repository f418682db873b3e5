// Internal to the engine: the lane offsets of one access of a fused store
// statement (ExprCode.h, FusedStore.cpp) as a warp last computed them.
#pragma once

#include "simulator/Value.h"

#include <array>
#include <cstdint>

namespace tilescope::sim {

// Byte offsets, per lane, of the varying part of an access (the lane's copy
// of private registers included). They depend only on the slots the varying
// subscripts read and on the active lanes, so they are reused while
// `versions` (of those slots) and `mask` are unchanged: a loop whose counter
// is warp-uniform recomputes none of them per iteration.
struct FusedOffsets {
  bool valid = false;
  uint32_t mask = 0;
  std::array<uint64_t, 4> versions{};
  alignas(32) std::array<int64_t, kWarpSize> offset{};
};

} // namespace tilescope::sim
