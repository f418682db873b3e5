#include "verifier/LeastWitness.h"

#include <fmt/format.h>

#include <cstdint>

namespace tilescope::detail {

namespace {

int64_t valueIn(const z3::model &m, const z3::expr &e) {
  int64_t out = 0;
  return m.eval(e, true).is_numeral_i64(out) ? out : 0;
}

} // namespace

void minimizeWitness(z3::solver &solver, z3::expr_vector &assumptions,
                     const std::vector<z3::expr> &values, const std::string &name) {
  int bounds = 0;
  // A fresh literal that implies e <= v.
  auto bound = [&](const z3::expr &e, int64_t v) {
    z3::expr literal = solver.ctx().bool_const(fmt::format("{}!{}", name, bounds++).c_str());
    solver.add(z3::implies(literal, e <= solver.ctx().int_val(v)));
    return literal;
  };
  for (const z3::expr &e : values) {
    int64_t best = valueIn(solver.get_model(), e), lo = 0;
    while (lo < best) {
      int64_t mid = lo + (best - lo) / 2;
      assumptions.push_back(bound(e, mid));
      if (solver.check(assumptions) == z3::sat) {
        best = valueIn(solver.get_model(), e);
      } else {
        assumptions.pop_back();
        lo = mid + 1;
      }
    }
    // Hold e at its least value while the next ones are lowered, and leave
    // the model there.
    assumptions.push_back(bound(e, best));
    solver.check(assumptions);
  }
}

} // namespace tilescope::detail
