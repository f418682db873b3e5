// Which pairs of memory accesses the pipeline-stage proof of the barrier
// proofs decides (BarrierProofs.cpp, checkStages: every read ordered after
// its round's fill, every refill after the previous round's release), and
// which the static race check does (racecheck/StaticRaces.cpp). One
// predicate for both sides, so that no pair falls between them: before, the
// race check left every two-role pair inside loops to the stage proof, which
// compared only a fill with a read in loops proved to run alike, and two
// roles writing one stage slot (or a fill and a read in loops of different
// trip counts) were checked by neither and passed as proved.
//
// Depends on the skeleton only (BarrierSkeleton.h); no Z3.
#pragma once

#include "sync/BarrierSkeleton.h"

namespace tilescope {

// Whether accesses x of event a and y of event b are a pipeline stage's fill
// and read: one writes and the other reads the same shared or tensor-memory
// buffer (neither through DSMEM), the events belong to different roles, and
// both sit in loops whose outermost loops are the same as written (begin, end
// and step): the loop a ring turns with. Such a pair is the stage proof's
// (which leaves open what it cannot decide: inner loops that differ, trip
// counts it cannot prove equal); every other pair is the race check's (an
// accumulator written in the k-loop and read back in a loop of its own after
// a wait outside both, two writes).
bool isStagePair(const BarrierSkeleton &sk, const SyncEvent &a, const MemoryAccess &x,
                 const SyncEvent &b, const MemoryAccess &y);

// The same fill and read inside ONE role, by events that run in different
// processes (`processes`: skeletonProcesses of verifier/ConcreteSkeleton.h,
// the warp-uniform parts of a role, such as a producer warp and consumer
// warps under `if warpid == ...` inside a loop both run): the two interleave
// like two roles, so the stage proof decides them too. The static race check
// keeps checking such pairs as well (isStagePair leaves them to it): a pair of
// one role is proved only when both checks prove it. Before, the stage proof
// compared only pairs of two roles, and a stage a role's two parts shared
// passed the barrier proofs unexamined (tests/lit/bugs/shared-loop-*.tile).
bool isProcessStagePair(const BarrierSkeleton &sk, const std::vector<ThreadSet> &processes,
                        const SyncEvent &a, const MemoryAccess &x, const SyncEvent &b,
                        const MemoryAccess &y);

} // namespace tilescope

namespace tilescope {

// The skeleton as the stage proof reads it: a plain memory access (kind
// Access, no register tile) in an inner loop that holds nothing but such accesses, whose stage
// and guards do not read that loop's variable, is moved to the enclosing
// loop, at its place in program order: `for k { wait(full[k % 2]); for i in
// 0 .. 8 { ... = S[k % 2, i, lane] }; arrive(empty[k % 2]) }` reads stage
// `k % 2` once per iteration of k, after the wait and before the arrival,
// which is what the ordering graph and the stage patterns need (they relate
// events of one loop). Every iteration of the inner loop lies between the
// same two events of the enclosing body, so the orderings are the same; an
// inner loop that may run no iteration is taken to run (an access assumed,
// never one dropped). Moved as far out as these conditions allow.
BarrierSkeleton hoistInnerAccesses(const BarrierSkeleton &skeleton);

} // namespace tilescope
