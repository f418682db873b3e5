#include "ir/MmaShapes.h"

#include <array>

namespace tilescope {

namespace {
using T = TargetKind;
using D = Dtype;
using F = MmaFamily;

// Adding an MMA instruction (or a target) is adding a row here; the
// simulator's numerics (simulator/Mma.cpp) say what they know of it.
// clang-format off
constexpr std::array kShapes = {
  //       target       family               M  Nmin Nmax step K  D       A           B           scale      block
  // Hopper warpgroup MMA (PTX ISA: wgmma.mma_async, dense).
  MmaShape{T::sm_90a,  F::Wgmma,            64,   8, 256,  8, 16, D::f32, D::bf16,    D::bf16,    {},        0},
  MmaShape{T::sm_90a,  F::Wgmma,            64,   8, 256,  8, 16, D::f32, D::f16,     D::f16,     {},        0},
  MmaShape{T::sm_90a,  F::Wgmma,            64,   8, 256,  8, 32, D::f32, D::f8e4m3,  D::f8e4m3,  {},        0},
  MmaShape{T::sm_90a,  F::Wgmma,            64,   8, 256,  8, 32, D::f32, D::f8e4m3,  D::f8e5m2,  {},        0},
  MmaShape{T::sm_90a,  F::Wgmma,            64,   8, 256,  8, 32, D::f32, D::f8e5m2,  D::f8e4m3,  {},        0},
  MmaShape{T::sm_90a,  F::Wgmma,            64,   8, 256,  8, 32, D::f32, D::f8e5m2,  D::f8e5m2,  {},        0},
  MmaShape{T::sm_90a,  F::Wgmma,            64,   8, 256,  8,  8, D::f32, D::tf32,    D::tf32,    {},        0},
  MmaShape{T::sm_90a,  F::Wgmma,            64,   8, 256,  8, 16, D::f16, D::f16,     D::f16,     {},        0},
  // Warp-level MMA on Hopper.
  MmaShape{T::sm_90a,  F::MmaSync,          16,   8,   8,  8, 16, D::f32, D::bf16,    D::bf16,    {},        0},
  MmaShape{T::sm_90a,  F::MmaSync,          16,   8,   8,  8, 16, D::f32, D::f16,     D::f16,     {},        0},
  MmaShape{T::sm_90a,  F::MmaSync,          16,   8,   8,  8,  8, D::f32, D::bf16,    D::bf16,    {},        0},
  MmaShape{T::sm_90a,  F::MmaSync,          16,   8,   8,  8, 32, D::f32, D::f8e4m3,  D::f8e4m3,  {},        0},
  // Ampere.
  MmaShape{T::sm_80,   F::MmaSync,          16,   8,   8,  8, 16, D::f32, D::bf16,    D::bf16,    {},        0},
  MmaShape{T::sm_80,   F::MmaSync,          16,   8,   8,  8, 16, D::f32, D::f16,     D::f16,     {},        0},
  // Blackwell tcgen05.mma: kind::f16, kind::f8f6f4, kind::mxf4nvf4 (scale_vec::4X, ue8m0).
  MmaShape{T::sm_100a, F::Tcgen05,          64,   8, 256,  8, 16, D::f32, D::bf16,    D::bf16,    {},        0},
  MmaShape{T::sm_100a, F::Tcgen05,         128,  16, 256, 16, 16, D::f32, D::bf16,    D::bf16,    {},        0},
  MmaShape{T::sm_100a, F::Tcgen05,          64,   8, 256,  8, 16, D::f32, D::f16,     D::f16,     {},        0},
  MmaShape{T::sm_100a, F::Tcgen05,         128,  16, 256, 16, 16, D::f32, D::f16,     D::f16,     {},        0},
  MmaShape{T::sm_100a, F::Tcgen05,         128,  16, 256, 16, 32, D::f32, D::f8e4m3,  D::f8e4m3,  {},        0},
  MmaShape{T::sm_100a, F::Tcgen05BlockScale, 128, 8, 256,  8, 64, D::f32, D::f4e2m1,  D::f4e2m1,  D::ue8m0, 16},
  // The other block-scaled kinds: kind::mxf8f6f4 with ue8m0 per 32, NVFP4's e4m3 scales per 16.
  MmaShape{T::sm_100a, F::Tcgen05BlockScale, 128, 8, 256,  8, 32, D::f32, D::f8e4m3,  D::f8e4m3,  D::ue8m0, 32},
  MmaShape{T::sm_100a, F::Tcgen05BlockScale, 128, 8, 256,  8, 64, D::f32, D::f4e2m1,  D::f4e2m1,  D::f8e4m3, 16},
};
// clang-format on
} // namespace

std::span<const MmaShape> mmaShapes() {
  return kShapes;
}

const MmaShape *findMmaShape(TargetKind target, MmaFamily family, Dtype d, Dtype a, Dtype b) {
  const MmaShape *best = nullptr;
  for (const MmaShape &s : kShapes)
    if (s.target == target && s.family == family && s.d == d && s.a == a && s.b == b &&
        (!best || s.m < best->m))
      best = &s;
  return best;
}

std::string_view mmaFamilyName(MmaFamily f) {
  switch (f) {
  case F::MmaSync:
    return "mma.sync";
  case F::Wgmma:
    return "wgmma";
  case F::Tcgen05:
    return "tcgen05.mma";
  case F::Tcgen05BlockScale:
    return "tcgen05.mma.block_scale";
  }
  return "?";
}

std::string_view ptxTypeName(Dtype d) {
  switch (d) {
  case D::f8e4m3:
    return "e4m3";
  case D::f8e5m2:
    return "e5m2";
  case D::f6e2m3:
    return "e2m3";
  case D::f6e3m2:
    return "e3m2";
  case D::f4e2m1:
    return "e2m1";
  default:
    return dtypeName(d);
  }
}

} // namespace tilescope
