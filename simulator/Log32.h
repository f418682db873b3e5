// The IR's `log` in single precision, bit for bit the same on the CPU (the
// simulator) and on the GPU (the CUDA lowering's `ts_log`,
// codegen/prelude/device.cuh). The GPU's own logs cannot be reproduced
// cheaply: `__logf` is `lg2.approx.f32` times ln 2, and `lg2.approx` is not a
// function of the mantissa plus the exponent (docs/attention.md, measured on
// an H100), `logf` is libdevice's and not specified to the bit. So `log` is
// computed from operations IEEE 754 defines exactly: integer operations on
// the bits, f32 add, subtract, multiply, divide and fused multiply-add, each
// rounded to nearest even; the GPU side uses the `_rn` intrinsics, which nvcc
// does not contract or reorder.
//
// The method: x = 2^e m with m in [sqrt(1/2), sqrt(2)); f = m - 1 (exact);
// s = f / (2 + f), so log m = 2 atanh s = f - (f^2/2 - s (f^2/2 + R)) with
// R = z (2/3 + 2/5 z + 2/7 z^2 + 2/9 z^3 + 2/11 z^4), z = s^2 <= 0.0295 (the
// series' coefficients; the first one left out weighs z^5 / 11 |s| < 1e-9
// of log m); log x = e ln2_hi + (log m + e ln2_lo), with ln2_hi ln 2 to 16
// bits, so that e ln2_hi is exact for every exponent. Error: at most 1 unit in
// the last place against the exact log on every positive f32 input
// (tests/unit/simulator/Log32Test.cpp checks every input in [2^-3, 2^3) and a
// sample of all exponents). Special inputs: log(+-0) = -inf, log(+inf) = +inf,
// a negative input gives the quiet NaN 0x7fffffff, a NaN is returned as it is;
// subnormal inputs are scaled by 2^23 first (exact).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace tilescope::sim {

inline float log32(float x) {
  uint32_t i;
  std::memcpy(&i, &x, 4);
  if (x != x)
    return x;
  if (x == 0.0f)
    return -INFINITY;
  if (i >= 0x80000000u) {
    const uint32_t nan = 0x7fffffffu;
    float r;
    std::memcpy(&r, &nan, 4);
    return r;
  }
  if (i == 0x7f800000u)
    return x;
  int32_t e = 0;
  if (i < 0x00800000u) {
    x = x * 8388608.0f; // 2^23: exact
    std::memcpy(&i, &x, 4);
    e = -23;
  }
  // k: the exponent that puts m in [sqrt(1/2), sqrt(2)) (0x3f3504f3 is the
  // first f32 at or above sqrt(1/2)); an arithmetic shift.
  const int32_t k = static_cast<int32_t>(i - 0x3f3504f3u) >> 23;
  e += k;
  const uint32_t mi = i - (static_cast<uint32_t>(k) << 23);
  float m;
  std::memcpy(&m, &mi, 4);
  const float f = m - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  float t = std::fmaf(z, 0x1.745d18p-3f, 0x1.c71c72p-3f); // 2/11, 2/9
  t = std::fmaf(z, t, 0x1.24924ap-2f);                    // 2/7
  t = std::fmaf(z, t, 0x1.99999ap-2f);                    // 2/5
  t = std::fmaf(z, t, 0x1.555556p-1f);                    // 2/3
  const float r = z * t;
  const float hf = 0.5f * f;
  const float hfsq = hf * f;
  const float ef = static_cast<float>(e);
  const float lo = std::fmaf(s, hfsq + r, ef * 0x1.7f7d1cp-20f); // ln 2 - ln2_hi
  const float d = (hfsq - lo) - f;
  return std::fmaf(ef, 0x1.62e4p-1f, -d); // ln2_hi = 0x3f317200
}

} // namespace tilescope::sim
