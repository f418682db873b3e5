// Internal to the engine: loops over the active lanes of a warp and the
// little conversions the interpreter's lane loops share.
#pragma once

#include "ir/Expr.h"
#include "simulator/Value.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

// The fused paths' loops (FusedStore.cpp, FusedLoop.cpp) have a clone for
// x86-64-v3 (AVX2, FMA) processors chosen at load time; they use integer
// moves and exactly rounded IEEE operations only, so every clone gives the
// same bits.
#if defined(__GNUC__) && defined(__x86_64__)
#define TILESCOPE_FUSED_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define TILESCOPE_FUSED_CLONES
#endif

namespace tilescope::sim {

// An element of `bytes` bytes (little-endian), zero-extended.
inline uint64_t loadLittle(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  std::memcpy(&v, p, static_cast<size_t>(bytes));
  return v;
}

// fn(std::integral_constant<int, bytes>) for the usual element sizes, so that
// the loops it runs copy elements with plain loads and stores instead of a
// memcpy call per element; fn(bytes) otherwise.
template <typename Fn> inline void withElementBytes(int bytes, Fn fn) {
  switch (bytes) {
  case 1:
    return fn(std::integral_constant<int, 1>{});
  case 2:
    return fn(std::integral_constant<int, 2>{});
  case 4:
    return fn(std::integral_constant<int, 4>{});
  case 8:
    return fn(std::integral_constant<int, 8>{});
  default:
    return fn(bytes);
  }
}

// Two's complement wrap-around, as the hardware's 64-bit integers.
inline int64_t wrapAdd(int64_t p, int64_t q) {
  return static_cast<int64_t>(static_cast<uint64_t>(p) + static_cast<uint64_t>(q));
}
inline int64_t wrapSub(int64_t p, int64_t q) {
  return static_cast<int64_t>(static_cast<uint64_t>(p) - static_cast<uint64_t>(q));
}
inline int64_t wrapMul(int64_t p, int64_t q) {
  return static_cast<int64_t>(static_cast<uint64_t>(p) * static_cast<uint64_t>(q));
}

inline bool isFloatKind(ValueKind k) {
  return k == ValueKind::Float || k == ValueKind::Literal;
}

// A NaN with its quiet bit set (the payload and the sign kept).
inline float quietNaN(float x) {
  return std::bit_cast<float>(std::bit_cast<uint32_t>(x) | 0x00400000u);
}

// The result of an f32 operation that has a NaN operand: the first NaN of
// the three in the order given, quieted. IEEE 754 only says that the result
// should be one of the input NaNs; x86 returns the one in the instruction's
// first source, and which operand that is depends on the instruction form the
// compiler picked for each loop, so the simulator fixes the order and every
// path (the general evaluator, fused stores, fused loops) gives the same bits.
// The order is the one the fused paths' instructions had (their outputs do
// not change): the left operand of a binary operator; of p * q + r, q, then r,
// then p, each as stored (a negation in the expression does not flip a NaN's
// sign, as in x86's vfnmadd).
[[gnu::cold, gnu::noinline]] inline float firstNaN(float a, float b, float c) {
  return quietNaN(std::isnan(a) ? a : std::isnan(b) ? b : c);
}

inline bool anyNaN(float a, float b) {
  return std::isnan(a) | std::isnan(b);
}
inline bool anyNaN(float a, float b, float c) {
  return std::isnan(a) | std::isnan(b) | std::isnan(c);
}

// f32 arithmetic of the simulated program: one IEEE single-precision
// operation, rounded to nearest even (operators other than + - * / give 0);
// a NaN operand gives firstNaN.
inline float f32Arith(BinaryOp op, float a, float b) {
  if (anyNaN(a, b)) [[unlikely]]
    return firstNaN(a, b, b);
  switch (op) {
  case BinaryOp::Add:
    return a + b;
  case BinaryOp::Sub:
    return a - b;
  case BinaryOp::Mul:
    return a * b;
  case BinaryOp::Div:
    return a / b;
  default:
    return 0.0f;
  }
}

// The contracted f32 multiply-add: -p * q + r, p * q - r or p * q + r
// (`variant` -1, 1, 0), one exactly rounded fmaf; a NaN operand gives
// firstNaN(q, r, p).
inline float f32Fma(int variant, float p, float q, float r) {
  if (anyNaN(p, q, r)) [[unlikely]]
    return firstNaN(q, r, p);
  return variant < 0 ? std::fmaf(-p, q, r) : std::fmaf(p, q, variant > 0 ? -r : r);
}

// Calls fn(lane) for every lane set in `mask`, in increasing order.
template <typename Fn> inline void forLanes(uint32_t mask, Fn fn) {
  if (mask == 0xFFFFFFFFu) { // converged warps: a plain loop the compiler can unroll
    for (int l = 0; l < kWarpSize; ++l)
      fn(l);
    return;
  }
  while (mask) {
    int l = std::countr_zero(mask);
    mask &= mask - 1;
    fn(l);
  }
}

inline uint64_t loadBits(const uint8_t *p, int bytes) {
  switch (bytes) {
  case 1:
    return *p;
  case 2: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
  }
  case 4: {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  default: {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  }
}

inline void storeBits(uint8_t *p, int bytes, uint64_t v) {
  switch (bytes) {
  case 1:
    *p = static_cast<uint8_t>(v);
    return;
  case 2: {
    uint16_t x = static_cast<uint16_t>(v);
    std::memcpy(p, &x, 2);
    return;
  }
  case 4: {
    uint32_t x = static_cast<uint32_t>(v);
    std::memcpy(p, &x, 4);
    return;
  }
  default:
    std::memcpy(p, &v, 8);
    return;
  }
}

// Every lane of `y` holds one positive power of two.
inline bool powerOfTwoDivisor(const LaneValues &y) {
  const int64_t q = y.lane[0].i;
  if (q <= 0 || (q & (q - 1)) != 0)
    return false;
  bool same = true;
  for (int l = 1; l < kWarpSize; ++l)
    same &= y.lane[l].i == q;
  return same;
}

// C's truncating integer quotient (`div`) or remainder of the active lanes;
// false when some active lane's divisor is zero (its result is then 0).
inline bool divideLanes(bool div, uint32_t mask, const LaneValues &x, const LaneValues &y,
                        LaneValues &out) {
  if (mask == ~0u && powerOfTwoDivisor(y)) {
    // One positive power of two in every lane (`laneid / 4`): shifts, without idiv.
    const int shift = std::countr_zero(static_cast<uint64_t>(y.lane[0].i));
    const int64_t low = y.lane[0].i - 1;
    for (int l = 0; l < kWarpSize; ++l) {
      const int64_t p = x.lane[l].i;
      const int64_t q = (p + ((p >> 63) & low)) >> shift; // rounded toward zero
      out.lane[l].i = div ? q : p - q * (low + 1);
    }
    return true;
  }
  bool bad = false;
  forLanes(mask, [&](int l) {
    int64_t p = x.lane[l].i, q = y.lane[l].i;
    bad |= q == 0;
    // INT64_MIN / -1 wraps instead of trapping.
    out.lane[l].i = q == 0 ? 0 : q == -1 ? (div ? wrapSub(0, p) : 0) : div ? p / q : p % q;
  });
  return !bad;
}

} // namespace tilescope::sim
