// Small Z3 questions the lifting (Lift.h) asks about its own reading of a
// kernel: whether a condition holds wherever a loop is entered (a `!=` latch
// gives a trip count only when the bound is ahead of the counter, Values.h).
//
// Expressions are tile-IR expressions over parameters, loop counters (it<L>)
// and blockIdx, read as Values.h reads them: parameters in [0, 2^30], every
// other unknown non-negative, division and remainder on non-negative values.
//
// Depends on ir/Expr.h, sync/BarrierSkeleton.h and Z3 (in the .cpp only).
#pragma once

#include "ir/Expr.h"
#include "sync/BarrierSkeleton.h"

#include <string>
#include <vector>

namespace tilescope::ptx {

enum class Implication { Holds, Fails, Unknown };

// Whether `facts` imply `goal` for every value of their unknowns; `why`
// says what was not encoded or why Z3 gave up, for Unknown.
Implication implies(const std::vector<Expr> &facts, const Expr &goal, std::string &why);

// Whether `need` holds for every thread that may run a block: `runs` holds,
// per thread, the condition under which it does (null or false: it does
// not), `facts` what else is known (the --assume bounds).
bool holdsWhereRun(const std::vector<Expr> &runs, const std::vector<Expr> &facts, const Expr &need,
                   std::string &why);

// A compiler enters a loop do-while style behind a test that skips it
// (`if (n >= 1) do { ... } while (...)`): lifted, that is the loop
// `for it in 0 .. max(1, n)` with the test as a guard of every event in it.
// Where the test is equivalent to n >= 1 (proved under `facts`), the pair is
// the loop `for it in 0 .. n` without the guard: the IR's form (a persistent
// tile loop `for t in blockIdx.x .. tiles step 132`), which the proofs of
// named barriers and phases take. `trips` holds n per skeleton loop.
void foldLoopEntryGuards(BarrierSkeleton &sk, const std::vector<Expr> &trips,
                         const std::vector<Expr> &facts);

// Loops of two roles that a ring turns with are often written differently
// by the compiler: the producer's do-while loop runs `n` times, the
// consumers' loop tested at its header `max(0, n)` times (the overlap
// attention kernels). The pipeline-stage proofs and the race check relate
// the fills and reads of two loops only when their bounds are the same as
// written (verifier/StagePairs.h, isStagePair). Two outermost loops with
// the same begin and step whose ends Z3 proves equal for every value (under
// `facts` and the reading of LiftSolve.h) are given one spelling, the
// first loop's end: the trip counts are then the same for every size, as
// the stage proofs take them. Ends not proved equal stay as they are (the
// pair stays unknown, never proved). Only outermost loops that hold events
// are compared (one small query a pair).
void relateLoopBounds(BarrierSkeleton &sk, const std::vector<Expr> &facts);

} // namespace tilescope::ptx
