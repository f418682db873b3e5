// The exhaustive fallback of the barrier proofs: every interleaving of the
// processes of a skeleton unrolled at concrete sizes (ConcreteSkeleton.h),
// explored with a visited-state set, so it terminates and misses nothing at
// those sizes.
//
// The model. Each mbarrier element has its completed-phase count, the
// arrivals still pending in the current phase and the transaction count.
// An arrival lowers the pending count (arrive_expect_tx raises the byte count
// first), expect_tx raises the byte count, a TMA copy is issued by its
// process and delivers its bytes later, as a separate event that any
// interleaving may place anywhere after the issue; a phase completes when no
// arrival is pending and the byte count is 0. A wait with parity p passes
// when the completed-phase count has the other parity. cta.sync and named
// barriers block until their thread count arrived; cluster.sync until every
// thread of every CTA of the cluster did, and barrier.cluster.wait until the
// phase of the split cluster barrier its process arrived in completed. wgmma.mma_async opens a
// group that commit_group closes and wait_group(n) retires once at most n
// later groups remain.
//
// Accesses are intervals: a synchronous access of a tracked buffer starts
// and ends in two steps, a TMA write lasts from its issue to its delivery, a
// wgmma operand read from its issue to the wait_group that retires its group.
// Two intervals of different processes on the same buffer and stage, one a
// write, that are open at once are a conflict: `read before filled` when the
// read starts during the write, `overwrite while read` when the write starts
// during the read.
//
// An element the declaration does not initialise has no count until an
// mbarrier.init step of some process runs; a step on it before then is a
// finding (`mbarrier init`), naming whether an init comes later.
//
// Findings: a state where some process cannot move and nothing is in flight
// (deadlock; `expect_tx bytes mismatch` when the blocking phase has all its
// arrivals but bytes outstanding), an arrival beyond the pending count
// (over-arrival), a wait that passes on another phase than the one its
// round means (parity aliasing: the process's n-th wait on an element means
// phase n, or n - 1 when the parity says so), a conflict, and a run that ends
// with a phase half complete (phase never completes). Each names the process,
// the iteration, the barrier element, the phase and the counts.
//
// Depends on verifier/ (no Z3).
#pragma once

#include "verifier/BarrierProofs.h"
#include "verifier/ConcreteSkeleton.h"

#include <string>
#include <vector>

namespace tilescope {

struct ExplorationResult {
  std::vector<ProtocolFinding> findings;
  size_t states = 0;
  bool complete = false; // every reachable state was visited
  std::string limit;     // why not complete
};

ExplorationResult exploreSkeleton(const ConcreteSkeleton &skeleton, size_t stateCap);

} // namespace tilescope
