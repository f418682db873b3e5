// The sizes of a static race's witness (RaceChecker.h, witnessSizes): the
// first point of a fixed ladder of small admitted sizes at which the race
// occurs, so that the rest of the witness is lowered over constant sizes.
#include "racecheck/RaceChecker.h"

#include "proof/LeastWitness.h"
#include "proof/LinearPrecheck.h"
#include "proof/QueryDeadline.h"
#include "proof/SolverBudget.h"

#include <fmt/format.h>

namespace tilescope::detail {

std::vector<std::pair<std::string, z3::expr>> RaceChecker::sizeSymbols() const {
  std::vector<std::pair<std::string, z3::expr>> out;
  for (const std::string &name : sk_.symbols)
    if (auto it = enc_.symbols().find(name); it != enc_.symbols().end() && it->second.is_int())
      out.push_back(*it);
  return out;
}

const std::optional<SizeAssignment> &RaceChecker::sizeRung(size_t k) {
  while (rungs_.size() <= k) {
    size_t r = rungs_.size();
    if (r > 0 && !rungs_.back()) { // the ladder ended below
      rungs_.push_back(std::nullopt);
      continue;
    }
    // The least admitted sizes (in the skeleton's order of the symbols)
    // with each at least 2^r times its value on rung 0.
    z3::solver s = incrementalSolver(ctx_);
    z3::params p(ctx_);
    setSolverBudget(p, kPrecheckBudgetMs);
    s.set(p);
    s.add(enc_.assumptions());
    std::vector<z3::expr> order;
    for (const auto &[name, v] : sizeSymbols()) {
      order.push_back(v);
      if (r > 0)
        s.add(v >= ctx_.int_val(std::max<int64_t>(1, rungs_[0]->at(name)) << r));
    }
    if (checkWithinBudget(s) != z3::sat) {
      rungs_.push_back(std::nullopt);
      continue;
    }
    z3::expr_vector lits(ctx_);
    z3::model m = minimizeWitness(s, lits, order, fmt::format("rung!{}", r));
    SizeAssignment at;
    for (const auto &[name, v] : sizeSymbols()) {
      int64_t value = 0;
      if (!m.eval(v, true).is_numeral_i64(value))
        break;
      at[name] = value;
    }
    if (at.size() != order.size() || (r > 0 && at == *rungs_.back()))
      rungs_.push_back(std::nullopt);
    else
      rungs_.push_back(std::move(at));
  }
  return rungs_[k];
}

std::optional<SizeAssignment> RaceChecker::witnessSizes(const z3::expr_vector &query) {
  if (sizeSymbols().empty())
    return std::nullopt;
  // `query` at sizes `at`, size `free` (when given) left to lie in
  // (lo, hi] instead of its value in `at`.
  auto probe = [&](const SizeAssignment &at, const std::string &free = "", int64_t lo = 0,
                   int64_t hi = 0) {
    z3::solver once = oneShotSolver(ctx_, kPrecheckBudgetMs);
    once.add(enc_.assumptions());
    once.add(query);
    for (const auto &[name, v] : sizeSymbols())
      if (name != free)
        once.add(v == ctx_.int_val(at.at(name)));
      else
        once.add(v > ctx_.int_val(lo) && v <= ctx_.int_val(hi));
    return checkWithinBudget(once);
  };
  for (size_t r = 0; r < kSizeRungs; ++r) {
    const std::optional<SizeAssignment> &rung = sizeRung(r);
    if (!rung)
      return std::nullopt;
    z3::check_result found = probe(*rung);
    if (found == z3::unknown) // the ladder's queries are hard here: lowered symbolically
      return std::nullopt;
    if (found == z3::unsat)
      continue;
    // Each size in turn back down to its value on the lowest rung where the
    // race still occurs, the others held (a race that needs one size large
    // keeps the others small), then by bisection between that rung's value
    // and the one below, where the race does not occur at the held sizes.
    SizeAssignment at = *rung;
    if (r == 0) // the least admitted sizes
      return at;
    for (const auto &[name, v] : sizeSymbols()) {
      int64_t below = 0; // a value at which the race does not occur (or none)
      for (size_t k = 0; k < r; ++k) {
        SizeAssignment lower = at;
        lower[name] = sizeRung(k)->at(name);
        if (lower[name] >= at[name])
          continue;
        if (probe(lower) == z3::sat) {
          at = std::move(lower);
          break;
        }
        below = std::max(below, sizeRung(k)->at(name));
      }
      // Some value in (lo, hi] has the race (hi does): halve the interval.
      int64_t lo = below, hi = at[name];
      bool decided = below > 0; // else at[name] is its least admitted value
      while (decided && hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        z3::check_result some = probe(at, name, lo, mid);
        decided = some != z3::unknown;
        (some == z3::sat ? hi : lo) = mid;
      }
      if (decided)
        at[name] = hi;
    }
    return at;
  }
  return std::nullopt;
}

z3::expr RaceChecker::pinnedAt(const SizeAssignment &at) {
  z3::expr_vector pinned(ctx_);
  for (const auto &[symbol, v] : sizeSymbols())
    pinned.push_back(v == ctx_.int_val(at.at(symbol)));
  return z3::mk_and(pinned);
}

std::optional<z3::model> RaceChecker::leastAtSizes(const z3::expr_vector &query,
                                                   const std::vector<z3::expr> &values,
                                                   const std::string &name) {
  auto at = witnessSizes(query);
  if (!at)
    return std::nullopt;
  z3::solver w = incrementalSolver(ctx_);
  z3::params p(ctx_);
  setSolverBudget(p, opt_.timeoutMs);
  w.set(p);
  w.add(enc_.assumptions());
  w.add(query);
  w.add(pinnedAt(*at));
  if (checkWithinBudget(w) != z3::sat)
    return std::nullopt;
  z3::expr_vector lits(ctx_);
  return minimizeWitness(w, lits, values, name);
}

} // namespace tilescope::detail
