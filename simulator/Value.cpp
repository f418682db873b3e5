#include "simulator/Value.h"

#include "simulator/Numerics.h"

#include <array>
#include <cmath>
#include <bit>
#include <cstring>
#include <vector>

namespace tilescope::sim {

namespace {

// numerics::decode of every code of each float format of at most 16 bits
// (f16, bf16, fp8, fp6, fp4, ue8m0), filled once from decode itself: the
// simulator decodes operands element by element, and a lookup returns the
// same float as the call.
const std::vector<float> *decodeTable(Dtype dtype) {
  static const std::array<std::vector<float>, 32> tables = [] {
    std::array<std::vector<float>, 32> out;
    for (Dtype d : {Dtype::f16, Dtype::bf16, Dtype::f8e4m3, Dtype::f8e5m2, Dtype::f6e2m3,
                    Dtype::f6e3m2, Dtype::f4e2m1, Dtype::ue8m0}) {
      const numerics::FloatFormat *format = numerics::floatFormat(d);
      std::vector<float> &t = out[static_cast<size_t>(d)];
      t.resize(size_t{1} << dtypeBits(d));
      for (uint32_t code = 0; code < t.size(); ++code)
        t[code] = numerics::decode(code, *format);
    }
    return out;
  }();
  const std::vector<float> &t = tables[static_cast<size_t>(dtype)];
  return t.empty() ? nullptr : &t;
}

} // namespace

uint64_t encodeFloat(Dtype dtype, double value) {
  if (dtype == Dtype::f64)
    return std::bit_cast<uint64_t>(value);
  if (!isFloat(dtype))
    return encodeInt(dtype, static_cast<int64_t>(value));
  float f = static_cast<float>(value);
  if (dtype == Dtype::f32)
    return std::bit_cast<uint32_t>(f);
  if (uint32_t bits = 0; dtype == Dtype::f8e4m3 && e4m3OfUnitFloat(f, bits))
    return bits;
  if (dtype == Dtype::bf16) {
    // A float no larger than bf16's largest finite value (zeros and
    // subnormals included: the accumulator tiles of a narrow N are mostly
    // zeros): rounding the bits to nearest even is numerics::encode's result
    // (checked for every 251st float in tests/unit/simulator), without its
    // general path.
    uint32_t u = std::bit_cast<uint32_t>(f), magnitude = u & 0x7FFFFFFFu;
    if (magnitude <= 0x7F7F0000u)
      return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  }
  return numerics::encode(f, *numerics::floatFormat(dtype));
}

uint64_t encodeInt(Dtype dtype, int64_t value) {
  if (isFloat(dtype))
    return encodeFloat(dtype, static_cast<double>(value));
  int bits = dtypeBits(dtype);
  if (dtype == Dtype::pred)
    return value != 0;
  if (bits >= 64)
    return static_cast<uint64_t>(value);
  return static_cast<uint64_t>(value) & ((uint64_t{1} << bits) - 1);
}

double decodeFloat(Dtype dtype, uint64_t bits) {
  if (dtype == Dtype::f64)
    return std::bit_cast<double>(bits);
  if (dtype == Dtype::f32)
    return std::bit_cast<float>(static_cast<uint32_t>(bits));
  if (!isFloat(dtype))
    return static_cast<double>(decodeInt(dtype, bits));
  if (const std::vector<float> *table = decodeTable(dtype); table && bits < table->size())
    return (*table)[bits];
  return numerics::decode(static_cast<uint32_t>(bits), *numerics::floatFormat(dtype));
}

void decodeFloats(Dtype dtype, const uint8_t *bytes, int64_t n, double *out) {
  const int width = dtypeBytes(dtype);
  const std::vector<float> *table = isFloat(dtype) ? decodeTable(dtype) : nullptr;
  if (table && width == 1) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = (*table)[bytes[i]];
    return;
  }
  if (table && width == 2) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = (*table)[uint32_t(bytes[2 * i]) | uint32_t(bytes[2 * i + 1]) << 8];
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, bytes + i * width, size_t(width));
    out[i] = decodeFloat(dtype, bits);
  }
}

int64_t decodeInt(Dtype dtype, uint64_t bits) {
  if (isFloat(dtype))
    return static_cast<int64_t>(decodeFloat(dtype, bits));
  int width = dtypeBits(dtype);
  if (dtype == Dtype::pred)
    return bits & 1;
  if (width >= 64)
    return static_cast<int64_t>(bits);
  bits &= (uint64_t{1} << width) - 1;
  if (dtypeInfo(dtype).isSigned && (bits >> (width - 1) & 1))
    return static_cast<int64_t>(bits | ~((uint64_t{1} << width) - 1));
  return static_cast<int64_t>(bits);
}

double roundTo(Dtype dtype, double value) {
  if (dtype == Dtype::f64 || !isFloat(dtype))
    return value;
  return decodeFloat(dtype, encodeFloat(dtype, value));
}

} // namespace tilescope::sim
