// Internal to the engine: loops over the active lanes of a warp and the
// little conversions the interpreter's lane loops share.
#pragma once

#include "ir/Expr.h"
#include "simulator/Value.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace tilescope::sim {

inline bool isFloatKind(ValueKind k) {
  return k == ValueKind::Float || k == ValueKind::Literal;
}

// f32 arithmetic of the simulated program: one IEEE single-precision
// operation, rounded to nearest even (operators other than + - * / give 0).
inline float f32Arith(BinaryOp op, float a, float b) {
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
// (`variant` -1, 1, 0), one exactly rounded fmaf.
inline float f32Fma(int variant, float p, float q, float r) {
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

} // namespace tilescope::sim
