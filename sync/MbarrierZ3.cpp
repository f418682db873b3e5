#include "sync/MbarrierZ3.h"

namespace tilescope {

z3::expr parityOperand(z3::expr p) {
  int64_t m = 0;
  while (p.is_app() && p.decl().decl_kind() == Z3_OP_MOD && p.arg(1).is_numeral_i64(m) && m > 0 &&
         m % 2 == 0)
    p = p.arg(0); // a move that leaks the `% m` term (z3++'s ast move): kept, since sync sits below
                  // proof/ (docs/architecture.md) and cannot hand it to proof/SharedContext.h's keeper
  return p;
}

z3::expr waitsForOwnRound(const z3::expr &parity, const z3::expr &round) {
  z3::expr two = parity.ctx().int_val(2);
  return z3::mod(parityOperand(parity), two) == z3::mod(round, two);
}

z3::expr intendedPhase(const z3::expr &parity, const z3::expr &round) {
  return z3::ite(waitsForOwnRound(parity, round), round, round - 1);
}

z3::expr waitSatisfied(const z3::expr &parity, const z3::expr &phase) {
  z3::expr two = parity.ctx().int_val(2);
  return z3::mod(parityOperand(parity), two) != z3::mod(phase, two);
}

} // namespace tilescope
