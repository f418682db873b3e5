// Sub-byte elements in memory: the little-endian bit stream of PTX / OCP.
#include "simulator/Packed.h"

#include <doctest/doctest.h>

#include <vector>

using namespace tilescope;
using namespace tilescope::sim;

TEST_CASE("fp4: two per byte, the even element in the low nibble") {
  std::vector<uint8_t> bytes(2, 0);
  storePacked(bytes.data(), 0 * 4, 4, 0x3);
  storePacked(bytes.data(), 1 * 4, 4, 0xA);
  storePacked(bytes.data(), 2 * 4, 4, 0xF);
  CHECK(bytes[0] == 0xA3);
  CHECK(bytes[1] == 0x0F);
  CHECK(loadPacked(bytes.data(), 1 * 4, 4) == 0xA);
  storePacked(bytes.data(), 0, 4, 0x0); // rewriting one nibble keeps its neighbour
  CHECK(bytes[0] == 0xA0);
  CHECK(storageBytes(Dtype::f4e2m1, 5) == 3);
}

TEST_CASE("fp6: four elements fill three bytes, an element may straddle two") {
  std::vector<uint8_t> bytes(3, 0);
  for (int i = 0; i < 4; ++i)
    storePacked(bytes.data(), i * 6, 6, 0x21 + i); // 100001, 100010, 100011, 100100
  // bits 0-5: 100001, 6-11: 100010, 12-17: 100011, 18-23: 100100 (little-endian)
  CHECK(bytes[0] == 0xA1);
  CHECK(bytes[1] == 0x38);
  CHECK(bytes[2] == 0x92);
  for (int i = 0; i < 4; ++i)
    CHECK(loadPacked(bytes.data(), i * 6, 6) == static_cast<uint64_t>(0x21 + i));
  CHECK(storageBytes(Dtype::f6e3m2, 4) == 3);
  CHECK(storageBytes(Dtype::bf16, 4) == 8);
}
