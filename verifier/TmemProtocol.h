// The lifetime of tensor memory on the synchronisation skeleton: the
// tcgen05.alloc / tcgen05.dealloc / tcgen05.relinquish_alloc_permit protocol
// of PTX, checked structurally (the same for every size):
//  - one warp allocates a buffer (an alloc reached by several warps
//    allocates several times), and the same warp frees it;
//  - every allocation is freed, exactly once, after it was made, in the same
//    loop and under the same size conditions (so every run frees what it
//    allocated before the CTA exits);
//  - a dealloc frees a buffer some alloc allocated;
//  - no alloc after a relinquish_alloc_permit of the CTA (in program order,
//    or in a later iteration of a loop around both).
// What the accesses between alloc and dealloc may do is the race checks'
// business: alloc and dealloc are writes of the whole allocation there
// (BarrierSkeleton.h), so a tcgen05.ld by another warp that no barrier
// orders before the dealloc is a data race.
//
// Depends on ir/ and the skeleton; no Z3.
#pragma once

#include "verifier/BarrierProofs.h"
#include "sync/BarrierSkeleton.h"

#include <vector>

namespace tilescope {

// Findings of kind Tcgen05Discipline (structural).
std::vector<ProtocolFinding> checkTmemLifetime(const BarrierSkeleton &skeleton);

} // namespace tilescope
