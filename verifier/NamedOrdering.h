// Pairs of accesses that a named barrier outside the model may order.
//
// The generation model of named barriers (NamedBarriers.h) holds ids whose
// uses sit in one loop body (or all outside loops) under no size or loop
// condition. The uses of any other id (one in different loops, under such a
// condition, an id that is not a constant, id 0 next to cta.sync, arrivals
// not shown not to overtake) order nothing in the proofs, yet they may
// order accesses on the hardware: the FA3-style ping-pong of two warpgroups
// through named barriers inside their loops is correct, and the proofs,
// blind to those barriers, found its accesses unordered. Such a pair is not
// a finding but not proved (unknown).
//
// Depends on verifier/ (the skeleton, the named-barrier model); no Z3.
#pragma once

#include "sync/BarrierSkeleton.h"
#include "verifier/NamedBarriers.h"

namespace tilescope {

// A barrier.sync of an id outside `model` that threads of one of `a`, `b`
// execute, while the other executes a use of the same id (or of an id that
// is not a constant); nothing when there is none.
const SyncEvent *unmodelledNamedOrdering(const BarrierSkeleton &sk, const NamedBarrierModel &model,
                                         const ThreadSet &a, const ThreadSet &b);

} // namespace tilescope
