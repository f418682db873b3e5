#include "proof/LinearPrecheck.h"

#include "proof/ProofContext.h"
#include "proof/QueryDeadline.h"
#include "proof/SharedContext.h"
#include "proof/SolverBudget.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace tilescope::detail {

namespace {

// Over-approximations proved unsat before, by their SMT-LIB text
// (declarations with their sorts and every assertion): a formula that was
// unsat is unsat wherever it is asked again, so a hit is a proof found
// earlier, not a guess. Only unsat is kept: sat and unknown are asked again.
// Process-wide, so that the candidates of an agent's search (mostly the same
// protocol) share what was proved; bounded by a byte budget and cleared when
// full.
class UnsatMemo {
public:
  bool contains(const std::string &formula) {
    std::lock_guard<std::mutex> lock(mutex_);
    return formulas_.count(formula) != 0;
  }
  void insert(std::string formula) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (bytes_ + formula.size() > kMaxBytes) {
      formulas_.clear();
      bytes_ = 0;
    }
    bytes_ += formula.size();
    formulas_.insert(std::move(formula));
  }

private:
  static constexpr size_t kMaxBytes = size_t{64} << 20;
  std::mutex mutex_;
  std::unordered_set<std::string> formulas_;
  size_t bytes_ = 0;
};

bool isDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Whether a symbol of Z3's SMT-LIB text is a name Z3 made up: a let binder
// (`?x12`, `$x7`: numbered by node id) or a fresh constant (`i!11`: numbered
// by a per-context counter). Interpreted symbols never look like either.
bool isGeneratedName(std::string_view token) {
  if (token.size() > 2 && (token[0] == '?' || token[0] == '$') && token[1] == 'x')
    return isDigits(token.substr(2));
  size_t bang = token.rfind('!');
  return bang != std::string_view::npos && bang > 0 && isDigits(token.substr(bang + 1));
}

} // namespace

// `smt2` with every generated name replaced by one numbered by its first
// occurrence ("\x01" + index, a character no symbol holds): a bijective
// renaming, so two formulas with the same normal text are the same formula up
// to the names of their constants and let binders (whose sorts the
// declarations in the text still give), and equally satisfiable. The numbers
// Z3 picks depend on what the context built before; the normal text does not.
std::string alphaNormal(const std::string &smt2) {
  std::string out;
  out.reserve(smt2.size());
  std::unordered_map<std::string_view, size_t> renamed;
  auto isDelimiter = [](char c) {
    return c == '(' || c == ')' || c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '|' ||
           c == '"' || c == ';';
  };
  size_t i = 0;
  while (i < smt2.size()) {
    char c = smt2[i];
    if (c == '|' || c == '"') { // a quoted symbol or a string: copied whole
      size_t end = smt2.find(c, i + 1);
      end = end == std::string::npos ? smt2.size() : end + 1;
      out.append(smt2, i, end - i);
      i = end;
      continue;
    }
    if (c == ';') { // a comment, to the end of its line
      size_t end = smt2.find('\n', i);
      end = end == std::string::npos ? smt2.size() : end;
      out.append(smt2, i, end - i);
      i = end;
      continue;
    }
    if (isDelimiter(c)) {
      out += c;
      ++i;
      continue;
    }
    size_t end = i;
    while (end < smt2.size() && !isDelimiter(smt2[end]))
      ++end;
    std::string_view token(smt2.data() + i, end - i);
    if (isGeneratedName(token)) {
      auto [it, fresh] = renamed.emplace(token, renamed.size());
      out += '\x01';
      out += std::to_string(it->second);
    } else {
      out.append(token);
    }
    i = end;
  }
  return out;
}

namespace {

std::atomic<uint64_t> memoHits{0};

UnsatMemo &unsatMemo() {
  static UnsatMemo memo;
  return memo;
}

} // namespace

uint64_t linearPrecheckMemoHits() {
  return memoHits.load();
}

namespace {

// Whether `e` divides by a non-numeral c * e' (DivisionAbstraction's
// congruences). Reads the terms only: the context gets no new one.
bool dividesByMultiple(const z3::expr &e, std::unordered_set<unsigned> &seen) {
  if (!e.is_app() || !seen.insert(e.id()).second)
    return false;
  Z3_decl_kind kind = e.decl().decl_kind();
  if ((kind == Z3_OP_IDIV || kind == Z3_OP_MOD) && constantFactor(e.arg(1)))
    return true;
  for (unsigned k = 0; k < e.num_args(); ++k)
    if (dividesByMultiple(e.arg(k), seen))
      return true;
  return false;
}

// The over-approximation with congruences of `background` and
// `constraints` as SMT-LIB text, built in `scratch`.
std::string congruenceFormula(z3::context &scratch, const z3::expr_vector &background,
                              const z3::expr_vector &constraints) {
  DivisionAbstraction abstraction(scratch, /*uninterpretedProducts=*/true, /*congruences=*/true);
  z3::expr_vector used(scratch);
  for (const z3::expr_vector *v : {&background, &constraints})
    for (unsigned k = 0; k < v->size(); ++k)
      used.push_back(abstraction.rewrite(
          z3::expr(scratch, Z3_translate(v->ctx(), (*v)[int(k)], scratch))));
  z3::solver s(scratch, z3::solver::simple());
  s.add(used);
  s.add(abstraction.definitionsFor(used));
  return s.to_smt2();
}

// Whether `e` multiplies two non-numerals.
bool nonLinear(const z3::expr &e, std::unordered_set<unsigned> &seen) {
  if (!e.is_app() || !seen.insert(e.id()).second)
    return false;
  if (e.decl().decl_kind() == Z3_OP_MUL) {
    unsigned factors = 0;
    for (unsigned k = 0; k < e.num_args(); ++k)
      factors += e.arg(k).is_numeral() ? 0 : 1;
    if (factors > 1)
      return true;
  }
  for (unsigned k = 0; k < e.num_args(); ++k)
    if (nonLinear(e.arg(k), seen))
      return true;
  return false;
}

// The conjuncts of `constraints` (top-level conjunctions split) that
// multiply no two non-numerals: a tile loop's trip count `tn * mt` bounds
// the iterations, which a map from tiles to regions that is one-to-one for
// every tile index does not need, and Z3 branched on it for seconds (the
// grouped 128 x 192 GEMM's race between CTAs: 4,000,000 units of rlimit
// without an answer with it, 19,000 without). Dropping constraints admits
// more models: unsat without them is unsat with them.
z3::expr_vector linearConjuncts(const z3::expr_vector &constraints) {
  z3::expr_vector out(constraints.ctx());
  std::vector<z3::expr> todo;
  for (unsigned k = constraints.size(); k-- > 0;)
    todo.push_back(constraints[int(k)]);
  while (!todo.empty()) {
    z3::expr e = todo.back();
    todo.pop_back();
    if (e.is_app() && e.decl().decl_kind() == Z3_OP_AND) {
      for (unsigned k = e.num_args(); k-- > 0;)
        todo.push_back(e.arg(k));
      continue;
    }
    std::unordered_set<unsigned> seen;
    if (!nonLinear(e, seen))
      out.push_back(e);
  }
  return out;
}

z3::check_result congruenceCheck(const z3::expr_vector &background,
                                 const z3::expr_vector &constraints, unsigned budgetMs);

// The budget of a first look at the linear form (below): 40,000 rlimit
// units. The pairs of the library GEMMs that the linear form decides take
// 4,000-28,500 units (measured 2026-11-27, again 2026-11-28: 4,233-28,460);
// the one it does not decide (the block-scaled grouped GEMM's race between
// CTAs, whose whole form is unsat in 96,383) ran the whole first look, 113
// ms of CPU at 100,000 units. Past the first look nothing is lost: the
// whole form, then the linear form on the whole budget, are asked next.
constexpr unsigned kFirstLookMs = 20;

} // namespace

bool congruencePrecheckUnsat(const z3::expr_vector &background,
                             const z3::expr_vector &constraints, unsigned budgetMs) {
  std::unordered_set<unsigned> seen;
  bool divides = false;
  for (unsigned k = 0; k < constraints.size() && !divides; ++k)
    divides = dividesByMultiple(constraints[int(k)], seen);
  if (!divides)
    return false;
  // Built in a context of its own (whose terms, those the abstraction keeps
  // until the context ends among them, go with it), then read back from its
  // text into another, in which Z3 numbers the terms in the order the text
  // gives them: built and solved in one context, the same formula (the
  // grouped block-scaled GEMM's race between CTAs) ran out of 200,000 units
  // of rlimit, read back from its text it took 14,000-28,000 whatever the
  // order of its assertions.
  // First without the conjuncts that multiply unknowns, then with them
  // (Z3's search over the same formula takes 10,000 to 1,400,000 units of
  // rlimit depending on the order of its terms; the two forms fail on
  // different kernels of the library).
  // The linear form first on a short budget, then the whole form, then the
  // linear form again on the whole budget where the first look ran out of
  // it. What is proved is what the two forms on the whole budget prove
  // (the budget is Z3's rlimit, SolverBudget.h: a query decided within a
  // smaller one is decided alike within a larger one, and a sat stays sat);
  // only the order changed, so a linear form that runs on without an answer
  // (the block-scaled grouped GEMM's race between CTAs: 0.4 s of CPU before
  // it gave up, where the whole form is unsat in 0.12 s) costs a first look.
  z3::expr_vector linear = linearConjuncts(constraints);
  unsigned whole = std::min(budgetMs, kPrecheckBudgetMs);
  z3::check_result first = congruenceCheck(background, linear, std::min(whole, kFirstLookMs));
  if (first == z3::unsat)
    return true;
  if (congruenceCheck(background, constraints, whole) == z3::unsat)
    return true;
  return first == z3::unknown && whole > kFirstLookMs &&
         congruenceCheck(background, linear, whole) == z3::unsat;
}

namespace {

z3::check_result congruenceCheck(const z3::expr_vector &background,
                                 const z3::expr_vector &constraints, unsigned budgetMs) {
  std::string formula;
  {
    ProofContextScope scope;
    formula = congruenceFormula(sharedContext(), background, constraints);
  }
  ProofContextScope scope;
  z3::context &ctx = sharedContext();
  z3::solver s = oneShotSolver(ctx, budgetMs);
  s.add(ctx.parse_string(formula.c_str()));
  return checkWithinBudget(s);
}

} // namespace

LinearPrecheck::LinearPrecheck(z3::context &ctx, unsigned budgetMs)
    : ctx_(ctx), budgetMs_(std::min(budgetMs, kPrecheckBudgetMs)),
      abstraction_(ctx, /*uninterpretedProducts=*/true), background_(ctx) {}

z3::check_result LinearPrecheck::check(const z3::expr_vector &background,
                                       const z3::expr_vector &constraints, unsigned budgetMs) {
  for (; backgroundSeen_ < background.size(); ++backgroundSeen_)
    background_.push_back(abstraction_.rewrite(background[int(backgroundSeen_)]));
  z3::expr_vector rewritten(ctx_);
  bool abstracted = false;
  for (unsigned k = 0; k < constraints.size(); ++k) {
    rewritten.push_back(abstraction_.rewrite(constraints[int(k)]));
    abstracted |= !z3::eq(rewritten.back(), constraints[int(k)]);
  }
  if (!abstracted)
    return z3::unknown;
  z3::solver s = oneShotSolver(ctx_, std::min(budgetMs, budgetMs_));
  s.add(background_);
  z3::expr_vector used(ctx_);
  for (unsigned k = 0; k < background_.size(); ++k)
    used.push_back(background_[int(k)]);
  for (unsigned k = 0; k < rewritten.size(); ++k)
    used.push_back(rewritten[int(k)]);
  s.add(abstraction_.definitionsFor(used));
  s.add(rewritten);
  std::string formula = alphaNormal(s.to_smt2());
  if (unsatMemo().contains(formula)) {
    ++memoHits;
    return z3::unsat;
  }
  z3::check_result r = checkWithinBudget(s);
  if (r == z3::unsat)
    unsatMemo().insert(std::move(formula));
  return r;
}

} // namespace tilescope::detail
