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

} // namespace tilescope
