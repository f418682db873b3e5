// What each data-movement or tensor-core instruction demands of the layout of
// the operand it touches, as one table (InstructionRules.cpp) that dispatch,
// the verifier, the simulator and codegen read alike, and the check of a
// layout against one entry. Also the access pattern each instruction makes in
// shared memory, which BankConflicts.h analyses.
//
// Facts encoded (PTX ISA 8.x):
//  - cp.async.bulk.tensor (TMA): rank <= 5, every box extent in [1, 256], the
//    inner box extent times the element size a multiple of 16 bytes, global
//    strides multiples of 16 bytes, shared destination 128-byte aligned; with a
//    swizzle mode the inner box is at most the swizzle span (32/64/128 bytes)
//    and the destination is aligned to the swizzle pattern's repeat. The box
//    lands dense and row-major (swizzled by the mode) in shared memory.
//  - ldmatrix / stmatrix: 8x8 matrices of 16-bit elements, each row 16
//    contiguous bytes at a 16-byte aligned address; thread t supplies the
//    address of row t % 8 of matrix t / 8.
//  - wgmma / tcgen05.mma shared-memory descriptors: 8-row core matrices, rows of
//    the swizzle span W (16 bytes without swizzle) apart; the 8 x W atoms repeat
//    with one leading byte offset (along K for K-major) and one stride byte
//    offset (along M/N), both multiples of 16 bytes below 2^18; swizzled atoms
//    start at multiples of 8 x W bytes; a K step of one instruction is 32 bytes.
//  - tcgen05.ld / tcgen05.st shapes 32x32b, 16x64b, 16x128b, 16x256b,
//    16x32bx2: a warp reaches the 32 TMEM lanes of its quarter (warp % 4), so a
//    tile's rows start at a multiple of the shape's lanes and map to
//    consecutive lanes; each row's bits fill whole repetitions.
//
// Depends on ir/ only (ir/LayoutFacts.h); never on Z3 or the parser.
#pragma once

#include "ir/Intrinsics.h"
#include "ir/LayoutFacts.h"

#include <optional>
#include <string_view>
#include <vector>

namespace tilescope {

enum class InstructionFamily : uint8_t {
  Tma,          // cp.async.bulk.tensor: global <-> shared box copy
  Matrix,       // ldmatrix / stmatrix: 8x8 b16 matrices, one row address per thread
  SmemOperand,  // wgmma / tcgen05.mma operand through a shared-memory descriptor
  TmemAccess,   // tcgen05.ld / tcgen05.st
  SharedAccess, // ld.shared / st.shared of 32, 64 or 128 bits per thread
};

struct InstructionRule {
  std::string_view name;
  InstructionFamily family = InstructionFamily::SharedAccess;
  MemScope scope = MemScope::Shared;       // the operand whose layout is checked
  // The targets that have it, in the intrinsic table's terms (targetHas).
  TargetFeature feature = TargetFeature::None;
  int elementBits = 0; // required element width; 0: any
  int matrices = 0;    // Matrix: 8x8 matrices per instruction
  int lanes = 0;       // TmemAccess: TMEM lanes one warp reaches per access
  int bitsPerLane = 0; // TmemAccess: bits per lane per repetition
  int accessBits = 0;  // SharedAccess: bits per thread
  int maxRank = 0, maxBoxExtent = 0, innerBytesMultiple = 0; // Tma
  std::string_view summary;
};

// The family of the instruction a native call issues, where the table has
// one that constrains its execution beyond the operand's layout: tcgen05.ld
// and tcgen05.st are TmemAccess. Nothing for the other calls.
std::optional<InstructionFamily> instructionFamilyOf(IntrinsicId call);

// TmemAccess (PTX ISA, tcgen05 "data movement" and its access restrictions):
// the warps of a CTA fall into four subpartitions by warp index modulo 4, and
// warp w reaches with tcgen05.ld / tcgen05.st only the 32 TMEM lanes of its
// own, 32 (w % 4) .. 32 (w % 4) + 31. The simulator refuses any other lane;
// check proves it (verifier/TmemLanes.h).
struct TmemLaneWindow {
  int64_t first = 0, count = 0;
};
inline constexpr int64_t kTmemSubpartitions = 4;
inline constexpr int64_t kTmemLanesPerSubpartition = 32;
inline TmemLaneWindow tmemLaneWindowOfWarp(int64_t warp) {
  return {kTmemLanesPerSubpartition * (warp % kTmemSubpartitions), kTmemLanesPerSubpartition};
}

const std::vector<InstructionRule> &instructionRules();
const InstructionRule *findInstructionRule(std::string_view name);
// "tma, ldmatrix.x1, ..." for help and error text.
std::string instructionRuleNames();

// Facts about the instruction's use that the operand layout does not carry.
struct InstructionUse {
  std::vector<int64_t> globalStridesBytes; // Tma: strides of the global tensor
  // Tma: leading dimensions that index separate boxes (pipeline stages: the
  // operand is As[s]); each box is checked on its own.
  size_t batchDims = 0;
  bool mnMajor = false; // SmemOperand: contiguous along M/N, not K
};

// Violations (kind Instruction) of `rule` by the operand `layout` over `shape`.
std::vector<LayoutViolation> checkInstruction(const InstructionRule &rule, const Layout &layout,
                                              const std::vector<int64_t> &shape,
                                              const BufferInfo &buffer, const TargetInfo &target,
                                              const InstructionUse &use = {});

} // namespace tilescope
