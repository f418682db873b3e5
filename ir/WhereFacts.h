// What a kernel's `where` clause says about its shape symbols, in a form the
// type checker can use without a solver: the equalities (`C == 1024`,
// `N == 2 * M`) as a substitution. Applied before shapes are compared, so
// that a `[C]` region and a `[1024]` one agree under `where C == 1024`.
// Used: equalities between a name and an expression; equalities linear in
// one name (`C - 1024 == 0`, `2 * C == 2048`); constant bounds on a name that
// meet (`C >= 1024, C <= 1024`). Conjunctions are split; disjunctions,
// other inequalities and divisibility facts are ignored. Each fact used is
// one the clause states, so this can only make shapes agree where the clause
// forces them equal, never where it does not.
//
// Depends on ir/ only (no Z3: ir must not know the solver).
#pragma once

#include "ir/Expr.h"

#include <map>
#include <string>
#include <vector>

namespace tilescope {

// name -> the expression it equals, over names that are not themselves
// bound (substituting once is enough). A name is bound by the first equality
// that defines it without referring to itself; later ones are ignored.
std::map<std::string, Expr> whereEqualities(const std::vector<Expr> &constraints);

} // namespace tilescope
