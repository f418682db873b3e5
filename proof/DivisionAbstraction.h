// Internal to the Z3-based proofs: integer division and remainder by a
// divisor that is not a constant (`t / tn` with tn = (N + 255) / 256) as
// quotient and remainder functions of (x, d), with the facts that define
// them, `x == q * d + r, 0 <= r < |d|` for d != 0, and, for two dividends of
// one divisor, `x == x' <=> q == q' && r == r'`. The terms mean exactly what
// Z3's own div and mod mean (Euclidean, d == 0 left unconstrained, as Z3
// leaves it), so no proof is weakened; equal (x, d) pairs share one pair of
// terms, so two sides of a race query that divide the same value agree
// syntactically. Z3's non-linear engine otherwise spends seconds
// re-deriving these facts for every query. Exposes z3++.h: include it only
// from .cpp files.
#pragma once

#include <z3++.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace tilescope::detail {

// c when `d` is a product c * e of a numeral c > 1 and a non-numeral e.
std::optional<int64_t> constantFactor(const z3::expr &d);

class DivisionAbstraction {
public:
  // With uninterpretedProducts, a product of two non-constants is an
  // uninterpreted function of its factors as well: the result is linear
  // (plus congruence) and over-approximates, so only its unsat is an answer.
  // With congruences, a division by a divisor c * e (c a numeral > 1) also
  // states `x mod c == r mod c` (x - r is a multiple of d, so of c): a
  // tile index t / (8 * tn), t % 8 and t % (8 * tn) / 8 then determine t
  // linearly (the grouped tile order's race proof).
  DivisionAbstraction(z3::context &ctx, bool uninterpretedProducts, bool congruences = false);
  // `e` with every division and remainder by a non-constant replaced.
  z3::expr rewrite(const z3::expr &e);
  // The facts about the quotients and remainders that rewritten terms
  // `terms` use (those of dividends inside them included): to be asserted
  // with them. Only those a query uses, so a solver that sees one query
  // does not wade through the definitions of every earlier one.
  z3::expr_vector definitionsFor(const z3::expr_vector &terms);

private:
  struct Division {
    z3::expr dividend, divisor, q, r;
  };
  z3::expr product(const z3::expr &a, const z3::expr &b);
  // The quotient and remainder of x / d.
  const Division &divide(const z3::expr &x, const z3::expr &d);
  // Adds the divisions `e` uses to `used`.
  void collect(const z3::expr &e, std::set<unsigned> &visited, std::set<size_t> &used);

  z3::context &ctx_;
  bool congruences_;
  std::optional<z3::func_decl> products_;
  // Functions, not fresh constants: two divisions of equal values by equal
  // divisors that are spelled differently get one quotient and remainder by
  // congruence, as Z3's own div and mod would.
  z3::func_decl quotient_, remainder_;
  // By AST id; the input is kept so that its id is not reused.
  std::map<unsigned, std::pair<z3::expr, z3::expr>> done_;
  std::vector<Division> divisions_;
  // By the ids of (x, d), which divisions_ keeps alive.
  std::map<std::pair<unsigned, unsigned>, size_t> byOperands_;
};

} // namespace tilescope::detail
