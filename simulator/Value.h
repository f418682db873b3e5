// Scalar values of the simulated program and their storage encodings.
//
// A value is an integer (i64 arithmetic, C semantics), a bool, or a float of a
// dtype; a float literal adapts to the dtype it meets (as the checker types
// it). Floats are carried in a double that always holds a value exactly
// representable in their dtype, so storing them is exact; arithmetic on f32
// and narrower floats happens in IEEE single precision and rounds to nearest
// even into the dtype. Elements in memory are kept as their encoded bits
// (f32 bits, bf16 codes, two's complement integers) so copies are bit-exact.
#pragma once

#include "ir/Dtype.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

namespace tilescope::sim {

constexpr int kWarpSize = 32;

enum class ValueKind : uint8_t { Int, Bool, Float, Literal };

union Scalar {
  int64_t i;
  double f;
};

// One value per lane of a warp; the kind and dtype are shared by every lane.
struct LaneValues {
  ValueKind kind = ValueKind::Int;
  Dtype dtype = Dtype::i64;
  std::array<Scalar, kWarpSize> lane;
};

// Bits of `value` encoded as `dtype` (floats round to nearest even; integers
// wrap to the width). `value` is a double for floats and an int64 for the rest.
uint64_t encodeFloat(Dtype dtype, double value);
// encodeFloat's e4m3 bits of a float of magnitude at most 1 (false for
// any other): a normal e4m3 value keeps the float's exponent (rebiased from
// 127 to 7) and the top three mantissa bits rounded to nearest even on the
// bits; below e4m3's smallest normal 2^-6 the value is a count of the
// subnormal step 2^-9 rounded to nearest even (8 is the smallest normal's
// code). numerics::encode's result, checked for every 251st float in
// tests/unit/simulator. The fp8 GEMMs' random inputs are all such floats.
inline bool e4m3OfUnitFloat(float f, uint32_t &bits) {
  uint32_t u = std::bit_cast<uint32_t>(f), magnitude = u & 0x7FFFFFFFu, sign = (u >> 24) & 0x80u;
  if (magnitude < 0x3C800000u) { // below 2^-6, zero included
    bits = sign | static_cast<uint32_t>(std::nearbyint(std::fabs(static_cast<double>(f)) * 512.0));
    return true;
  }
  if (magnitude <= 0x3F800000u) { // up to 1.0
    bits = sign | (((magnitude + 0x7FFFFu + ((magnitude >> 20) & 1u)) >> 20) - (120u << 3));
    return true;
  }
  return false;
}
uint64_t encodeInt(Dtype dtype, int64_t value);
// The value of encoded bits: floats exactly as a double, integers sign- or
// zero-extended.
double decodeFloat(Dtype dtype, uint64_t bits);
// decodeFloat of `n` elements stored one after another (byte-aligned
// formats: 8 bits or more) from `bytes` into `out`: the same values, with
// one look-up of the format instead of one per element.
void decodeFloats(Dtype dtype, const uint8_t *bytes, int64_t n, double *out);
int64_t decodeInt(Dtype dtype, uint64_t bits);

// Rounds a double to the nearest value of a float dtype (f64 keeps it).
double roundTo(Dtype dtype, double value);

inline int dtypeBytes(Dtype d) {
  return (dtypeBits(d) + 7) / 8;
}

} // namespace tilescope::sim
