// Internal to the Z3-based proofs (barrier protocols, static races): a
// query's linear over-approximation, asked before the exact non-linear
// query. Divisions and remainders by non-constants become quotient and
// remainder functions and products of non-constants an uninterpreted
// function (DivisionAbstraction), so the result is linear up to congruence
// and admits every model of the exact query: its unsat is a proof that the
// exact query is unsat. Sat or unknown says nothing, and the caller asks the
// exact query, so no proof is weakened. A query with no non-linear term is
// left to the exact query (nothing to gain, and its witness stays as it was).
// Z3's non-linear engine spends milliseconds to seconds on queries about
// `t / tn`, `i % kt` with symbolic divisors; this answers the unsat ones of
// the persistent GEMM in 0.1-3 ms each, in a one-shot solver
// (SolverBudget.h) given only the definitions the query uses. Exposes
// z3++.h: include it only from .cpp files.
#pragma once

#include "proof/DivisionAbstraction.h"

#include <z3++.h>

#include <cstdint>
#include <string>

namespace tilescope::detail {

// The most budget a cheaper question asked before an exact query gets (the
// pre-check here, the barrier proofs' sample sizes): past it the exact query
// decides, so a hard query costs at most this much more than it used to.
inline constexpr unsigned kPrecheckBudgetMs = 500;

// Over-approximations proved unsat are remembered process-wide by the
// alpha-normal form of their SMT-LIB text (alphaNormal): asked again, in this
// candidate or a later one, they are answered without Z3. Only unsat is
// remembered (a proof stays a proof); sat and unknown are asked again.
class LinearPrecheck;

// Z3's SMT-LIB text with the names Z3 generates (let binders `?x12`,
// `$x7`; fresh constants `i!11`) renamed by first occurrence: equal for two
// formulas that differ only in those names, which depend on what the context
// built before.
std::string alphaNormal(const std::string &smt2);

// Pre-checks answered from the memo so far (for tests and benchmarks).
uint64_t linearPrecheckMemoHits();

// Whether `background` and `constraints` are proved unsat by their linear
// over-approximation with the congruences of divisors c * e
// (DivisionAbstraction), asked in a fresh context of its own within
// `budgetMs`. Only for constraints that divide by such a divisor (false at
// once, without Z3, for any other): the grouped tile order's race between
// CTAs (t / (8 * tn), t % 8, t % (8 * tn) / 8), which the shared context's
// queries decided in 1-2 s of CPU or gave up on, depending on the terms the
// context held before (the cliff DivisionAbstraction.cpp describes). In a
// context of its own the answer depends on the query alone, and the shared
// context gets no new term from it, so every later query there meets the
// terms it met before. Unsat is a proof; anything else says nothing.
bool congruencePrecheckUnsat(const z3::expr_vector &background,
                             const z3::expr_vector &constraints, unsigned budgetMs);

class LinearPrecheck {
public:
  // budgetMs: the exact queries' budget (SolverBudget.h); the pre-check
  // takes at most kPrecheckBudgetMs of it.
  LinearPrecheck(z3::context &ctx, unsigned budgetMs);
  // Whether `background` (facts true in every query: the where clause and
  // symbol ranges; it may grow between calls, entries already seen are not
  // added again) together with `constraints` is proved unsat by the
  // over-approximation.
  bool unsat(const z3::expr_vector &background, const z3::expr_vector &constraints) {
    return check(background, constraints, budgetMs_) == z3::unsat;
  }
  // The same question within `budgetMs` (at most the constructor's budget):
  // unsat is a proof; sat says the over-approximation has a model (asked
  // again on any budget, the answer stays sat: Z3's rlimit is deterministic
  // work); unknown says the budget ran out first, or that the query has no
  // non-linear term (not asked: nothing to gain over the exact query).
  z3::check_result check(const z3::expr_vector &background, const z3::expr_vector &constraints,
                         unsigned budgetMs);

private:
  z3::context &ctx_;
  unsigned budgetMs_;
  DivisionAbstraction abstraction_;
  // The background, rewritten, and how many entries of it were seen.
  z3::expr_vector background_;
  unsigned backgroundSeen_ = 0;
};

} // namespace tilescope::detail
