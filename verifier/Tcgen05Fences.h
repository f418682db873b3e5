// The tcgen05 thread-sync fences (PTX ISA, "Memory consistency model for 5th
// generation of TensorCore operations"). The asynchronous tcgen05 operations
// (tcgen05.mma, tcgen05.ld, tcgen05.st) are not ordered with respect to the
// thread synchronisation of their thread (mbarrier waits and arrivals, CTA,
// named and cluster barriers) unless fenced:
//  - after: an asynchronous tcgen05 operation Y is ordered after an earlier
//    acquiring synchronisation S of its thread (an mbarrier wait, cta.sync,
//    barrier.sync, a cluster barrier wait, warp.sync) only through a
//    `tcgen05.fence_after_thread_sync()` between S and Y. Without it, what S
//    made visible (a TMA's bytes, another warp's tcgen05.ld of the
//    accumulator, an MMA's results committed to the barrier S waits on) may
//    not be what Y sees.
//  - before: a tcgen05.ld / tcgen05.st X is ordered before a later releasing
//    synchronisation R of its thread (mbarrier.arrive, arrive_expect_tx,
//    tcgen05.commit, cta.sync, barrier.sync / barrier.arrive, a cluster
//    barrier arrival) only through a `tcgen05.fence_before_thread_sync()`
//    between X and R (after its tcgen05.wait_ld). tcgen05.mma needs none: it
//    is released only by its tcgen05.commit, which tracks its completion and
//    performs the fence implicitly (a barrier after an MMA orders nothing of
//    it in the race check either).
// A synchronisation matters for an operation only when it can order another
// thread's conflicting access to one of the operation's buffers (shared or
// tensor memory, a write on either side): a wait on an mbarrier whose
// arrivals (arrive, expect_tx, tcgen05.commit, a TMA's delivery) come from
// threads that make such an access anywhere in the kernel; an arrival on an
// mbarrier whose waiters make one; any CTA, named or cluster barrier. This
// over-approximates the orderings the race check and the stage proofs take
// from that synchronisation, so a fence they rely on is never missing
// unnoticed; a synchronisation that orders only other buffers (the
// attention kernel's softmax waits on aempty between its tcgen05.ld of S)
// needs no fence.
// A fence F covers S for Y when it runs whenever Y does and after S: F's
// loop chain is a prefix of Y's, F comes before Y in program order, F has no
// guard (condition over sizes or loop variables) Y lacks, F is executed by
// every thread of Y, and S lies neither between F and Y in program order nor
// in a loop of Y's that F is outside of (a later iteration would put it
// after F). The same, mirrored, for a before fence between X and R.
//
// Structural (the same for every size), on the skeleton; findings of kind
// Tcgen05Discipline ("tcgen05 fence:"), at the operation, with the
// synchronisation as a note.
//
// Depends on ir/ and the skeleton; no Z3.
#pragma once

#include "verifier/StructuralChecks.h"

namespace tilescope {

void checkTcgen05Fences(const BarrierSkeleton &skeleton, StructuralResult &out);

} // namespace tilescope
