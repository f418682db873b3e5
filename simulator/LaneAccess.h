// Internal to the engine: the lane offsets of one access of a fused store
// statement (ExprCode.h, FusedStore.cpp) as a warp last computed them, and a
// fused store resolved for one execution (its operands' and target's bases
// and lane offsets), which a fused loop (FusedLoop.cpp) moves along with its
// counter.
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

// What the lane offsets of an owned access read through uniform slots depend
// on (FusedAccess::byValue): the access, the active lanes and the slots'
// values.
struct OwnedOffsetsKey {
  int access = -1;
  uint32_t mask = 0;
  std::array<int64_t, 4> values{};
  bool operator==(const OwnedOffsetsKey &) const = default;
  struct Hash {
    size_t operator()(const OwnedOffsetsKey &k) const {
      uint64_t h = (uint64_t(uint32_t(k.access)) << 32) ^ k.mask;
      for (int64_t v : k.values)
        h = (h ^ uint64_t(v)) * 0x9E3779B97F4A7C15ull;
      return static_cast<size_t>(h ^ (h >> 29));
    }
  };
};

// One element per lane: lane l's element is at base + offset[l].
struct LaneElements {
  const uint8_t *base = nullptr;
  const int64_t *offset = nullptr;
};

// A fused store with every access resolved: the operands (a constant operand
// has every lane read the one value) and the target.
struct ResolvedStore {
  std::array<LaneElements, 3> in{};
  uint8_t *target = nullptr;
  const int64_t *targetOffset = nullptr;
};

} // namespace tilescope::sim
