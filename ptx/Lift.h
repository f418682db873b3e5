// Lifting a PTX kernel's synchronisation into the skeleton the barrier
// proofs take (sync/BarrierSkeleton.h), so that foreign PTX is checked by
// the same proofs as the tile IR (`tilescope ptx check`).
//
// What is lifted (every value through Values.h, so only what is derivable):
//  - mbarrier.init / arrive / arrive.expect_tx / expect_tx and try_wait /
//    test_wait .parity spin loops, on barriers addressed as a shared symbol
//    plus a constant plus a ring index; consecutive barriers initialised
//    alike form an array, split where a loop's ring starts;
//  - cp.async.bulk.tensor loads completing on an mbarrier (the bytes they
//    deliver come from `--tma-box`: a tensor map's box is not in the PTX);
//  - wgmma.fence / mma_async / commit_group / wait_group, fence.proxy.async,
//    fence.mbarrier_init, bar.sync / barrier.sync / bar.arrive with ids and
//    counts, cp.async.bulk commit / wait_group (TMA stores), cp.async groups;
//  - which threads execute each event: branch conditions over %tid.x
//    (and elect.sync, read as lane 0 of a converged warp) are evaluated for
//    every thread; conditions over parameters and loop counters become the
//    event's guards; roles are the warp-uniform selections where the
//    outermost loop starts;
//  - loops: natural loops with an induction variable and a derivable bound,
//    entered do-while style (`max(1, n)` iterations); a `!=` latch only when
//    Z3 proves its bound ahead of the counter where the loop is entered, and
//    a skip test equivalent to n >= 1 folded into the loop (`for it in 0 ..
//    n`, LiftSolve.h), and outermost loops whose ends Z3 proves equal given
//    one spelling (relateLoopBounds: a do-while `n` and a header-tested
//    `max(0, n)`), so that the stage proofs relate their fills and reads;
//  - tcgen05 alloc / dealloc / mma / commit / ld / wait::ld (LiftTcgen05.h)
//    and mbarrier.inval.
//  - shared-memory accesses (LiftMemory.h): ld / st / atom / red .shared,
//    ldmatrix / stmatrix, cp.async, the shared side of TMA loads and
//    stores, wgmma operands through nvcc-built descriptors, for the race
//    check and the pipeline-stage proofs.
// What is not lifted, and makes the verdict `unknown` with the reason, never
// `proved`: the accesses LiftMemory.h leaves out; global memory is not
// modelled (the grid and the tensor maps are launch arguments); register-indirect
// barrier addresses that do not fit the forms above, loops without a
// derivable trip count around synchronisation, calls, clusters, the tcgen05
// forms LiftTcgen05.h leaves out.
//
// Depends on ptx/, ir/ and verifier/.
#pragma once

#include "ptx/Ptx.h"
#include "sync/BarrierSkeleton.h"

#include <map>
#include <string>

namespace tilescope::ptx {

struct LiftOptions {
  // Bytes one TMA load through the tensor map of a parameter delivers:
  // "param_6" -> 8192.
  std::map<std::string, int64_t> tmaBoxBytes;
  // What the launch guarantees, as the IR's `where` clause does: lower
  // bounds on parameters, `param_4 >= 1` (`--assume`). They become the
  // skeleton's constraints, and a guard they imply is dropped.
  struct LowerBound {
    std::string param;
    int64_t min = 0; // param >= min
  };
  std::vector<LowerBound> assumptions;
};

struct Lifted {
  BarrierSkeleton skeleton;
  // What the lifting left out although it matters to a proof: each makes
  // the verdict unknown. (Also in skeleton.unsupported when the barrier
  // proofs should see it.)
  std::vector<std::pair<llvm::SMLoc, std::string>> notLifted;
  bool txBytesKnown = true; // false: expect_tx against delivered bytes is not checked
  // Every synchronising instruction lifted (transaction bytes aside): only
  // then is a finding trusted; otherwise a missing arrival may be one that
  // was left out, and the finding is reported as unknown.
  bool complete = true;
  int64_t events = 0;
  // Shared-memory accesses (LiftMemory.h) left out: the race and stage
  // checks do not cover them, so the verdict is unknown; findings between the
  // accesses that were lifted stand.
  std::vector<std::pair<llvm::SMLoc, std::string>> memoryNotLifted;
  int64_t accesses = 0; // memory accesses lifted
};

Lifted liftSynchronisation(const Module &m, const Function &kernel, const LiftOptions &options);

} // namespace tilescope::ptx
