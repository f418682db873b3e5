// What a kernel's `where` clause says about its shape symbols, in a form the
// type checker can use without a solver:
// * the equalities (`C == 1024`, `N == 2 * M`) as a substitution, so that a
//   `[C]` region and a `[1024]` one agree under `where C == 1024`. Used:
//   equalities between a name and an expression; equalities linear in one
//   name (`C - 1024 == 0`, `2 * C == 2048`); a power of one name equal to a
//   constant (`C * C == 1048576`, `2 * C * C * C == 54`), solved exactly, for a
//   name known to be non-negative (a tensor dimension) when the power is even;
//   constant bounds on a name that meet (`C >= 1024, C <= 1024`);
// * divisibility (`C % 1024 == 0`): C is 1024 times an integer, so that
//   `[C / 1024 * 1024]` and `[C]` agree (WhereFacts::affine).
// Conjunctions are split; disjunctions and other inequalities are ignored.
// Each fact used is one the clause states, so this can only make shapes agree
// where the clause forces them equal, never where it does not.
//
// Depends on ir/ only (no Z3: ir must not know the solver).
#pragma once

#include "ir/Affine.h"
#include "ir/Expr.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace tilescope {

// The conjuncts of `e`: `a && (b && c)` appends a, b and c to `out`; any
// other expression is one conjunct.
void splitConjuncts(const Expr &e, std::vector<Expr> &out);

// name -> the expression it equals, over names that are not themselves
// bound (substituting once is enough). A name is bound by the first equality
// that defines it without referring to itself; later ones are ignored.
// `nonNegative`: names known to be >= 0 (tensor dimensions), for which an
// even power has one root.
std::map<std::string, Expr> whereEqualities(const std::vector<Expr> &constraints,
                                            const std::set<std::string> &nonNegative = {});

struct Kernel;

struct WhereFacts {
  std::map<std::string, Expr> equal;         // whereEqualities
  std::map<std::string, int64_t> multipleOf; // `C % d == 0` (the lcm of every such d)
  bool empty() const { return equal.empty() && multipleOf.empty(); }
  // `e` in normal form under the facts: the equalities substituted, and a
  // name that is a multiple of d read as d * (name / d), so that divisions
  // and remainders by a divisor of what they divide cancel: under
  // `C % 1024 == 0`, `C / 1024 * 1024` is C, `C / 256 * 256` is C and
  // `C % 512` is 0 (while `C / 2048 * 2048` stays what it is).
  Affine affine(const Expr &e) const;
};

// The facts of a kernel's where clause; its tensor dimensions are the
// non-negative names.
WhereFacts whereFacts(const Kernel &kernel);

} // namespace tilescope
