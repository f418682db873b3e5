// Internal to the Z3-based proofs (barrier protocols, static races): a
// counterexample made canonical. After a satisfiable check, each value of
// the witness in turn is lowered to its least (from 0 up, by bisection; a
// negative value is kept) with the earlier ones held at theirs, so the
// witness is the same whatever model Z3 found first. That model depends on
// the solver's history (which queries ran before, in the one Z3 context a
// thread shares), so without this a change elsewhere in the checker changed
// the threads and iterations a finding names. Exposes z3++.h: include it
// only from .cpp files.
#pragma once

#include <z3++.h>

#include <string>
#include <vector>

namespace tilescope::detail {

// `solver` was just found satisfiable under `assumptions`. Lowers `values`
// in order; the bounds chosen are added to the solver behind fresh literals
// named after `name` (unique per call) and appended to `assumptions`.
// Returns the model at the least values found: that of the last check that
// was sat (the solver's own model is lost when a later check gives up). A
// bound Z3 cannot decide counts as unsat: that value is then merely not the
// least.
z3::model minimizeWitness(z3::solver &solver, z3::expr_vector &assumptions,
                          const std::vector<z3::expr> &values, const std::string &name);

} // namespace tilescope::detail
