// Bit-faithful scalar numerics of the element formats that GPU tensor cores
// read and write: f32, tf32, f16, bf16, OCP fp8 (e4m3, e5m2), fp6 (e2m3,
// e3m2), fp4 (e2m1) and the ue8m0 scale. Every encoding decodes exactly to
// an f32 value; conversions from f32 round as the PTX `cvt` instruction says
// (nearest-even unless asked otherwise, optional `satfinite`).
//
// It must never depend on anything but the standard library and ir/Dtype.h
// (no LLVM, no fmt, no CUDA): the hardware test compiles this file with nvcc
// on a machine that has none of the project's other dependencies.
#pragma once

#include "ir/Dtype.h"

#include <cstdint>
#include <string_view>

namespace tilescope::numerics {

// What the all-ones exponent field means in a format.
enum class Specials : uint8_t {
  Ieee,        // inf (mantissa 0) and NaN (mantissa != 0): f32, tf32, f16, bf16, e5m2
  NanOnly,     // no inf; only S.1111.111 is NaN (OCP e4m3)
  None,        // every code is finite (fp6, fp4)
  UnsignedExp, // ue8m0: no sign, no mantissa; 0xFF is NaN
};

// One binary floating-point format: value of a finite code with biased
// exponent E and fraction F is (-1)^S * 2^(E - bias) * 1.F, or for E == 0
// (subnormal) (-1)^S * 2^(1 - bias) * 0.F. ue8m0 has no subnormals: code E is
// 2^(E - 127) for every E < 255.
struct FloatFormat {
  std::string_view name;
  int expBits;
  int manBits;
  int bias;
  bool hasSign;
  Specials specials;
  int storageShift;      // bits of zero below the code in storage (tf32 lives in 32 bits: 13)
  uint32_t canonicalNan; // the code a conversion produces for NaN (no NaN: max finite)

  int codeBits() const { return (hasSign ? 1 : 0) + expBits + manBits; }
  // Unbiased exponent of the smallest normal (and of every subnormal).
  int minExponent() const { return specials == Specials::UnsignedExp ? -bias : 1 - bias; }
  uint32_t maxFiniteCode() const; // positive
  float maxFinite() const;
};

// The format of a floating dtype (f32, tf32, f16, bf16, f8e4m3, f8e5m2, f6e2m3,
// f6e3m2, f4e2m1, ue8m0); nullptr for f64, integers and pred.
const FloatFormat *floatFormat(Dtype d);

enum class Rounding : uint8_t { NearestEven, NearestAway, TowardZero, TowardPositive };

struct ConvertMode {
  Rounding rounding = Rounding::NearestEven;
  // Out-of-range finite values and infinities become the largest finite value
  // of their sign; NaN stays NaN where the format has one.
  bool satfinite = false;
};

// f32 -> code (in storage form: shifted by storageShift). Exact where the
// value is representable; otherwise rounded as `mode` says. Overflow without
// satfinite gives inf where the format has one, NaN for e4m3 and ue8m0, and
// the largest finite value for formats with neither (PTX requires satfinite
// there anyway). Formats without NaN encode NaN as canonicalNan.
uint32_t encode(float value, const FloatFormat &format, ConvertMode mode = {});

// code (storage form) -> f32, exact for every code of every format here.
// Bits outside the code are ignored.
float decode(uint32_t code, const FloatFormat &format);

// A decoded code as integers: the value is
//   (-1)^negative * significand * 2^(exponent - manBits)
// with `exponent` the unbiased exponent, counted at the format's minimum
// exponent for subnormals (then significand < 2^manBits).
struct Decoded {
  enum Class : uint8_t { Zero, Finite, Inf, NaN } cls;
  bool negative;
  uint32_t significand;
  int exponent;
};
// The code's bits, its sign bit and its largest biased exponent.
inline uint32_t codeMask(const FloatFormat &f) {
  return f.codeBits() >= 32 ? 0xFFFFFFFFu : (uint32_t(1) << f.codeBits()) - 1;
}
inline uint32_t signBit(const FloatFormat &f) {
  return f.hasSign ? uint32_t(1) << (f.expBits + f.manBits) : 0;
}
inline uint32_t maxBiased(const FloatFormat &f) {
  return (uint32_t(1) << f.expBits) - 1;
}

// Inline: the tensor-core model decodes every operand of a tile with it.
inline Decoded decompose(uint32_t code, const FloatFormat &f) {
  code = (code >> f.storageShift) & codeMask(f);
  Decoded d{};
  d.negative = (code & signBit(f)) != 0;
  uint32_t biased = (code >> f.manBits) & maxBiased(f);
  uint32_t fraction = code & ((uint32_t(1) << f.manBits) - 1);
  if (f.specials == Specials::UnsignedExp) {
    if (biased == maxBiased(f))
      return {Decoded::NaN, false, 0, 0};
    return {Decoded::Finite, false, 1, int(biased) - f.bias};
  }
  if (biased == maxBiased(f)) {
    if (f.specials == Specials::Ieee)
      return {fraction ? Decoded::NaN : Decoded::Inf, d.negative, 0, 0};
    if (f.specials == Specials::NanOnly && fraction == (uint32_t(1) << f.manBits) - 1)
      return {Decoded::NaN, d.negative, 0, 0};
  }
  if (biased == 0) {
    if (fraction == 0)
      return {Decoded::Zero, d.negative, 0, f.minExponent()};
    return {Decoded::Finite, d.negative, fraction, f.minExponent()};
  }
  return {Decoded::Finite, d.negative, fraction | (uint32_t(1) << f.manBits), int(biased) - f.bias};
}

// True when `value` is exactly the value of some code of `format` (NaN never is).
bool isRepresentable(float value, const FloatFormat &format);

// Bit casts.
uint32_t bitsOf(float value);
float floatOf(uint32_t bits);

// The canonical NaN that tensor cores and cvt write into an f32 register.
constexpr uint32_t kCanonicalNanF32 = 0x7FFFFFFFu;

// Shorthands for the common conversions (round to nearest even, no satfinite).
uint16_t f32ToF16(float value);
uint16_t f32ToBf16(float value);
float f16ToF32(uint16_t code);
float bf16ToF32(uint16_t code);

} // namespace tilescope::numerics
