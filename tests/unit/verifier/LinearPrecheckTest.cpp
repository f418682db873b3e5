// The linear over-approximation the barrier proofs and the static race check
// ask before their exact non-linear queries (proof/LinearPrecheck.h): its
// unsat must be the exact query's, so it proves what the definitions of
// quotients and remainders give, says nothing about satisfiable queries, and
// leaves queries without non-linear terms to the exact solver.
#include "proof/LinearPrecheck.h"

#include <doctest/doctest.h>

using tilescope::detail::LinearPrecheck;

namespace {

struct Symbols {
  z3::context ctx;
  z3::expr x = ctx.int_const("x"), y = ctx.int_const("y"), d = ctx.int_const("d");
  z3::expr_vector background{ctx};
  Symbols() { background.push_back(d >= 1); }
  bool unsat(const z3::expr &query) {
    LinearPrecheck linear(ctx, 1000);
    z3::expr_vector constraints(ctx);
    constraints.push_back(query);
    return linear.unsat(background, constraints);
  }
};

} // namespace

TEST_CASE("a quotient and remainder by a symbol recompose the dividend") {
  Symbols s;
  CHECK(s.unsat(s.x / s.d * s.d + s.x % s.d != s.x));
  CHECK(s.unsat(s.x % s.d >= s.d));
}

TEST_CASE("divisors spelled differently divide alike") {
  Symbols s;
  z3::expr one = s.ctx.int_val(1);
  CHECK(s.unsat(s.x / (one * s.d) != s.x / s.d));
  // The flattened loop of a persistent kernel: t = i / kt, k = i % kt, and
  // the ring counter t * kt + k is the flattened iteration again.
  CHECK(s.unsat(s.x / s.d * (one * s.d) + s.x % s.d != s.x));
}

TEST_CASE("equal quotients and remainders by one divisor mean equal dividends") {
  Symbols s;
  CHECK(s.unsat(s.x / s.d == s.y / s.d && s.x % s.d == s.y % s.d && s.x != s.y));
}

TEST_CASE("a satisfiable query is never reported unsat") {
  Symbols s;
  CHECK_FALSE(s.unsat(s.x / s.d == 2 && s.d == 3 && s.x == 7));
  CHECK_FALSE(s.unsat(s.x * s.y == 6 && s.x == 2));
  // Only the exact query can answer this one (x * y is uninterpreted here).
  CHECK_FALSE(s.unsat(s.x * s.y == 7 && s.x == 2));
}

TEST_CASE("a linear query is left to the exact solver") {
  Symbols s;
  CHECK_FALSE(s.unsat(s.x > 0 && s.x < 0));
  CHECK_FALSE(s.unsat(s.x / 4 > s.x));
}

TEST_CASE("the alpha-normal text ignores the names Z3 generates and nothing else") {
  using tilescope::detail::alphaNormal;
  // Fresh constants and let binders, numbered differently, in a consistent way.
  CHECK(alphaNormal("(declare-fun i!11 () Int)\n(assert (let ((?x5 (+ i!11 1))) (> ?x5 0)))") ==
        alphaNormal("(declare-fun i!15 () Int)\n(assert (let ((?x9 (+ i!15 1))) (> ?x9 0)))"));
  // Not a bijection: two constants in one, the same constant twice in the other.
  CHECK(alphaNormal("(assert (< i!1 i!2))") != alphaNormal("(assert (< i!1 i!1))"));
  // Other names, numbers and operators are kept.
  CHECK(alphaNormal("(assert (> x 0))") != alphaNormal("(assert (> y 0))"));
  CHECK(alphaNormal("(assert (> i!1 0))") != alphaNormal("(assert (> i!1 1))"));
  CHECK(alphaNormal("(assert (> i!1 0))") != alphaNormal("(assert (>= i!1 0))"));
  CHECK(alphaNormal("(declare-fun quot! (Int Int) Int)") == "(declare-fun quot! (Int Int) Int)");
}

TEST_CASE("an over-approximation proved unsat is answered again from the memo, in a new "
          "context with other fresh names") {
  auto ask = [](int skipFresh) {
    z3::context ctx;
    for (int k = 0; k < skipFresh; ++k) // moves the fresh-name counter on
      (void)z3::expr(ctx, Z3_mk_fresh_const(ctx, "i", ctx.int_sort()));
    z3::expr i = z3::expr(ctx, Z3_mk_fresh_const(ctx, "i", ctx.int_sort()));
    z3::expr d = ctx.int_const("d");
    z3::expr_vector background(ctx);
    background.push_back(d >= 3);
    z3::expr_vector constraints(ctx);
    constraints.push_back(i % d >= d);
    LinearPrecheck linear(ctx, 1000);
    return linear.unsat(background, constraints);
  };
  CHECK(ask(0));
  uint64_t before = tilescope::detail::linearPrecheckMemoHits();
  CHECK(ask(7));
  CHECK(tilescope::detail::linearPrecheckMemoHits() == before + 1);
}
