// The tensor-core MMA numerics model and the one table of MMA instructions
// per target (shape, operand dtypes, and the model's parameters).
//
// The model (docs/semantics.md, "Numerics"): one output element is one fused sum of
// the accumulator C and all K products of the instruction. Each product is
// exact; its exponent is the sum of the operands' exponents (a subnormal
// counted at its format's minimum exponent); C keeps its own exponent. Every
// term, C included, is truncated toward zero to `alignBits` fractional bits
// below the largest of those exponents; the truncated terms are added
// exactly; the sum is normalised and truncated toward zero to
// `outputMantissaBits`. NaN anywhere (or inf * 0, or inf - inf) gives the
// canonical NaN 0x7FFFFFFF.
//
// Depends only on the standard library, ir/Dtype.h, ir/Target.h and
// simulator/Numerics.h (no LLVM, no fmt, no CUDA): the hardware test
// compiles it with nvcc.
#pragma once

#include "ir/Dtype.h"
#include "ir/MmaShapes.h"
#include "ir/Target.h"
#include "simulator/Numerics.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::mma {

using tilescope::MmaFamily;
using tilescope::ptxTypeName;

// How much we know about an instruction's numerics.
enum class ModelStatus : uint8_t {
  Measured, // agreed bit for bit with hardware in tests/hw (docs/numerics.md)
  Reported, // parameters reported in docs/semantics.md, not measured by tests/hw
  Unknown,  // no model: evaluation refuses instead of guessing
};

// The parameters of the fused-sum model.
struct FusedSumParams {
  int alignBits;          // n: fractional bits kept below the largest exponent
  int outputMantissaBits; // mantissa bits of the result (23 = full f32)
};

// One row of the instruction table: an instruction of ir/MmaShapes.h (the
// one table of shapes and dtypes) and what the model knows of its numerics.
struct MmaInstructionRow : MmaShape {
  FusedSumParams params;
  ModelStatus status;
  std::string_view note; // why the status is what it is
};

// The table, in order; the CLI lists it on a bad --inst.
std::span<const MmaInstructionRow> instructionTable();

// The name of an instruction with a given N, e.g.
// "wgmma.m64n8k16.f32.bf16.bf16", "mma.sync.m16n8k16.f32.bf16.bf16",
// "tcgen05.mma.m128n64k16.f32.bf16.bf16",
// "tcgen05.mma.block_scale.m128n64k64.f32.e2m1.e2m1.ue8m0".
std::string instructionName(const MmaInstructionRow &row, int n);
// The row's name pattern with N written as "n{8..256/8}".
std::string instructionPattern(const MmaInstructionRow &row);

// How many instructions of `row`'s kind cover an M x N x K product: the
// widest M of the kind that the product fills, N as wide as the row allows,
// the row's K (the simulator's instruction count).
int64_t instructionsCovering(const MmaInstructionRow &row, int64_t M, int64_t N, int64_t K);

struct MmaInstruction {
  const MmaInstructionRow *row;
  int m, n, k;
};

// Finds the instruction `name` on `target`. On failure returns nullopt and
// sets `error` (unknown name, a name that exists only on other targets, or an
// N the instruction does not take).
std::optional<MmaInstruction> findInstruction(TargetKind target, std::string_view name,
                                              std::string *error);

// One product term of a fused sum: decoded operands and the power-of-two
// exponent of their block scales (0 without block scaling).
struct ProductTerm {
  numerics::Decoded a, b;
  int manBitsA, manBitsB;
  int scaleExponent = 0;
  bool scaleIsNaN = false;
};

// The model for one output element, as f32 bits.
uint32_t fusedSum(uint32_t cBits, std::span<const ProductTerm> products,
                  const FusedSumParams &params);

// The model over a whole tile, as the simulator's gemm needs it: A is M x K
// codes row-major, Bt is N x K codes (B transposed, so one output's operands
// are contiguous), C is M x N f32 bits updated in place. K runs in chunks of
// the row's k, in order, one fused sum per chunk and output; returns how many
// fused sums it evaluated. Bit for bit `fusedSum` on every chunk: the operands
// are decoded once into integer planes and chunks without NaN, infinity or an
// all-zero sum are added in 64-bit integers; the others go through
// `fusedSum`. Rows with block scales are not taken (use `evaluate`).
int64_t fusedSumTile(const MmaInstructionRow &row, int64_t M, int64_t N, int64_t K,
                     std::span<const uint32_t> a, std::span<const uint32_t> bt,
                     std::span<uint32_t> c);

// Operands of one instruction, row-major: A is M x K codes, B is K x N codes
// (storage form of the row's dtypes), C is M x N f32 bits. Block scales, if
// the instruction has them, are ue8m0 codes, M x K/scaleBlock for A and
// K/scaleBlock x N for B.
struct MmaOperands {
  std::span<const uint32_t> a, b, c;
  std::span<const uint32_t> scaleA, scaleB;
};

struct MmaResult {
  bool ok = false;
  std::string error;       // when !ok: unknown model or bad operand sizes
  std::vector<uint32_t> d; // M x N f32 bits
};

MmaResult evaluate(const MmaInstruction &inst, const MmaOperands &operands);

} // namespace tilescope::mma
