#include "reward/ThresholdSizes.h"
#include "reward/ThresholdDecisions.h"
#include "reward/SizeRanges.h"
#include "reward/SizeRelations.h"

#include "ir/ConcreteEval.h"
#include "ir/DeviceScale.h"
#include "ir/ThreadIndex.h"
#include "ir/Visitor.h"
#include "proof/ProtoEncoding.h"
#include "proof/QueryDeadline.h"
#include "proof/SolverBudget.h"
#include "simulator/Engine.h"
#include "sync/BarrierSkeleton.h"
#include "verifier/FallbackSizes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <cstdlib>
#include <functional>
#include <set>

namespace tilescope::reward_detail {
namespace {

// The CTAs a decision is evaluated in at one size: all of a grid of up to
// 4096, else the first and last 8 of each dimension.
std::vector<std::array<int64_t, 3>> ctasOf(const std::array<int64_t, 3> &grid) {
  std::array<std::vector<int64_t>, 3> axis;
  bool all = grid[0] * grid[1] * grid[2] <= 4096;
  for (size_t d = 0; d < 3; ++d)
    for (int64_t v = 0; v < grid[d]; ++v)
      if (all || v < 8 || v >= grid[d] - 8)
        axis[d].push_back(v);
  std::vector<std::array<int64_t, 3>> out;
  for (int64_t x : axis[0])
    for (int64_t y : axis[1])
      for (int64_t z : axis[2])
        out.push_back({x, y, z});
  return out;
}

// Which outcomes of `d` the run at `size` takes (in any of its CTAs).
std::array<bool, 2> outcomesAt(const Decision &d, const BarrierSkeleton &sk, const SimSize &size,
                               std::array<bool, 2> wanted = {true, true},
                               std::array<int64_t, 3> *takenIn = nullptr) {
  std::array<bool, 2> out{false, false};
  // The constant loops' variables (Decision::fixedLoops), at the values of
  // the point being evaluated.
  std::map<std::string, int64_t> fixedAt;
  auto leafIn = [&](const std::array<int64_t, 3> &cta, int64_t tx = 0,
                    std::optional<int64_t> iteration = std::nullopt) -> LeafValue {
    return [&size, &d, &fixedAt, cta, tx, iteration](const Expr &e) -> std::optional<int64_t> {
      if (e->kind == ExprKind::Builtin) {
        BuiltinKind b = as<Builtin>(e).which;
        if (isThreadBuiltin(b))
          return threadBuiltinValue(b, tx);
        if (!isCta(b))
          return std::nullopt;
        return cta[size_t(int(b) - int(BuiltinKind::blockIdx_x))];
      }
      if (iteration && as<Var>(e).name == d.loop->var)
        return iteration;
      if (auto it = fixedAt.find(as<Var>(e).name); it != fixedAt.end())
        return it->second;
      auto it = size.values.find(as<Var>(e).name);
      return it == size.values.end() ? std::nullopt : std::optional<int64_t>(it->second);
    };
  };
  // An outcome that reads no CTA index is the same in every CTA: where it
  // is false in CTA 0, no CTA takes it (and no path needs evaluating).
  for (size_t k = 0; k < 2; ++k)
    if (wanted[k] && !d.outcomeReadsCta && !d.loop && d.fixedLoops.empty() && !d.readsThread &&
        evalConcrete(d.outcome[k], leafIn({0, 0, 0})).value_or(0) == 0)
      wanted[k] = false;
  if (!wanted[0] && !wanted[1])
    return out;
  std::vector<std::array<int64_t, 3>> ctas{{0, 0, 0}};
  if (d.readsCta) {
    auto grid = gridExtent(sk, size.values);
    if (!grid)
      return out;
    // A sampled size counts only the CTAs every evaluation runs (the grid's
    // corners, sim::fixedSampleCtas); the others are drawn per evaluation.
    ctas = size.sampleCtas <= 0   ? ctasOf(*grid)
           : !size.ctas.empty()   ? size.ctas
                                  : sim::fixedSampleCtas(*grid, size.sampleCtas);
  }
  // A thread's global index: every thread of each CTA (the simulation runs
  // them all), or a spread of them where that passes 2^16 evaluations (an
  // outcome missed there only asks for one more size).
  std::vector<int64_t> threads{0};
  if (d.readsThread) {
    int64_t n = std::max<int64_t>(sk.threads, 1);
    int64_t step = int64_t(std::ceil(double(ctas.size()) * double(n) / 65536.0));
    threads.clear();
    for (int64_t t = 0; t < n; t += std::max<int64_t>(step, 1))
      threads.push_back(t);
    if (threads.back() != n - 1)
      threads.push_back(n - 1);
  }
  // A loop variable's iterations in each CTA: every one, or a spread where
  // they pass 2^16 evaluations in all.
  auto iterationsIn = [&](const std::array<int64_t, 3> &cta) {
    std::vector<std::optional<int64_t>> out{std::nullopt};
    if (!d.loop)
      return out;
    out.clear();
    LeafValue leaf = leafIn(cta);
    std::optional<int64_t> b = evalConcrete(d.loop->begin, leaf);
    std::optional<int64_t> e = evalConcrete(d.loop->end, leaf);
    if (!b || !e || *e <= *b)
      return out;
    int64_t count = (*e - *b - 1) / d.loop->step + 1;
    // In double: a loop over a product of sizes may run 2^60 iterations.
    int64_t stride = std::max<int64_t>(
        1, int64_t(std::ceil(double(ctas.size()) * double(count) / 65536.0)));
    for (int64_t i = 0; i < count; i += stride)
      out.push_back(*b + i * d.loop->step);
    if (*out.back() != *b + (count - 1) * d.loop->step)
      out.push_back(*b + (count - 1) * d.loop->step);
    return out;
  };
  // The constant loops' values: every combination, or a spread (first and
  // last kept) where CTAs, threads and combinations pass 2^18 evaluations.
  std::vector<std::map<std::string, int64_t>> combos{{}};
  for (const Decision::Loop &l : d.fixedLoops) {
    int64_t b = evalConcrete(l.begin, leafIn({0, 0, 0})).value_or(0);
    int64_t e = evalConcrete(l.end, leafIn({0, 0, 0})).value_or(0);
    std::vector<std::map<std::string, int64_t>> next;
    for (const auto &c : combos)
      for (int64_t v = b; v < e; v += std::max<int64_t>(l.step, 1)) {
        next.push_back(c);
        next.back()[l.var] = v;
      }
    combos = std::move(next);
  }
  const double points = double(ctas.size()) * double(threads.size()) * double(combos.size());
  if (points > 262144.0 && combos.size() > 2) {
    size_t stride = size_t(std::ceil(points / 262144.0));
    std::vector<std::map<std::string, int64_t>> thin;
    for (size_t i = 0; i < combos.size(); i += stride)
      thin.push_back(combos[i]);
    if (thin.back() != combos.back())
      thin.push_back(combos.back());
    combos = std::move(thin);
  }
  for (const auto &cta : ctas) {
    fixedAt.clear();
    if (d.path && evalConcrete(d.path, leafIn(cta)).value_or(0) == 0)
      continue;
    for (std::optional<int64_t> iteration : iterationsIn(cta))
    for (const auto &combo : combos)
    for (int64_t tx : threads) {
      fixedAt = combo;
      LeafValue leaf = leafIn(cta, tx, iteration);
      for (size_t k = 0; k < 2; ++k)
        out[k] = out[k] || (wanted[k] && evalConcrete(d.outcome[k], leaf).value_or(0) != 0);
      if (out[0] == wanted[0] && out[1] == wanted[1]) {
        if (takenIn)
          *takenIn = cta;
        return out;
      }
    }
  }
  return out;
}

// `d` taking outcome k in some CTA of the grid, over the encoder's symbols;
// nothing where Z3 cannot express it.
std::optional<z3::expr> takes(detail::ProtoEncoder &enc, const BarrierSkeleton &sk,
                              const Decision &d, size_t k) {
  z3::context &ctx = enc.ctx();
  z3::expr all = ctx.bool_val(true);
  std::map<BuiltinKind, z3::expr> ctas;
  for (size_t dim = 0; dim < 3; ++dim) {
    z3::expr b = ctx.int_const(fmt::format("cta{}", dim).c_str());
    std::optional<z3::expr> extent =
        dim < sk.grid.size() ? enc.encode(sk.grid[dim], {}) : ctx.int_val(1);
    if (!extent || !extent->is_int())
      return std::nullopt;
    all = all && b >= 0 && b < *extent;
    ctas.emplace(BuiltinKind(int(BuiltinKind::blockIdx_x) + int(dim)), b);
  }
  if (d.readsThread) { // some thread of the CTA
    z3::expr t = ctx.int_const("thread");
    all = all && t >= 0 && t < ctx.int_val(std::max<int64_t>(sk.threads, 1));
    for (BuiltinKind b : kThreadBuiltins)
      ctas.emplace(b, detail::threadBuiltinZ3(b, t));
  }
  std::map<std::string, z3::expr> bound;
  if (d.loop) { // some iteration begin + i * step < end
    auto begin = enc.encode(d.loop->begin, {}, ctas), end = enc.encode(d.loop->end, {}, ctas);
    if (!begin || !end || !begin->is_int() || !end->is_int())
      return std::nullopt;
    z3::expr i = ctx.int_const("iteration");
    z3::expr v = *begin + ctx.int_val(d.loop->step) * i;
    all = all && i >= 0 && v < *end;
    bound.emplace(d.loop->var, v);
  }
  for (const Decision::Loop &l : d.fixedLoops) { // some value of each constant loop
    auto begin = enc.encode(l.begin, {}, ctas), end = enc.encode(l.end, {}, ctas);
    if (!begin || !end || !begin->is_int() || !end->is_int())
      return std::nullopt;
    z3::expr i = ctx.int_const(("value " + l.var).c_str());
    z3::expr v = *begin + ctx.int_val(l.step) * i;
    all = all && i >= 0 && v < *end;
    bound.emplace(l.var, v);
  }
  for (const Expr &e : {d.outcome[k], d.path}) {
    if (!e)
      continue;
    auto v = enc.encode(e, bound, ctas);
    if (!v || !v->is_bool())
      return std::nullopt;
    all = all && *v;
  }
  return all;
}

// Solver work for the question whether an outcome is reachable at all: most
// are ruled out at once by the where clause (`(K + 63) / 64` is never 0
// where K > 0).
constexpr unsigned kReachBudgetMs = 2000;

// The admitted size with the least sum of symbols (each at most
// kMaxThresholdSymbol) at which `d` takes outcome k; nothing with `why`
// (empty `why`: the where clause rules the outcome out). A plain check
// first, with a budget of solver work; the optimizer, in a context of its
// own (checkWithinBudget), only for outcomes it finds reachable.
std::optional<SizeAssignment> solveFor(const Decision &d, size_t k, const BarrierSkeleton &sk,
                                       const LeastValues &least, std::string &why) {
  if (falseByRanges(d.outcome[k], least)) {
    why.clear();
    return std::nullopt;
  }
  {
    requireSolverContext();
    z3::context ctx;
    detail::ProtoEncoder enc(ctx, sk);
    auto query = takes(enc, sk, d, k);
    if (!query) {
      why = "the decision or the grid is beyond the solver";
      return std::nullopt;
    }
    z3::solver solver = oneShotSolver(ctx, kReachBudgetMs);
    enc.assumeWhere(solver);
    solver.add(*query);
    z3::check_result r = checkWithinBudget(solver);
    if (r == z3::unsat) {
      why.clear();
      return std::nullopt;
    }
    if (r == z3::unknown) {
      why = fmt::format("Z3 gave up ({})", reasonUnknown(solver));
      return std::nullopt;
    }
  }
  requireSolverContext();
  z3::context ctx;
  detail::ProtoEncoder enc(ctx, sk);
  z3::optimize opt(ctx);
  enc.assumeWhere(opt);
  opt.add(*takes(enc, sk, d, k));
  for (const std::string &s : sk.symbols)
    opt.add(enc.symbols().at(s) <= ctx.int_val(kMaxThresholdSymbol));
  opt.minimize(enc.symbolSum(sk.symbols));
  z3::check_result r = checkWithinBudget(opt);
  if (r != z3::sat) {
    why = r == z3::unsat
              ? fmt::format("it needs a size above {}", kMaxThresholdSymbol)
              : fmt::format("Z3 gave up ({})", Z3_optimize_get_reason_unknown(ctx, opt));
    return std::nullopt;
  }
  return enc.symbolValues(opt.get_model(), sk.symbols);
}

// Past the threshold: one symbol `d` reads (those of the grid for
// blockIdx) doubled, the one that costs fewest tensor elements among those
// where the outcome still holds, else all of them together, else none. A
// kernel that stops working at the threshold then leaves half its work
// undone, not one step of it (`for k in 0 .. min(K, 4096)` at K = 4097 drops
// one product of 4097, within the tolerance); one symbol, not all, keeps it
// cheap (`M * N <= 1048576` false: M doubled, not M and N).
SimSize farSide(const Kernel &kernel, const Decision &d, size_t k, const BarrierSkeleton &sk,
                const SizeRelations &rel, const SimSize &size) {
  std::set<std::string> read = namesUsed(d.outcome[k]);
  if (d.path)
    read.merge(namesUsed(d.path));
  // A constant-loop decision (a key window, `kv0 + col < q0 + row + 2048`)
  // that reads a size itself doubles that size (the keys), not the grid's
  // others (B of attention: the same window again).
  bool own = false;
  for (const std::string &s : read)
    own |= !d.fixedLoops.empty() && std::count(sk.symbols.begin(), sk.symbols.end(), s) > 0;
  if (d.readsCta && !own)
    for (const Expr &g : sk.grid)
      read.merge(namesUsed(g));
  std::vector<std::string> symbols = rel.freeBehind(read);
  auto doubled = [&](const std::vector<std::string> &which) -> std::optional<SimSize> {
    SimSize far = size;
    for (const std::string &s : which) {
      auto it = far.values.find(s);
      if (it == far.values.end() || it->second > kMaxThresholdSymbol)
        return std::nullopt;
      it->second *= 2;
    }
    if (rel.admits(far.values) && outcomesAt(d, sk, far)[k])
      return far;
    return std::nullopt;
  };
  std::optional<SimSize> best;
  for (const std::string &s : symbols)
    if (auto far = doubled({s}))
      if (!best ||
          tensorElements(kernel, far->values) < tensorElements(kernel, best->values))
        best = far;
  if (!best)
    best = doubled(symbols);
  return best.value_or(size);
}

// For a tile count reaching 2 (a decision asked on one side only), the
// size Z3 would find, found without it where one symbol does it: every free
// symbol at its least value, one the decision reads raised to the least
// admitted value that takes the outcome (the fewest tensor elements among
// the symbols). It cost 10-12 ms of Z3 a reward for gemm_bf16_sm90's `(N +
// 255) / 256`; the least values give its K = 8, M = 1, N = 264 as well.
std::optional<SizeAssignment> raisedFromLeast(const Kernel &kernel, const Decision &d, size_t k,
                                              const BarrierSkeleton &sk, const SizeRelations &rel,
                                              const LeastValues &least,
                                              const std::vector<std::string> &symbols) {
  SizeAssignment base;
  for (const std::string &s : symbols) {
    auto it = least.find(s);
    base[s] = it != least.end() ? it->second : leastValueOf(s);
  }
  if (!rel.admits(base))
    return std::nullopt;
  std::set<std::string> read = namesUsed(d.outcome[k]);
  if (d.path)
    read.merge(namesUsed(d.path));
  std::optional<SizeAssignment> best;
  for (const std::string &s : rel.freeBehind(read)) {
    auto takes = [&](int64_t c) -> std::optional<SizeAssignment> {
      SizeAssignment trial = base;
      trial[s] = c;
      if (!rel.admits(trial, s) || !outcomesAt(d, sk, {trial, 0, "threshold", {}})[k])
        return std::nullopt;
      return trial;
    };
    int64_t v = base[s], hi = 0;
    for (int shift = 1; shift <= 20 && !hi; ++shift)
      if (takes(v << shift))
        hi = v << shift;
    if (!hi)
      continue;
    std::optional<SizeAssignment> trial;
    for (int64_t c = std::max(v + 1, hi / 2); c <= hi && !trial; ++c)
      trial = takes(c);
    if (trial && (!best || tensorElements(kernel, *trial) < tensorElements(kernel, *best)))
      best = trial;
  }
  return best;
}

} // namespace

ThresholdPlan thresholdSizes(const Kernel &kernel, const std::vector<SimSize> &sampled,
                             const std::function<std::string(llvm::SMLoc)> &where,
                             const std::set<std::string> &signedScalars) {
  ThresholdPlan plan;
  std::vector<std::string> symbolList = shapeSymbols(kernel);
  if (symbolList.empty() || sampled.empty())
    return plan;
  BarrierSkeleton sk = extractBarrierSkeleton(kernel);
  SizeRelations rel(kernel, sk, symbolList);
  std::set<std::string> floatScalars;
  for (const Param &p : kernel.params)
    if (!p.isTensor && isFloat(p.dtype))
      floatScalars.insert(p.name);
  KernelDecisions collect =
      collectDecisions(kernel, {symbolList.begin(), symbolList.end()}, floatScalars, signedScalars);

  LeastValues least = leastValues(kernel);
  std::vector<SimSize> sizes = sampled;
  for (const Decision &d : collect.decisions) {
    std::array<bool, 2> seen{!d.needed[0], !d.needed[1]};
    for (const SimSize &s : sizes) {
      if (seen[0] && seen[1])
        break;
      auto got = outcomesAt(d, sk, s, {!seen[0], !seen[1]});
      seen = {seen[0] || got[0], seen[1] || got[1]};
    }
    for (size_t k = 0; k < 2; ++k) {
      if (seen[k])
        continue;
      std::string at = where(d.loc);
      std::string why;
      std::optional<SizeAssignment> found;
      if (!d.needed[0])
        found = raisedFromLeast(kernel, d, k, sk, rel, least, symbolList);
      try {
        if (!found)
          found = solveFor(d, k, sk, least, why);
      } catch (const z3::exception &e) {
        why = fmt::format("Z3 failed: {}", e.msg());
      }
      if (!found && why.empty())
        continue; // the where clause rules this outcome out
      SimSize size{{}, 0, "threshold", {}};
      if (found) {
        for (const std::string &s : symbolList)
          if (auto it = found->find(s); it != found->end())
            size.values[s] = it->second;
        if (!rel.admits(size.values))
          why = fmt::format("the solver's sizes ({}) are not admitted", describe(size.values));
        else if (!outcomesAt(d, sk, size)[k])
          why = fmt::format("the solver's sizes ({}) do not give it", describe(size.values));
        else if (plan.sizes.size() >= kMaxThresholdSizes)
          why = fmt::format("it needs more than {} threshold sizes", kMaxThresholdSizes);
        else
          why.clear();
        if (why.empty() && d.farSide)
          size = farSide(kernel, d, k, sk, rel, size);
        // A second tile along a dimension (a tile count reaching 2): the
        // CTAs with tiles run, not the 130 idle ones of a persistent grid,
        // which the small and edge sizes run (about half the size's time
        // for gemm_bf16_sm90's N = 264).
        if (why.empty() && !d.needed[0]) {
          size.ctas = ctasWithTiles(kernel, sk, size.values);
          size.sampleCtas = int64_t(size.ctas.size());
        }
        std::array<int64_t, 3> cta{0, 0, 0};
        if (why.empty() && d.sampled &&
            outcomesAt(d, sk, size, {k == 0, k == 1}, &cta)[k]) {
          size.ctas = {{0, 0, 0}};
          if (cta != std::array<int64_t, 3>{0, 0, 0})
            size.ctas.push_back(cta);
          size.sampleCtas = int64_t(size.ctas.size());
        }
      }
      if (!why.empty()) {
        plan.unreached.push_back(fmt::format("{} at {}: {}", d.name[k], at, why));
        continue;
      }
      plan.reasons.push_back(fmt::format("{} at {}", d.name[k], at));
      plan.floats.emplace_back();
      seen[k] = true;
      sizes.push_back(size);
      plan.sizes.push_back(std::move(size));
    }
  }
  // Float scalars against literals: both sides pinned, at the small size.
  // The pins run at the edge size (the second) where there is one: its rows
  // are widened, some small enough for an eps of 1e-6 to show, some of
  // about 1 for an eps of 0.1 (`eps-floor` passed at the small size, R = 1).
  const SimSize &pinAt = sampled.size() > 1 ? sampled[1] : sampled.front();
  for (const FloatDecision &f : collect.floatDecisions) {
    double crossing = f.literal;
    if (f.power != 0) { // the crossing at the small size, where the pins run
      const SizeAssignment &small = pinAt.values;
      std::optional<int64_t> factor = evalConcrete(f.factor, [&](const Expr &e) {
        auto it = e->kind == ExprKind::Var ? small.find(as<Var>(e).name) : small.end();
        return it == small.end() ? std::nullopt : std::optional<int64_t>(it->second);
      });
      if (!factor || *factor <= 0) {
        plan.unreached.push_back(fmt::format("`{}` at {}: its size factor has no positive value "
                                             "at the small size",
                                             f.text, where(f.loc)));
        continue;
      }
      crossing = f.power > 0 ? crossing / double(*factor) : crossing * double(*factor);
    }
    for (double v : {crossing / 2, crossing * 2}) {
      std::string what = fmt::format("`{}` with {} = {:g} at {}", f.text, f.scalar, v, where(f.loc));
      if (plan.sizes.size() >= kMaxThresholdSizes) {
        plan.unreached.push_back(
            fmt::format("{}: it needs more than {} threshold sizes", what, kMaxThresholdSizes));
        continue;
      }
      plan.sizes.push_back({pinAt.values, 0, "threshold", {}});
      plan.reasons.push_back(what);
      plan.floats.push_back({{f.scalar, v}});
    }
  }
  return plan;
}

} // namespace tilescope::reward_detail
