// The tensor-core MMA instructions, one row per instruction kind and target:
// shape (M, the N range, K), accumulator and operand dtypes, block scales.
// Part of the intrinsic table (ir/Intrinsics.h): the checker and dispatch
// read it for wgmma.mma_async / tcgen05.mma shapes, the emitter for the PTX
// spelling, and the simulator's numerics model (simulator/Mma.h) adds its
// parameters to each row.
//
// Depends only on the standard library, ir/Dtype.h and ir/Target.h (no LLVM,
// no fmt): the hardware test compiles it with nvcc.
#pragma once

#include "ir/Dtype.h"
#include "ir/Target.h"

#include <optional>
#include <span>
#include <string_view>

namespace tilescope {

enum class MmaFamily : uint8_t { MmaSync, Wgmma, Tcgen05, Tcgen05BlockScale };

// One row. It covers every N from nMin to nMax in steps of nStep (wgmma and
// tcgen05 take many N).
struct MmaShape {
  TargetKind target;
  MmaFamily family;
  int m, nMin, nMax, nStep, k;
  Dtype d, a, b;              // output/accumulator, A, B
  std::optional<Dtype> scale; // block-scale factor dtype (block-scaled kinds)
  int scaleBlock;             // K elements per scale factor (0: none)
  bool takesN(int n) const { return n >= nMin && n <= nMax && (n - nMin) % nStep == 0; }
};

// Every row, in order.
std::span<const MmaShape> mmaShapes();
// The row of `family` on `target` with these dtypes (the first, for the
// families with several M: the one with the smallest M), or null.
const MmaShape *findMmaShape(TargetKind target, MmaFamily family, Dtype d, Dtype a, Dtype b);
// "wgmma", "mma.sync", "tcgen05.mma", "tcgen05.mma.block_scale".
std::string_view mmaFamilyName(MmaFamily f);
// PTX spelling of an operand dtype (bf16, e4m3, e2m1, ue8m0, ...).
std::string_view ptxTypeName(Dtype d);

} // namespace tilescope
