// Expression helpers of the lifting (Lift.h, LiftMemory.h): where an
// instruction's address operand is, addresses split into a shared variable
// plus an offset, ring indices and guards.
//
// Depends on ir/Expr.h and Ptx.h.
#pragma once

#include "ir/Expr.h"
#include "ptx/Ptx.h"

#include <optional>
#include <string>
#include <vector>

namespace tilescope::ptx {

// The operand of an instruction that addresses shared (or generic) memory,
// the one walker over PTX's operand layouts that the lifting asks: the
// barrier of an mbarrier operation (`try_wait p, [bar], parity`, `arrive
// state, [bar]`, `init [bar], n`), the address of ld / st / atom / red,
// ldmatrix / stmatrix, cp.async (its destination), tcgen05.alloc (the slot
// the address is written to) and tcgen05.commit (its mbarrier). Null when
// the instruction has none of these or its operand there is not a memory
// operand.
const Operand *addressOperand(const Instruction &in);

// An address as shared variable + constant + the rest (symbol without the
// '&' of Values.h; empty when there is none; ok false when the address is
// not derived or names two variables).
struct AddressParts {
  std::string symbol;
  int64_t constant = 0;
  Expr rest; // null: none
  bool ok = true;
};
AddressParts splitAddress(const Expr &address);

// The smallest value of `rest` over the iterations of the loops it names
// (it<L> from 0 to 63); nullopt when it reads anything else.
std::optional<int64_t> minOver(const Expr &rest);
// The largest, likewise.
std::optional<int64_t> maxOver(const Expr &rest);
// `e / 8` when e is a sum of multiples of 8 (null is 0); null otherwise.
Expr divide8(const Expr &e);
// The residue of `e` modulo m (a power of two, at most 2^18) that every
// value of its variables gives, in [0, m); nullopt when it depends on them.
// Sums and constant multiples (`k z` needs z modulo m / gcd(k, m)), `x % c`
// with m | c or c | m, `x / c` by a power of two from x modulo m c, and a
// product with one factor a multiple of m; / and % as the reading of
// Values.h has them (floor, on the non-negative values index code uses).
std::optional<int64_t> residueModulo(const Expr &e, int64_t m);
// A guard as a list of conjuncts, negations pushed into comparisons, and
// `it != 0` on a loop counter (never negative) written `it > 0`.
std::vector<Expr> conjuncts(const Expr &g);

} // namespace tilescope::ptx
