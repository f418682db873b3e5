// Elements in memory, packed when narrower than a byte. Sub-byte formats
// (f4e2m1, f6e2m3, f6e3m2) are stored as a little-endian bit stream: element
// i occupies bits [i * w, (i + 1) * w), so two fp4 share a byte with the
// even element in the low nibble, and four fp6 fill three bytes (the PTX /
// OCP MX packing). Wider elements are whole bytes, little-endian.
#pragma once

#include "ir/Dtype.h"

#include <cstdint>

namespace tilescope::sim {

inline bool isPacked(Dtype d) {
  return dtypeBits(d) < 8;
}

// Bytes that `elements` consecutive elements occupy.
int64_t storageBytes(Dtype d, int64_t elements);

// The encoded bits of the element at bit offset `bit` of `base`.
uint64_t loadPacked(const uint8_t *base, int64_t bit, int width);
void storePacked(uint8_t *base, int64_t bit, int width, uint64_t bits);

} // namespace tilescope::sim
