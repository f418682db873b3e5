// Canonical witnesses (proof/LeastWitness.h): each value in turn is
// lowered to its least with the earlier ones held, whatever model the
// solver found first.
#include "proof/LeastWitness.h"
#include "proof/ProtoEncoding.h"

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

TEST_CASE("least witness: a value past 64 bits is kept, and later values are still lowered") {
  z3::context ctx;
  z3::expr big = ctx.int_const("big"), y = ctx.int_const("y");
  z3::solver s(ctx);
  // big >= 2^64; y in [2, 50] (found at 50 first).
  s.add(big >= ctx.int_val("18446744073709551616") && y >= 2 && y <= 50);
  z3::expr start = ctx.bool_const("start_big");
  s.add(z3::implies(start, y == 50));
  z3::expr_vector assumptions(ctx);
  assumptions.push_back(start);
  REQUIRE(s.check(assumptions) == z3::sat);
  assumptions.pop_back();
  REQUIRE(s.check(assumptions) == z3::sat);
  z3::model least = minimizeWitness(s, assumptions, {big, y}, "big");
  // `big` used to be read as 0 and held at big <= 0, which left y at 50.
  CHECK(valueOf(least, y) == 2);
  CHECK(least.eval(big >= ctx.int_val("18446744073709551616"), true).is_true());
}

TEST_CASE("witness text: Z3's exact numeral, past 64 bits too") {
  using tilescope::detail::ProtoEncoder;
  z3::context ctx;
  z3::expr a = ctx.int_const("a"), b = ctx.int_const("b"), c = ctx.int_const("c");
  z3::solver s(ctx);
  s.add(a == ctx.int_val("1180591620717411303424") && b == -12 && c == 7);
  REQUIRE(s.check() == z3::sat);
  z3::model m = s.get_model();
  CHECK(ProtoEncoder::text(m, a) == "1180591620717411303424"); // 2^70
  CHECK(ProtoEncoder::text(m, a + 1) == "1180591620717411303425");
  CHECK(ProtoEncoder::text(m, b) == "-12");
  CHECK(ProtoEncoder::text(m, c) == "7");
  // value() is for arithmetic on what fits: 0 past 64 bits, never a wrap.
  CHECK(ProtoEncoder::value(m, a) == 0);
  CHECK(ProtoEncoder::value(m, c) == 7);
}
