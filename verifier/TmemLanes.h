// The lane window of tcgen05.ld / tcgen05.st, proved for all sizes: warp w of
// a CTA reaches with them only the 32 TMEM lanes of its subpartition,
// 32 (w % 4) .. 32 (w % 4) + 31 (ir/InstructionRules.h, tmemLaneWindowOfWarp;
// the simulator refuses any other lane at run time).
//
// For every event of a call whose instruction family is TmemAccess and every
// tensor-memory region it touches, Z3 looks for sizes satisfying `where`, a
// CTA of the grid, loop values on their loops, a thread executing the call
// (its thread set and guards) and an element of the region whose lane lies
// outside the executing warp's window. The lane of an element comes from the
// buffer's declared layout, which must give it as an affine function of the
// element's indices but the last (the columns): `tmem_m128(n)` puts row r on
// lane r. None: proved. One: a finding (`tcgen05 discipline:`) naming the
// warp, the lane, the window and the sizes. A layout whose lane is not
// affine, a region or guard Z3 cannot express where it matters, or a query Z3
// gives up on: not proved (the kernel is unknown), never proved.
//
// Depends on ir/, sync/ and proof/ (Z3 inside the .cpp).
#pragma once

#include "ir/Stmt.h"
#include "sync/BarrierSkeleton.h"
#include "verifier/BarrierProofs.h"

namespace tilescope {

// Adds the findings (kind Tcgen05Discipline, symbolic), the results and
// what stays open to `report` (the barrier protocols' report: the
// tcgen05 discipline is one of its obligations).
void proveTmemLaneWindows(const Kernel &kernel, const BarrierSkeleton &skeleton, unsigned timeoutMs,
                          BarrierReport &report);

} // namespace tilescope
