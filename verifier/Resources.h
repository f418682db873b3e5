// The static resource check: what one CTA of a kernel takes from an SM, and
// the operand ranges of its instructions, against the target's limits. Each
// buffer alone was bounded by the type checker (ir/SizeLimits.h); this check
// adds them up the way the kernel runs on hardware:
//  - shared memory per CTA, laid out as the CUDA lowering lays it out
//    (codegen/CudaEmitter.cpp: each shared buffer 1024-byte aligned, a
//    16-byte word per tensor-memory buffer for its address, 8 bytes per
//    mbarrier, plus 1024 bytes to align the dynamic base), against the
//    target's shared memory per CTA (227 KiB on sm_90a and sm_100a);
//  - registers per CTA under setmaxnreg: the register count each warpgroup
//    ends with (its last setmaxnreg, else what the launch gave it) times its
//    threads, against the CTA's pool (the launch's registers per thread --
//    __launch_bounds__(threads, 1): the SM's 65,536 registers over the
//    CTA's warps, in steps of 8, at most 255 -- times the threads).
//    setmaxnreg.inc blocks until the pool has the registers: asking for more
//    than it holds is a hang. An .inc below or a .dec above the warpgroup's
//    current count is reported too;
//  - tensor-memory columns: the tcgen05.alloc columns of a CTA together,
//    against the SM's 512 (tcgen05.alloc blocks until columns are free);
//  - every integer operand with a range in the intrinsic table
//    (ir/Intrinsics.h, IntRange): constants in range, immediates constant,
//    CTA ranks and masks within the cluster.
// Threads per CTA and cluster size are the parser's and the checker's.
//
// Findings carry source locations; every message starts with
// "resource limit:" (exceeded budgets) or "operand range:".
//
// resourceSummary() is the small figure set the reward command prints:
//
//   shared 209 KiB (214016 bytes), 168 registers/thread (setmaxnreg: 40, 232, 232),
//   tensor memory 0 columns, 384 threads, 1 CTA/SM (limited by shared memory),
//   occupancy 12/64 warps
//
// Depends on ir/ only (no Z3).
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Stmt.h"
#include "ir/Target.h"

#include <string>
#include <utility>
#include <vector>

namespace tilescope {

struct ResourceSummary {
  int64_t sharedBytes = 0;        // per CTA, as the lowering allocates it
  int64_t registersPerThread = 0; // the largest warpgroup's count (an estimate without setmaxnreg)
  std::vector<int64_t> registersPerWarpgroup; // after setmaxnreg (the launch's count without)
  bool setmaxnreg = false;
  int64_t registersPerCta = 0;
  int64_t tmemColumns = 0; // tcgen05.alloc columns of one CTA
  int64_t threads = 0;
  int64_t clusterSize = 1;
  int64_t ctasPerSm = 0;  // resident CTAs of this kernel per SM
  std::string limitedBy;  // what bounds ctasPerSm: "shared memory", "registers", ...
  int64_t warpsPerSm = 0; // resident warps
  int64_t maxWarpsPerSm = 64;
  std::string str() const; // the one-line form above
};

// The registers per thread ptxas may use under __launch_bounds__(threads,
// ctas): the SM's 65536 registers over the warps of `ctas` CTAs (the
// launch's ctas_per_sm), in the allocation unit of 8 registers per thread,
// at most the target's per-thread limit.
int64_t launchRegisterBudget(int64_t threads, const TargetInfo &target, int64_t ctas = 1);

struct ResourceFinding {
  llvm::SMLoc loc;
  std::string message;
  std::vector<std::pair<llvm::SMLoc, std::string>> notes;
};

struct ResourceReport {
  ResourceSummary summary;
  std::vector<ResourceFinding> findings;
};

// For a kernel the type checker accepted.
ResourceReport checkResources(const Kernel &kernel);
ResourceSummary resourceSummary(const Kernel &kernel);

// Errors with notes; returns the number of findings.
unsigned reportResources(const ResourceReport &report, Diagnostics &diag);
// For `tilescope check` and `lower`: check and report.
unsigned verifyResources(const Kernel &kernel, Diagnostics &diag);

} // namespace tilescope
