// The GPU's exp2, bit for bit: PTX `ex2.approx.ftz.f32` (MUFU.EX2), which the
// CUDA lowering emits for the IR's `exp2` (codegen: `ts_ex2`). Not correctly
// rounded: measured on the 2^-23 grids of [0, 1) and (-1, 0] on an H200
// (sm_90, 2026-11-26, .dev/attn3/ex2dump.cu, docs/numerics.md "exp2"), where
// 61 % (negative side) and 71 % (positive) of the results are the correctly
// rounded ones and the others are 1 or 2 units in the last place off. The
// measured results are the model's table (simulator/data/, 2 x 2^23 entries);
// around it the model does what the measurements showed: the fraction of x
// truncated to 23 bits (by magnitude, for either sign), 2^k scaling for
// |x| >= 1 (exact), +inf from 128 on, inputs and results below 2^-126 flushed
// to zero.
#pragma once

namespace tilescope::sim {

// ex2.approx.ftz.f32(x), bit for bit as measured on sm_90.
float ex2ApproxFtz(float x);

} // namespace tilescope::sim
