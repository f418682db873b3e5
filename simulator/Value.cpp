#include "simulator/Value.h"

#include "simulator/Numerics.h"

#include <bit>
#include <cstring>

namespace tilescope::sim {

uint64_t encodeFloat(Dtype dtype, double value) {
  if (dtype == Dtype::f64)
    return std::bit_cast<uint64_t>(value);
  if (!isFloat(dtype))
    return encodeInt(dtype, static_cast<int64_t>(value));
  float f = static_cast<float>(value);
  if (dtype == Dtype::f32)
    return std::bit_cast<uint32_t>(f);
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
  return numerics::decode(static_cast<uint32_t>(bits), *numerics::floatFormat(dtype));
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
