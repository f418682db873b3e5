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
