// The symbolic mbarrier rules (sync/MbarrierZ3.h) against the concrete ones
// (sync/Mbarrier.h) on every parity and round in a small range, parities also
// written with even remainders around them as kernels write them.
#include "sync/MbarrierZ3.h"
#include "sync/Mbarrier.h"

#include <doctest/doctest.h>

using namespace tilescope;

namespace {

int64_t eval(z3::context &c, const z3::expr &e) {
  z3::solver s(c);
  REQUIRE(s.check() == z3::sat);
  return s.get_model().eval(e, true).get_numeral_int64();
}

bool holds(z3::context &c, const z3::expr &e) {
  z3::solver s(c);
  s.add(!e);
  return s.check() == z3::unsat;
}

} // namespace

TEST_CASE("mbarrier z3: the intended phase and wait rule agree with the concrete machine") {
  z3::context c;
  for (int64_t round = -3; round <= 6; ++round)
    for (int64_t parity = -3; parity <= 5; ++parity) {
      z3::expr p = c.int_val(parity), n = c.int_val(round);
      CAPTURE(parity);
      CAPTURE(round);
      CHECK(eval(c, tilescope::intendedPhase(p, n)) == tilescope::intendedPhase(parity, round));
      // Written as a kernel writes it: (parity) % 4 % 2 means the same.
      z3::expr wrapped = z3::mod(z3::mod(p, c.int_val(4)), c.int_val(2));
      CHECK(eval(c, tilescope::intendedPhase(wrapped, n)) ==
            tilescope::intendedPhase(parity, round));
      if (round < 0)
        continue;
      MbarrierPhase m{round, 1, 0};
      CHECK(holds(c, waitSatisfied(p, n)) == m.waitSatisfied(parity));
    }
}

TEST_CASE("mbarrier z3: remainders by even constants around a parity are dropped, odd ones kept") {
  z3::context c;
  z3::expr k = c.int_const("k");
  z3::expr even = z3::mod(k + 1, c.int_val(65536));
  CHECK(z3::eq(parityOperand(even), k + 1));
  z3::expr odd = z3::mod(k + 1, c.int_val(3));
  CHECK(z3::eq(parityOperand(odd), odd));
  // Symbolically: a wait on (k / 3) % 2 in round k / 3 always waits for its
  // own round; one on (k / 3 + 1) % 2 never does.
  z3::expr r = k / c.int_val(3);
  CHECK(holds(c, z3::implies(k >= 0, waitsForOwnRound(z3::mod(r, c.int_val(2)), r))));
  CHECK(holds(c, z3::implies(k >= 0, !waitsForOwnRound(z3::mod(r + 1, c.int_val(2)), r))));
}
