// Where the barrier proofs leave obligations open, the exhaustive check of
// the concrete run (BarrierExplorer.h) at sizes from FallbackSizes.h, merged
// into the proofs' report: its findings (exit 1, witnesses naming the sizes),
// or the open obligations marked "checked exhaustively at ..." (still not
// proved for all sizes), or why it could not run ("not checked: ...").
//
// When the run reads blockIdx, every CTA of the grid (every cluster) is
// unrolled and the runs are sorted into classes of identical runs (the same
// steps on the same elements with the same parities, amounts and stage
// accesses); one run per class is explored. CTAs share no mbarrier or
// shared memory, so the reduction is exact, and the method line names it
// ("all 132 CTAs (2 distinct runs: CTAs 0 and 2 explored; ...)").
//
// Runs only on skeletons extraction modelled completely: what extraction
// could not model would be missing from the concrete run too.
//
// Depends on verifier/.
#pragma once

#include "verifier/BarrierProofs.h"
#include "sync/BarrierSkeleton.h"

namespace tilescope {

void runExhaustiveFallback(const BarrierSkeleton &skeleton, const BarrierProofOptions &options,
                           BarrierReport &report);

// A testing aid (docs/barriers.md): with the environment variable
// TILESCOPE_FORCE_FALLBACK=1 the exhaustive check runs on every kernel, and
// the findings the symbolic proofs made with Z3 are left out, so that what
// the check reports is its own (tests/lit/barriers/forced-fallback.test).
// Structural findings stay. Read once.
bool exhaustiveFallbackForced();

} // namespace tilescope
