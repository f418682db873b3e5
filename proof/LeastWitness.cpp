#include "proof/LeastWitness.h"

#include "ir/Budget.h"
#include "proof/QueryDeadline.h"
#include "proof/SolverBudget.h"

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <optional>

namespace tilescope::detail {

namespace {

std::optional<int64_t> valueIn(const z3::model &m, const z3::expr &e) {
  int64_t out = 0;
  if (m.eval(e, true).is_numeral_i64(out))
    return out;
  return std::nullopt;
}

} // namespace

z3::model minimizeWitness(z3::solver &solver, z3::expr_vector &assumptions,
                          const std::vector<z3::expr> &values, const std::string &name) {
  int bounds = 0;
  // A fresh literal that implies e <= v.
  auto bound = [&](const z3::expr &e, int64_t v) {
    z3::expr literal = solver.ctx().bool_const(fmt::format("{}!{}", name, bounds++).c_str());
    solver.add(z3::implies(literal, e <= solver.ctx().int_val(v)));
    return literal;
  };
  // Each check is cut to the command's deadlines (checkWithinBudget); once
  // one has passed, the witness is the least found so far.
  Budget *budget = activeBudget();
  auto withinDeadline = [&] { return !budget || budget->remainingMs() < 0 || !budget->expired(); };
  z3::model least = solver.get_model();
  for (const z3::expr &e : values) {
    // A value past 64 bits is left as Z3 found it (bisection works on
    // int64_t); it used to be read as 0 and held at e <= 0, which made every
    // later lowering unsat.
    std::optional<int64_t> found = valueIn(least, e);
    if (!found)
      continue;
    int64_t best = *found, lo = 0;
    while (lo < best && withinDeadline()) {
      int64_t mid = lo + (best - lo) / 2;
      assumptions.push_back(bound(e, mid));
      if (checkWithinBudget(solver, assumptions) == z3::sat) {
        least = solver.get_model();
        best = valueIn(least, e).value_or(best);
      } else {
        assumptions.pop_back();
        lo = mid + 1;
      }
    }
    // Hold e at its least value while the next ones are lowered.
    assumptions.push_back(bound(e, best));
  }
  return least;
}

} // namespace tilescope::detail
