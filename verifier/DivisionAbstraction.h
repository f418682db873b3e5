// Internal to the Z3-based proofs: integer division and remainder by a
// divisor that is not a constant (`t / tn` with tn = (N + 255) / 256) as
// fresh quotient and remainder unknowns tied to their definition once,
// `x == q * d + r, 0 <= r < |d|` for d != 0. The terms mean exactly what
// Z3's own div and mod mean (Euclidean, d == 0 left unconstrained, as Z3
// leaves it), so no proof is weakened; equal (x, d) pairs share one pair of
// unknowns, so two sides of a race query that divide the same value agree
// syntactically. Z3's non-linear engine otherwise spends seconds
// re-deriving these facts for every query. Exposes z3++.h: include it only
// from .cpp files.
#pragma once

#include <z3++.h>

#include <map>
#include <optional>
#include <utility>

namespace tilescope::detail {

class DivisionAbstraction {
public:
  // With uninterpretedProducts, a product of two non-constants is an
  // uninterpreted function of its factors as well: the result is linear
  // (plus congruence) and over-approximates, so only its unsat is an answer.
  DivisionAbstraction(z3::context &ctx, bool uninterpretedProducts);
  // `e` with every division and remainder by a non-constant replaced; the
  // definitions of new unknowns are appended to definitions().
  z3::expr rewrite(const z3::expr &e);
  // The defining facts of the unknowns introduced so far, in order.
  const z3::expr_vector &definitions() const { return definitions_; }

private:
  z3::expr product(const z3::expr &a, const z3::expr &b);

  z3::context &ctx_;
  std::optional<z3::func_decl> products_;
  // Functions, not fresh constants: two divisions of equal values by equal
  // divisors that are spelled differently (`kt`, `1 * kt`) get one quotient
  // and remainder by congruence, as Z3's own div and mod would.
  z3::func_decl quotient_, remainder_;
  z3::expr_vector definitions_;
  // By AST id; the input is kept so that its id is not reused.
  std::map<unsigned, std::pair<z3::expr, z3::expr>> done_;
  // By the ids of (x, d), which definitions_ keeps alive.
  std::map<std::pair<unsigned, unsigned>, std::pair<z3::expr, z3::expr>> quotients_;
};

} // namespace tilescope::detail
