// Internal to every Z3 encoding of IR integer expressions (the barrier and
// race proofs, write coverage, peer accesses, symbolic layouts, lifted PTX):
// the IR's division and remainder as Z3 terms. The IR's `/` and `%` truncate
// toward zero, as C++'s and PTX's `div.s32`/`rem.s32` do (ir/Expr.cpp
// foldIntBinary, the simulator, the CUDA emitter); Z3's `div` and `mod` are
// Euclidean, and the two differ for a negative dividend: `(k - 1) % 4` is -1
// at k = 0, not 3, and `(t - 64) / 32` is 0 at t = 32, not -1. Encoding the
// IR's operators with Z3's proved kernels that read stage -1 or give warp
// -1's work to warp 0 (tests/lit/bugs/euclid-*). One place for every
// encoder, so none drifts. Exposes z3++.h: include it only from .cpp files.
#pragma once

#include <z3++.h>

#include <functional>

namespace tilescope::detail {

// Says whether a term is known non-negative by what it stands for (a shape
// symbol >= 1, a thread index, a loop variable whose loop starts at a
// non-negative value): the caller's encoding makes it so.
using NonNegativeConstant = std::function<bool(const z3::expr &)>;

// Whether `e` is non-negative by its form alone: a numeral >= 0, a Euclidean
// remainder, a term `known` says is, or sums, products, quotients and
// selections of such terms.
bool nonNegativeByForm(const z3::expr &e, const NonNegativeConstant &constant = {});

// l / r and l % r truncating toward zero, for either sign of r, over Z3's
// own quotient q = l div r and remainder m = l mod r: where l < 0 and m != 0,
// q + sign(r) and m - |r|; elsewhere q and m. A query gets no division term
// that Z3's operators would not have given it, only a case split; a
// dividend non-negative by its form gets Z3's operator alone, so a query
// over non-negative index arithmetic is exactly as before. A zero divisor is
// left as unconstrained as Z3 leaves it (the IR rejects it where it is
// evaluated).
z3::expr truncatingDiv(const z3::expr &l, const z3::expr &r,
                       const NonNegativeConstant &constant = {});
z3::expr truncatingRem(const z3::expr &l, const z3::expr &r,
                       const NonNegativeConstant &constant = {});

} // namespace tilescope::detail
