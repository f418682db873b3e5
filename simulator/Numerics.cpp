#include "simulator/Numerics.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace tilescope::numerics {

namespace {
// canonicalNan is the code without storageShift; tf32's is f32's quiet NaN
// pattern truncated to 19 bits.
constexpr FloatFormat kF32{"f32", 8, 23, 127, true, Specials::Ieee, 0, 0x7FFFFFFFu};
constexpr FloatFormat kTf32{"tf32", 8, 10, 127, true, Specials::Ieee, 13, 0x3FFFFu};
constexpr FloatFormat kF16{"f16", 5, 10, 15, true, Specials::Ieee, 0, 0x7FFFu};
constexpr FloatFormat kBf16{"bf16", 8, 7, 127, true, Specials::Ieee, 0, 0x7FFFu};
constexpr FloatFormat kE4m3{"e4m3", 4, 3, 7, true, Specials::NanOnly, 0, 0x7Fu};
constexpr FloatFormat kE5m2{"e5m2", 5, 2, 15, true, Specials::Ieee, 0, 0x7Fu};
constexpr FloatFormat kE2m3{"e2m3", 2, 3, 1, true, Specials::None, 0, 0x1Fu};
constexpr FloatFormat kE3m2{"e3m2", 3, 2, 3, true, Specials::None, 0, 0x1Fu};
constexpr FloatFormat kE2m1{"e2m1", 2, 1, 1, true, Specials::None, 0, 0x7u};
constexpr FloatFormat kUe8m0{"ue8m0", 8, 0, 127, false, Specials::UnsignedExp, 0, 0xFFu};

// The largest finite code's biased exponent and fraction.
void maxFiniteFields(const FloatFormat &f, uint32_t &biased, uint32_t &fraction) {
  uint32_t fullFraction = (uint32_t(1) << f.manBits) - 1;
  switch (f.specials) {
  case Specials::Ieee:
    biased = maxBiased(f) - 1;
    fraction = fullFraction;
    return;
  case Specials::NanOnly:
    biased = maxBiased(f);
    fraction = fullFraction - 1;
    return;
  case Specials::None:
    biased = maxBiased(f);
    fraction = fullFraction;
    return;
  case Specials::UnsignedExp:
    biased = maxBiased(f) - 1;
    fraction = 0;
    return;
  }
}

uint32_t nanCode(const FloatFormat &f) {
  return f.canonicalNan;
}
uint32_t infCode(const FloatFormat &f, bool negative) {
  return (negative ? signBit(f) : 0) | (maxBiased(f) << f.manBits);
}

// Rounds m * 2^-shift (shift > 0) to an integer.
uint64_t roundShift(uint64_t m, int shift, Rounding rounding, bool negative) {
  if (shift <= 0)
    return m << -shift;
  if (shift >= 64)
    return (rounding == Rounding::TowardPositive && !negative && m != 0) ? 1 : 0;
  uint64_t kept = m >> shift;
  uint64_t rest = m & ((uint64_t(1) << shift) - 1);
  uint64_t half = uint64_t(1) << (shift - 1);
  switch (rounding) {
  case Rounding::NearestEven:
    if (rest > half || (rest == half && (kept & 1)))
      ++kept;
    break;
  case Rounding::NearestAway:
    if (rest >= half)
      ++kept;
    break;
  case Rounding::TowardZero:
    break;
  case Rounding::TowardPositive:
    if (rest != 0 && !negative)
      ++kept;
    break;
  }
  return kept;
}

// Whether an overflowing value of this sign rounds to the largest finite value
// (rather than to infinity) under IEEE rules for the rounding direction.
bool overflowStaysFinite(Rounding rounding, bool negative) {
  return rounding == Rounding::TowardZero || (rounding == Rounding::TowardPositive && negative);
}
} // namespace

uint32_t FloatFormat::maxFiniteCode() const {
  uint32_t biased = 0, fraction = 0;
  maxFiniteFields(*this, biased, fraction);
  return ((biased << manBits) | fraction) << storageShift;
}

float FloatFormat::maxFinite() const {
  return decode(maxFiniteCode(), *this);
}

const FloatFormat *floatFormat(Dtype d) {
  switch (d) {
  case Dtype::f32:
    return &kF32;
  case Dtype::tf32:
    return &kTf32;
  case Dtype::f16:
    return &kF16;
  case Dtype::bf16:
    return &kBf16;
  case Dtype::f8e4m3:
    return &kE4m3;
  case Dtype::f8e5m2:
    return &kE5m2;
  case Dtype::f6e2m3:
    return &kE2m3;
  case Dtype::f6e3m2:
    return &kE3m2;
  case Dtype::f4e2m1:
    return &kE2m1;
  case Dtype::ue8m0:
    return &kUe8m0;
  default:
    return nullptr;
  }
}

uint32_t bitsOf(float value) {
  return std::bit_cast<uint32_t>(value);
}
float floatOf(uint32_t bits) {
  return std::bit_cast<float>(bits);
}

uint32_t encode(float value, const FloatFormat &f, ConvertMode mode) {
  if (&f == &kF32 || (f.expBits == 8 && f.manBits == 23))
    return std::isnan(value) ? kCanonicalNanF32 : bitsOf(value);
  const int shiftOut = f.storageShift;
  uint32_t in = bitsOf(value);
  bool negative = (in >> 31) != 0;
  uint32_t inBiased = (in >> 23) & 0xFF;
  uint32_t inFraction = in & 0x7FFFFF;
  uint32_t maxB = 0, maxF = 0;
  maxFiniteFields(f, maxB, maxF);
  uint32_t maxCode = (maxB << f.manBits) | maxF;

  if (inBiased == 0xFF && inFraction != 0) // NaN
    return nanCode(f) << shiftOut;

  if (f.specials == Specials::UnsignedExp) {
    // Only positive powers of two exist: negative values and zero have no
    // code; they map to the smallest scale (PTX leaves them unspecified).
    if (inBiased == 0xFF) // +-inf
      return (mode.satfinite || negative ? maxCode : nanCode(f)) << shiftOut;
    if (negative || (inBiased == 0 && inFraction == 0))
      return 0;
  }

  uint32_t sign = (negative && f.hasSign) ? signBit(f) : 0;
  auto overflow = [&]() -> uint32_t {
    if (mode.satfinite || f.specials == Specials::None ||
        overflowStaysFinite(mode.rounding, negative))
      return (sign | maxCode) << shiftOut;
    if (f.specials == Specials::Ieee)
      return infCode(f, negative) << shiftOut;
    return nanCode(f) << shiftOut; // e4m3, ue8m0: no infinity
  };

  if (inBiased == 0xFF) // +-inf
    return overflow();
  if (inBiased == 0 && inFraction == 0)
    return sign << shiftOut;

  // |value| = m * 2^e exactly, m < 2^24.
  uint64_t m = inBiased == 0 ? inFraction : (inFraction | 0x800000u);
  int e = inBiased == 0 ? -149 : int(inBiased) - 150;
  int topBit = 63 - std::countl_zero(m); // value in [2^(e+topBit), 2^(e+topBit+1))
  int valueExp = e + topBit;
  int emin = f.minExponent();
  int quantumExp = (valueExp > emin ? valueExp : emin) - f.manBits;
  uint64_t r = roundShift(m, quantumExp - e, mode.rounding, negative);
  if (r == 0)
    return f.specials == Specials::UnsignedExp ? 0 : sign << shiftOut;
  // r * 2^quantumExp; renormalise a carry out of the top.
  int resultExp = quantumExp + f.manBits;
  if (r >> (f.manBits + 1)) {
    r >>= 1;
    ++resultExp;
  }
  uint32_t biased, fraction;
  if (r >> f.manBits) {
    biased = uint32_t(resultExp + f.bias);
    fraction = uint32_t(r) & ((uint32_t(1) << f.manBits) - 1);
  } else if (f.specials == Specials::UnsignedExp) {
    return 0; // below 2^-127 rounded to zero: the smallest scale
  } else {
    biased = 0;
    fraction = uint32_t(r);
  }
  if (resultExp + f.bias > int(maxB) || (biased == maxB && fraction > maxF))
    return overflow();
  return (sign | (biased << f.manBits) | fraction) << shiftOut;
}

float decode(uint32_t code, const FloatFormat &f) {
  Decoded d = decompose(code, f);
  switch (d.cls) {
  case Decoded::NaN:
    return floatOf(kCanonicalNanF32);
  case Decoded::Inf:
    return d.negative ? -INFINITY : INFINITY;
  case Decoded::Zero:
    return d.negative ? -0.0f : 0.0f;
  case Decoded::Finite:
    break;
  }
  // Exact: every value here is an f32 (2^-127 is an f32 subnormal).
  float v = std::ldexp(float(d.significand), d.exponent - f.manBits);
  return d.negative ? -v : v;
}

bool isRepresentable(float value, const FloatFormat &f) {
  if (std::isnan(value))
    return false;
  if (std::isinf(value) && f.specials != Specials::Ieee)
    return false;
  uint32_t code = encode(value, f);
  float back = decode(code, f);
  return bitsOf(back) == bitsOf(value) || (value == 0 && back == 0 && f.hasSign);
}

uint16_t f32ToF16(float value) {
  return uint16_t(encode(value, kF16));
}
uint16_t f32ToBf16(float value) {
  return uint16_t(encode(value, kBf16));
}
float f16ToF32(uint16_t code) {
  return decode(code, kF16);
}
float bf16ToF32(uint16_t code) {
  return decode(code, kBf16);
}

} // namespace tilescope::numerics
