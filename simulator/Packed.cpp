#include "simulator/Packed.h"

namespace tilescope::sim {

int64_t storageBytes(Dtype d, int64_t elements) {
  return (elements * dtypeBits(d) + 7) / 8;
}

uint64_t loadPacked(const uint8_t *base, int64_t bit, int width) {
  uint64_t v = 0;
  for (int k = 0; k < width; ++k) {
    int64_t b = bit + k;
    v |= static_cast<uint64_t>(base[b / 8] >> (b % 8) & 1) << k;
  }
  return v;
}

void storePacked(uint8_t *base, int64_t bit, int width, uint64_t bits) {
  for (int k = 0; k < width; ++k) {
    int64_t b = bit + k;
    uint8_t mask = static_cast<uint8_t>(1u << (b % 8));
    base[b / 8] = static_cast<uint8_t>((base[b / 8] & ~mask) | ((bits >> k & 1) ? mask : 0));
  }
}

} // namespace tilescope::sim
