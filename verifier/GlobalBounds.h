// Accesses in bounds: every region a kernel reads or writes lies inside its
// buffer — global tensors, shared buffers, register tiles and tensor-memory
// buffers — for every size the `where` clause admits, every CTA of the grid,
// every iteration and every executing thread. (The name is historical: until
// 2026-11-26 only global accesses were checked.)
//
// What "inside" means follows the simulator (simulator/EngineMemory.cpp,
// EngineSchedule.cpp, AsyncGroups.cpp), which follows the hardware where it
// defines the access:
// - a TMA box's global side (copy_async with a global operand, tma.load,
//   tma.store on a target with TMA) must start inside the tensor in every
//   dimension (0 <= start < extent); its elements past the tensor's end are
//   clipped by the hardware (a load fills them with zeros, a store drops
//   them). A box that starts outside the tensor is a finding: the simulator
//   refuses it, and it is what an extra, idle CTA of a grid rounded up once
//   too often (`M / 64 + 1`) issues;
// - every other access (element loads and stores, tile primitives, cp.async,
//   any access of shared, register or tensor memory,
//   the local side of peer copies) must lie wholly inside its buffer
//   (0 <= start, start + extent <= extent of the buffer);
// - a region is never empty (extent >= 1).
//
// The proof, per access: intervals of the indices first
// (verifier/BoundsIntervals.h); then, in the kernel's one coverage solver
// (verifier/CoverageSolver.h, each query in a push/pop scope; a witness is
// minimised, so it does not depend on the queries before it), Z3 looks for
// sizes satisfying
// `where`, a CTA inside the grid, loop values inside their loops and on their
// step, a thread among those executing the access and the access's guards,
// for which some dimension breaks the rule. None: proved. One: the executor is
// evaluated concretely at Z3's (least) values; it breaks the rule there too —
// a finding naming the sizes, the CTA, the thread, the iteration and the
// element outside the tensor; it does not (a guard Z3 could not express, a
// value that does not evaluate) — not proved, never proved.
//
// Depends on ir/, sync/ and proof/ (Z3 inside the .cpp).
#pragma once

#include "sync/BarrierSkeleton.h"
#include "verifier/WriteCoverage.h"

#include <set>
#include <string>

namespace tilescope {

struct BoundsOptions {
  unsigned timeoutMs = 4000;
};

// Adds the bounds obligation's findings (`out of bounds: ...`), undecided
// accesses and per-tensor results to `report` (the write-coverage report:
// both are obligations on the kernel's global accesses). `floats` are the
// float scalar parameters (no sizes).
void proveGlobalBounds(const BarrierSkeleton &skeleton, const std::set<std::string> &floats,
                       CoverageReport &report, const BoundsOptions &options = {});

} // namespace tilescope
