// Canonical witnesses (proof/LeastWitness.h): each value in turn is
// lowered to its least with the earlier ones held, whatever model the
// solver found first.
#include "proof/LeastWitness.h"

#include <doctest/doctest.h>

using tilescope::detail::minimizeWitness;

namespace {

int64_t valueOf(const z3::model &m, const z3::expr &e) {
  int64_t v = 0;
  REQUIRE(m.eval(e, true).is_numeral_i64(v));
  return v;
}

} // namespace

TEST_CASE("least witness: values are lowered in the order given") {
  z3::context ctx;
  z3::expr x = ctx.int_const("x"), y = ctx.int_const("y");
  for (bool xFirst : {true, false}) {
    z3::solver s(ctx);
    s.add(x + y == 1000 && x >= 3 && y >= 0);
    // Start from a model far from the least one.
    z3::expr start = ctx.bool_const(xFirst ? "start_x" : "start_y");
    s.add(z3::implies(start, xFirst ? x == 700 : y == 700));
    z3::expr_vector assumptions(ctx);
    assumptions.push_back(start);
    REQUIRE(s.check(assumptions) == z3::sat);
    assumptions.pop_back();
    REQUIRE(s.check(assumptions) == z3::sat);
    z3::model least = minimizeWitness(
        s, assumptions, xFirst ? std::vector{x, y} : std::vector{y, x}, xFirst ? "xy" : "yx");
    CHECK(valueOf(least, xFirst ? x : y) == (xFirst ? 3 : 0));
    CHECK(valueOf(least, xFirst ? y : x) == (xFirst ? 997 : 1000));
  }
}

TEST_CASE("least witness: a value that can only be negative is kept") {
  z3::context ctx;
  z3::expr x = ctx.int_const("x");
  z3::solver s(ctx);
  s.add(x < -5);
  z3::expr_vector assumptions(ctx);
  REQUIRE(s.check(assumptions) == z3::sat);
  int64_t before = valueOf(s.get_model(), x);
  CHECK(valueOf(minimizeWitness(s, assumptions, {x}, "neg"), x) == before);
}
