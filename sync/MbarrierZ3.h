// The symbolic counterpart of sync/Mbarrier.h, for the barrier proofs
// (verifier/BarrierProofs): the same rules over Z3 integers, so that a wait's
// phase means the same in the simulator, the exhaustive explorer and the
// proofs. tests/unit/sync/MbarrierZ3Test.cpp holds each rule to its concrete
// twin on every small value.
#pragma once

#include <z3++.h>

namespace tilescope {

// A wait reads only the low bit of its parity, and (x mod 2m) mod 2 = x mod 2
// (Z3's mod is Euclidean): remainders by even constants around the parity are
// dropped before it is taken mod 2 (a parity written `% 65536` instead of
// `% 2` otherwise cost Z3 seconds per query).
z3::expr parityOperand(z3::expr parity);

// Whether a wait on `parity` in its `round` waits for the round's own phase:
// the parities agree. Otherwise it waits for the phase before (intendedPhase
// of sync/Mbarrier.h).
z3::expr waitsForOwnRound(const z3::expr &parity, const z3::expr &round);

// The phase a wait means: round when the parities agree, else round - 1.
z3::expr intendedPhase(const z3::expr &parity, const z3::expr &round);

// Whether a wait on `parity` returns with `phase` phases completed.
z3::expr waitSatisfied(const z3::expr &parity, const z3::expr &phase);

} // namespace tilescope
