// The layout proofs over a whole kernel, for `tilescope check`: every
// buffer's layout (scope, bounds, aliasing, replicas), every pair of buffers
// in one space (overlap), the shared-memory budget, and every operand whose
// instruction is known (InstructionRules.h). Findings are reported as
// diagnostics at the layout's source location, with the witness in the
// message, e.g.
//   gemm.tile:14:22: error: layout maps (3, 9) and (3, 13) to the same owner {...}
//
// Two entry points: verifyKernelLayouts() over plain buffer descriptions (any
// front end can fill them), and checkKernelLayouts() straight from a parsed
// Kernel. Depends on ir/ and the rest of verifier/; never on the command line.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Stmt.h"
#include "ir/InstructionRules.h"
#include "verifier/LayoutVerifier.h"

#include <llvm/Support/SMLoc.h>

#include <optional>
#include <string>
#include <vector>

namespace tilescope {

// One buffer of a kernel with a concrete shape.
struct KernelBuffer {
  std::string name;
  MemScope scope = MemScope::Shared;
  Dtype dtype = Dtype::f32;
  std::vector<int64_t> shape;
  Layout layout;
  llvm::SMLoc loc; // where its layout is written (else its declaration)
  // Where the allocation starts in its space. Shared and global buffers are
  // compared for overlap only when both are placed; tensor-memory layouts use
  // absolute lanes and columns and are always compared; registers are the
  // compiler's and never compared.
  std::optional<int64_t> baseByte;
  std::vector<std::string> aliases; // buffers it is declared to share storage with
  bool mayAlias = false;            // its own elements may share slots
  // Tensor memory that a tcgen05.alloc of the kernel places: its columns
  // start where the allocator puts them, disjoint from every other
  // allocation alive at the same time, so two such buffers are not compared
  // (their layouts' columns are relative to their own allocations).
  bool allocated = false;
};

// An operand of a primitive or intrinsic whose instruction is known.
struct OperandUse {
  std::string buffer;
  std::string instruction; // a name in instructionRules()
  InstructionUse use;
  llvm::SMLoc loc; // the call
};

struct KernelFinding {
  std::string buffer;
  llvm::SMLoc loc;
  LayoutViolation violation;
};

struct KernelLayoutReport {
  std::vector<KernelFinding> findings;
  std::vector<std::pair<llvm::SMLoc, std::string>> undecided;
  bool clean() const { return findings.empty() && undecided.empty(); }
};

KernelLayoutReport verifyKernelLayouts(const std::vector<KernelBuffer> &buffers,
                                       const std::vector<OperandUse> &uses,
                                       const TargetInfo &target, const LaunchShape &launch,
                                       const VerifyOptions &options = {});

// Errors into `diag` (one per finding) and a "not proved" warning per
// undecided proof; returns the number of findings.
unsigned reportKernelLayouts(const KernelLayoutReport &report, Diagnostics &diag);

// What checkKernelLayouts reads from the IR: buffers with constant shapes
// (others are listed in `skipped` with the reason), the launch, and the
// operands whose instruction follows from the call: copy_async into shared
// memory (or out of it) is TMA — point subscripts on leading dimensions are
// stages, and the global tensor's strides are proved multiples of 16 bytes
// for every admitted size — wg.gemm /
// wg.gemm_async read shared operands through wgmma descriptors on sm_90a, and
// gemm on sm_100a through tcgen05 descriptors.
// A global tensor's stride that a TMA copy hands to the hardware: it must be
// a multiple of 16 bytes for every size the kernel admits.
struct GlobalStride {
  std::string tensor;
  size_t dim = 0;
  Expr bytes;      // over the kernel's shape symbols
  llvm::SMLoc loc; // the copy
  // Decided apart from the kernel's other queries (tma.store, tma.load):
  // from the `where` clause's divisibility facts where they suffice, else in
  // a Z3 context of its own, so that asking it leaves the shared context,
  // and with it every later proof's answer, as it was.
  bool apart = false;
};

struct KernelLayoutInput {
  std::vector<KernelBuffer> buffers;
  std::vector<OperandUse> uses;
  std::vector<GlobalStride> globalStrides; // of TMA sources and destinations
  std::vector<Expr> constraints;           // the kernel's `where` clause
  TargetKind target = TargetKind::sm_90a;
  LaunchShape launch;
  std::vector<std::pair<llvm::SMLoc, std::string>> skipped;
};
KernelLayoutInput collectKernelLayouts(const Kernel &kernel);

// Whether `modulus` (a power of two) divides `bytes`, a product of constants
// and symbols, for every size, by the `where` clause's facts `v % c == 0`
// alone; false when they do not tell.
bool dividesByFacts(const Expr &bytes, const std::vector<Expr> &constraints, int64_t modulus);

// Proves every stride of `strides` a multiple of 16 bytes under `constraints`;
// a finding (kind Instruction) names the sizes that break it.
KernelLayoutReport verifyGlobalStrides(const std::vector<GlobalStride> &strides,
                                       const std::vector<Expr> &constraints,
                                       const VerifyOptions &options = {});

// collectKernelLayouts + verifyKernelLayouts + verifyGlobalStrides.
KernelLayoutReport proveKernelLayouts(const Kernel &kernel, const VerifyOptions &options = {});

// proveKernelLayouts + reportKernelLayouts; returns the number of findings.
unsigned checkKernelLayouts(const Kernel &kernel, Diagnostics &diag,
                            const VerifyOptions &options = {});

} // namespace tilescope
