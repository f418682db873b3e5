// Exact results for the element formats: every code of the small formats
// decodes and re-encodes to itself, round-to-nearest-even against a
// brute-force oracle, the OCP spec's landmark values, satfinite and NaN.
#include "simulator/Numerics.h"
#include "simulator/Value.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace tilescope;
using namespace tilescope::numerics;

namespace {
const FloatFormat &fmt(Dtype d) {
  return *floatFormat(d);
}
const FloatFormat &e4m3() {
  return fmt(Dtype::f8e4m3);
}
const FloatFormat &e5m2() {
  return fmt(Dtype::f8e5m2);
}

bool isNanCode(uint32_t code, const FloatFormat &f) {
  return decompose(code, f).cls == Decoded::NaN;
}

// Every code of a format round-trips through f32 (NaNs to the canonical NaN).
void checkRoundTrip(const FloatFormat &f) {
  uint32_t codes = uint32_t(1) << f.codeBits();
  for (uint32_t code = 0; code < codes; ++code) {
    uint32_t stored = code << f.storageShift;
    float v = decode(stored, f);
    if (isNanCode(stored, f)) {
      CHECK(std::isnan(v));
      CHECK(bitsOf(v) == kCanonicalNanF32);
      CHECK(encode(v, f) == f.canonicalNan << f.storageShift);
      continue;
    }
    INFO(f.name << " code " << code);
    CHECK(encode(v, f) == stored);
    CHECK(isRepresentable(v, f));
  }
}

// Brute-force RNE oracle for a small format: the nearest finite code, ties to
// the code with an even fraction. Only for values below the largest finite.
uint32_t nearestEvenOracle(float x, const FloatFormat &f) {
  uint32_t best = 0;
  double bestDistance = INFINITY;
  uint32_t codes = uint32_t(1) << f.codeBits();
  for (uint32_t code = 0; code < codes; ++code) {
    Decoded d = decompose(code, f);
    if (d.cls != Decoded::Finite && d.cls != Decoded::Zero)
      continue;
    if (d.negative != std::signbit(x))
      continue;
    double distance = std::fabs(double(decode(code, f)) - double(x));
    if (distance < bestDistance || (distance == bestDistance && (code & 1) == 0 && (best & 1))) {
      best = code;
      bestDistance = distance;
    }
  }
  return best;
}

// Midpoints between neighbouring codes and points just beside them.
void checkNearestEven(const FloatFormat &f) {
  std::vector<float> values;
  uint32_t codes = uint32_t(1) << f.codeBits();
  for (uint32_t code = 0; code < codes; ++code) {
    Decoded d = decompose(code, f);
    if (d.cls == Decoded::Finite && !d.negative)
      values.push_back(decode(code, f));
  }
  values.push_back(0.0f);
  std::sort(values.begin(), values.end());
  for (size_t i = 0; i + 1 < values.size(); ++i) {
    float mid = (values[i] + values[i + 1]) / 2; // exact in f32 for these formats
    for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY), values[i], -mid,
                    -std::nextafter(mid, INFINITY)}) {
      INFO(f.name << " x = " << x);
      CHECK(encode(x, f) == nearestEvenOracle(x, f));
    }
  }
}
} // namespace

TEST_CASE("every code of the small formats round-trips") {
  for (Dtype d :
       {Dtype::f8e4m3, Dtype::f8e5m2, Dtype::f6e2m3, Dtype::f6e3m2, Dtype::f4e2m1, Dtype::ue8m0})
    checkRoundTrip(fmt(d));
}

TEST_CASE("every f16 and bf16 code round-trips") {
  checkRoundTrip(fmt(Dtype::f16));
  checkRoundTrip(fmt(Dtype::bf16));
}

TEST_CASE("bf16 decodes as the top half of an f32") {
  for (uint32_t code = 0; code < 65536; ++code) {
    float v = bf16ToF32(uint16_t(code));
    if (std::isnan(v))
      continue;
    CHECK(bitsOf(v) == code << 16);
  }
}

#ifdef __FLT16_MAX__
TEST_CASE("f16 agrees with the compiler's _Float16 on every code and on random f32") {
  for (uint32_t code = 0; code < 65536; ++code) {
    _Float16 h;
    uint16_t c16 = uint16_t(code);
    std::memcpy(&h, &c16, 2);
    float reference = float(h);
    if (std::isnan(reference))
      continue;
    CHECK(bitsOf(f16ToF32(c16)) == bitsOf(reference));
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    float x = floatOf(rng());
    if (std::isnan(x))
      continue;
    _Float16 h = _Float16(x);
    uint16_t expected;
    std::memcpy(&expected, &h, 2);
    INFO("x bits " << bitsOf(x));
    CHECK(f32ToF16(x) == expected);
  }
}
#endif

TEST_CASE("bf16 rounds to nearest even like the integer rounding trick") {
  std::mt19937 rng(11);
  for (int i = 0; i < 300000; ++i) {
    uint32_t bits = rng();
    if (i % 3 == 0)
      bits = (bits & 0xFFFF0000u) | 0x8000u; // exact ties
    float x = floatOf(bits);
    if (std::isnan(x))
      continue;
    uint32_t expected = (bits + 0x7FFFu + ((bits >> 16) & 1)) >> 16;
    CHECK(f32ToBf16(x) == expected);
  }
}

TEST_CASE("encodeFloat's bf16 shortcut is numerics::encode on every 251st float") {
  // encodeFloat rounds floats within bf16's range (zeros and subnormals
  // included) on the bits; the rest (NaN, infinities, overflow) take the
  // general path.
  int64_t differ = 0;
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += 251) {
    float x = floatOf(static_cast<uint32_t>(bits));
    if (sim::encodeFloat(Dtype::bf16, x) != encode(x, fmt(Dtype::bf16)))
      ++differ;
  }
  for (uint32_t edge :
       {0x00000000u, 0x80000000u, 0x00000001u, 0x80008000u, 0x00018000u, 0x007F8000u,
        0x00800000u, 0x007FFFFFu, 0x7F7F0000u, 0x7F7F7FFFu, 0x7F7F8000u, 0x7F7FFFFFu, 0x7F800000u,
        0x80800000u, 0xFF7F8000u, 0x3F808000u, 0x3F818000u})
    if (sim::encodeFloat(Dtype::bf16, floatOf(edge)) != encode(floatOf(edge), fmt(Dtype::bf16)))
      ++differ;
  CHECK(differ == 0);
}

TEST_CASE("encodeFloat's e4m3 shortcut is numerics::encode on every 251st float") {
  // encodeFloat rounds floats of magnitude at most 1 on the bits (normals)
  // or as a count of 2^-9 (subnormals); the rest take the general path.
  int64_t differ = 0, shortcut = 0;
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += 251) {
    float x = floatOf(static_cast<uint32_t>(bits));
    shortcut += std::fabs(x) <= 1.0f;
    if (sim::encodeFloat(Dtype::f8e4m3, x) != encode(x, fmt(Dtype::f8e4m3)))
      ++differ;
  }
  // The boundaries: zeros, the subnormal ties (2^-10: to 0; 3 * 2^-10: to 2),
  // the last subnormal's tie with the smallest normal, the smallest normal,
  // a normal tie to even each way, the largest value below 1, 1 itself.
  for (float x : {0.0f, -0.0f, 0x1p-10f, 0x3p-10f, 0x5p-10f, 0xFp-10f, 0x1p-6f, -0x1p-6f,
                  0x1.1p-6f, 0x1.3p-6f, 0x1.fp-1f, 0x1.fffffep-1f, 1.0f, -1.0f, 0x1p-149f})
    if (sim::encodeFloat(Dtype::f8e4m3, x) != encode(x, fmt(Dtype::f8e4m3)))
      ++differ;
  CHECK(shortcut > 1000000);
  CHECK(differ == 0);
}

TEST_CASE("nearest even matches a brute-force oracle at every midpoint") {
  for (Dtype d : {Dtype::f8e4m3, Dtype::f8e5m2, Dtype::f6e2m3, Dtype::f6e3m2, Dtype::f4e2m1})
    checkNearestEven(fmt(d));
}

TEST_CASE("OCP e4m3 landmark values") {
  CHECK(decode(0x7E, e4m3()) == 448.0f);
  CHECK(decode(0xFE, e4m3()) == -448.0f);
  CHECK(decode(0x01, e4m3()) == std::ldexp(1.0f, -9));
  CHECK(decode(0x08, e4m3()) == std::ldexp(1.0f, -6));
  CHECK(decode(0x07, e4m3()) == std::ldexp(7.0f, -9));
  CHECK(decode(0x38, e4m3()) == 1.0f);
  CHECK(decode(0x78, e4m3()) == 256.0f); // exponent field 1111 is still finite
  CHECK(std::isnan(decode(0x7F, e4m3())));
  CHECK(std::isnan(decode(0xFF, e4m3())));
  CHECK(e4m3().maxFinite() == 448.0f);
  CHECK(bitsOf(decode(0x80, e4m3())) == 0x80000000u);
}

TEST_CASE("OCP e5m2 landmark values") {
  CHECK(decode(0x7B, e5m2()) == 57344.0f);
  CHECK(decode(0x7C, e5m2()) == INFINITY);
  CHECK(decode(0xFC, e5m2()) == -INFINITY);
  CHECK(std::isnan(decode(0x7D, e5m2())));
  CHECK(decode(0x01, e5m2()) == std::ldexp(1.0f, -16));
  CHECK(decode(0x04, e5m2()) == std::ldexp(1.0f, -14));
  CHECK(decode(0x3C, e5m2()) == 1.0f);
}

TEST_CASE("fp6, fp4 and ue8m0 landmark values") {
  const auto &e2m3 = fmt(Dtype::f6e2m3), &e3m2 = fmt(Dtype::f6e3m2), &e2m1 = fmt(Dtype::f4e2m1);
  CHECK(e2m3.maxFinite() == 7.5f);
  CHECK(decode(0x01, e2m3) == 0.125f);
  CHECK(decode(0x20, e2m3) == -0.0f);
  CHECK(e3m2.maxFinite() == 28.0f);
  CHECK(decode(0x01, e3m2) == 0.0625f);
  const float e2m1Values[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (uint32_t code = 0; code < 8; ++code) {
    CHECK(decode(code, e2m1) == e2m1Values[code]);
    CHECK(decode(code | 8, e2m1) == -e2m1Values[code]);
  }
  const auto &ue8m0 = fmt(Dtype::ue8m0);
  CHECK(decode(0x7F, ue8m0) == 1.0f);
  CHECK(decode(0x00, ue8m0) == std::ldexp(1.0f, -127));
  CHECK(decode(0xFE, ue8m0) == std::ldexp(1.0f, 127));
  CHECK(std::isnan(decode(0xFF, ue8m0)));
}

TEST_CASE("round to nearest even on ties") {
  CHECK(encode(1.0625f, e4m3()) == 0x38);               // 1 + 1/16: halfway 1 and 1.125, to 1
  CHECK(encode(1.1875f, e4m3()) == 0x3A);               // 1 + 3/16: halfway 1.125 and 1.25, to 1.25
  CHECK(encode(std::ldexp(1.0f, -10), e4m3()) == 0x00); // half the least subnormal: to 0
  CHECK(encode(std::ldexp(3.0f, -10), e4m3()) == 0x02); // 1.5 units: to 2 units
  CHECK(encode(464.0f, e4m3()) == 0x7E);                // halfway 448 and (absent) 480: to even 448
  CHECK(encode(61440.0f, e5m2()) == 0x7C); // halfway 57344 and 2^16: to even, overflows to inf
  CHECK(f32ToF16(65520.0f) == 0x7C00);
  CHECK(f32ToF16(std::nextafter(65520.0f, 0.0f)) == 0x7BFF);
  CHECK(f32ToBf16(floatOf(0x3F808000u)) == 0x3F80); // tie, even stays
  CHECK(f32ToBf16(floatOf(0x3F818000u)) == 0x3F82); // tie, odd rounds up
  const auto &tf32 = fmt(Dtype::tf32);
  CHECK(encode(1.0f + std::ldexp(1.0f, -11), tf32) == 0x3F800000u);
  CHECK(encode(1.0f + std::ldexp(3.0f, -11), tf32) == 0x3F804000u);
  CHECK(encode(1.0f + std::ldexp(1.0f, -11), tf32, {Rounding::NearestAway, false}) == 0x3F802000u);
}

TEST_CASE("overflow: NaN for e4m3, inf for e5m2, the largest finite with satfinite") {
  const ConvertMode sat{Rounding::NearestEven, true};
  CHECK(encode(465.0f, e4m3()) == 0x7F);
  CHECK(encode(465.0f, e4m3(), sat) == 0x7E);
  CHECK(encode(-1e9f, e4m3(), sat) == 0xFE);
  CHECK(encode(INFINITY, e4m3()) == 0x7F);
  CHECK(encode(INFINITY, e4m3(), sat) == 0x7E);
  CHECK(encode(-INFINITY, e5m2()) == 0xFC);
  CHECK(encode(-INFINITY, e5m2(), sat) == 0xFB);
  CHECK(encode(1e6f, e5m2()) == 0x7C);
  CHECK(encode(1e6f, e5m2(), sat) == 0x7B);
  CHECK(encode(100.0f, fmt(Dtype::f4e2m1), sat) == 0x7);
  CHECK(encode(-100.0f, fmt(Dtype::f6e3m2), sat) == 0x3F);
  CHECK(encode(1e6f, e4m3(), {Rounding::TowardZero, false}) == 0x7E);
}

TEST_CASE("NaN converts to each format's canonical NaN") {
  float nan = floatOf(0xFFC01234u);
  CHECK(f32ToF16(nan) == 0x7FFF);
  CHECK(f32ToBf16(nan) == 0x7FFF);
  CHECK(encode(nan, e4m3()) == 0x7F);
  CHECK(encode(nan, e5m2()) == 0x7F);
  CHECK(encode(nan, fmt(Dtype::ue8m0)) == 0xFF);
  CHECK(encode(nan, fmt(Dtype::tf32)) == 0x7FFFE000u);
  CHECK(encode(nan, fmt(Dtype::f32)) == kCanonicalNanF32);
  CHECK_FALSE(isRepresentable(nan, e4m3()));
}

TEST_CASE("ue8m0 rounds toward zero or toward +inf") {
  const auto &ue8m0 = fmt(Dtype::ue8m0);
  CHECK(encode(3.0f, ue8m0, {Rounding::TowardZero, false}) == 0x80);
  CHECK(encode(3.0f, ue8m0, {Rounding::TowardPositive, false}) == 0x81);
  CHECK(encode(2.0f, ue8m0, {Rounding::TowardPositive, false}) == 0x80);
  CHECK(encode(std::ldexp(1.0f, -140), ue8m0, {Rounding::TowardPositive, false}) == 0x00);
  CHECK(encode(floatOf(0x7F7FFFFFu), ue8m0, {Rounding::TowardPositive, false}) == 0xFF);
  CHECK(encode(floatOf(0x7F7FFFFFu), ue8m0, {Rounding::TowardPositive, true}) == 0xFE);
}

TEST_CASE("signed zeros and f32 subnormals") {
  CHECK(encode(-0.0f, e4m3()) == 0x80);
  CHECK(f32ToBf16(-0.0f) == 0x8000);
  CHECK(f32ToBf16(floatOf(0x00000001u)) == 0x0000);
  CHECK(f32ToBf16(floatOf(0x00008000u)) == 0x0000); // tie at the subnormal grid: to even 0
  CHECK(f32ToBf16(floatOf(0x00018000u)) == 0x0002);
  CHECK(encode(std::ldexp(1.0f, -130), e4m3()) == 0x00);
  Decoded d = decompose(0x01, e4m3());
  CHECK(d.cls == Decoded::Finite);
  CHECK(d.significand == 1);
  CHECK(d.exponent == -6); // a subnormal counts at the minimum exponent
}
