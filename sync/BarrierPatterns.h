// How a barrier index (or a pipeline stage) moves with the iteration of its
// loop, derived once for the barrier proofs (verifier/BarrierProofs) and the
// static race check (racecheck/StaticRaces), which count an event's rounds on
// its element from it: round n of an event whose index is (i + c) % S is its
// iteration i = (j - c) mod S + n * S on element j; a constant index is
// touched at every iteration, round n at iteration n.
//
// structuralPattern decides the shapes kernels write without a solver: a
// constant index, and `(k + c) % S` over a top-level loop from 0 in steps of
// 1 (S the array's size). Where it answers nothing, the one derivation of
// proof/IndexPatterns.h asks Z3 (the proofs' question: (i + c) % S or a
// constant over the loop's trip; the race check's: the period per thread,
// any pattern that repeats after S distinct iterations).
//
// Depends on ir/ and the barrier skeleton only.
#pragma once

#include "sync/BarrierSkeleton.h"

#include <cstdint>
#include <optional>

namespace tilescope {

// (i + c) % period, or the constant c. A shifted release (the proofs'
// matchShiftedRelease) acts at iteration i for the earlier iteration
// i - shift: element (i - shift + c) % period, its rounds those of iteration
// i - shift.
struct IndexPattern {
  bool ok = false;
  bool constant = false;
  int64_t c = 0;
  int64_t period = 1;
  int64_t shift = 0;
};

// The pattern of `index` of event `ev` over an array of `size` elements, when
// its shape alone decides it (see above); nothing otherwise.
std::optional<IndexPattern> structuralPattern(const BarrierSkeleton &sk, const SyncEvent &ev,
                                              const Expr &index, int64_t size);

} // namespace tilescope
