#include "verifier/GlobalBounds.h"

#include "ir/ConcreteEval.h"
#include "ir/Printer.h"
#include "ir/Target.h"
#include "ir/ThreadIndex.h"
#include "ir/Visitor.h"
#include "proof/LeastWitness.h"
#include "proof/ProtoEncoding.h"
#include "proof/QueryDeadline.h"
#include "proof/SolverBudget.h"
#include "verifier/BoundsIntervals.h"
#include "verifier/CoverageSolver.h"
#include "verifier/CoverageDigits.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string_view>

namespace tilescope {
namespace {

using detail::ProtoEncoder;

const BuiltinKind kBlock[] = {BuiltinKind::blockIdx_x, BuiltinKind::blockIdx_y,
                              BuiltinKind::blockIdx_z};
const BuiltinKind kRank[] = {BuiltinKind::clusterCtaIdx_x, BuiltinKind::clusterCtaIdx_y,
                             BuiltinKind::clusterCtaIdx_z};
const BuiltinKind kThreadBuiltins[] = {BuiltinKind::laneid,    BuiltinKind::warpid,
                                       BuiltinKind::wgid,      BuiltinKind::tid_in_wg,
                                       BuiltinKind::wid_in_wg, BuiltinKind::threadIdx_x};

// Whether the hardware clips this access at the tensor's edge: a TMA box
// (its global side).
bool clipped(const SyncEvent &e, const MemoryAccess &a, TargetKind target) {
  if (a.scope != MemScope::Global)
    return false;
  bool tma = e.call == IntrinsicId::CopyAsync || e.call == IntrinsicId::TmaLoad ||
             e.call == IntrinsicId::TmaStore;
  return tma && targetInfo(target).hasTma;
}

// One executor of an access, as Z3 unknowns, and the values Z3 chose.
struct Executor {
  std::array<z3::expr, 3> cta;
  z3::expr thread;
  std::vector<std::pair<std::string, z3::expr>> loops; // outermost first
  std::map<std::string, z3::expr> bound;
  std::map<BuiltinKind, z3::expr> builtins;
};

// The concrete values of a witness: sizes, CTA, thread, loop variables.
struct Point {
  std::map<std::string, int64_t> sizes, loops;
  std::vector<std::string> loopOrder; // outermost first
  std::array<int64_t, 3> cta{0, 0, 0};
  int64_t thread = 0;
};

class Bounds {
public:
  Bounds(detail::CoverageSolver &z3s, const BarrierSkeleton &sk,
         const std::set<std::string> &floats, CoverageReport &report)
      : sk_(sk), floats_(floats), report_(report), ctx_(z3s.ctx), enc_(z3s.enc),
        solver_(z3s.solver) {}

  void run() {
    std::map<std::string, bool> tensors; // name -> every access proved
    for (const SyncEvent &e : sk_.events)
      for (const MemoryAccess &a : e.accesses) {
        bool ok = true;
        try {
          ok = boundsByIntervals(sk_, e, a, clipped(e, a, sk_.target)) || proveAccess(e, a);
        } catch (const z3::exception &x) {
          undecided(e, a, fmt::format("Z3 failed: {}", x.msg()));
          ok = false;
        }
        auto [it, fresh] = tensors.emplace(a.buffer, ok);
        if (!fresh)
          it->second = it->second && ok;
      }
    for (const auto &[name, ok] : tensors)
      if (ok)
        report_.results.push_back(fmt::format("{}: proved for all sizes: every access is inside {}",
                                              name, kindOf(name)));
  }

private:
  // "the tensor" (global), "the shared buffer", "the register tile", "the
  // tensor-memory buffer".
  std::string kindOf(const std::string &buffer) const {
    auto it = sk_.buffers.find(buffer);
    MemScope scope = it == sk_.buffers.end() ? MemScope::Global : it->second.scope;
    switch (scope) {
    case MemScope::Shared:
      return "the shared buffer";
    case MemScope::Reg:
      return "the register tile";
    case MemScope::Tmem:
      return "the tensor-memory buffer";
    default:
      return "the tensor";
    }
  }


  void undecided(const SyncEvent &e, const MemoryAccess &a, const std::string &why) {
    report_.notProved.push_back(
        {e.loc, fmt::format("bounds of {}'s access to {}: {}", e.what, a.buffer, why)});
    report_.results.push_back(fmt::format("{}: bounds not proved: {}", a.buffer, why));
  }

  // A tile loop over a product of sizes (`for t in blockIdx.x .. tn * tm
  // step 132`, a persistent GEMM) whose accesses read `t / D` and `t % D`
  // for a D made of factors of the loop's end (`tn`, or `8 * tn` in a
  // grouped order): `t < tn * tm` is a product of unknowns that Z3 decides
  // slowly or not at all (seconds for the persistent GEMM). The relaxed
  // query reads t as q * D + r with 0 <= r < D, `t / D` as q, `t % D` as r,
  // `t % c` as `r % c` for a constant c dividing D's constant factor, and
  // keeps of `t < end` the consequence q * (D / common) < end / common, the
  // common factors (all >= 1, proved first) cancelled; the loop's start
  // (non-negative) and step are dropped. More executors than run, so its
  // proof holds; its witness stands only where it is a real iteration
  // (confirm), else the exact query decides.
  //
  // A variable first divided by a constant c (`let t = blockIdx.x / SPLIT`,
  // then `t / tn`, `t % tn`: split K) is split over D = c * D': `(v / c) /
  // D'` reads as q and `(v / c) % D'` as r / c (v, r >= 0), and a cluster
  // rank `v % e` as r % e where e divides D's constant. Without it the bounds
  // query of such an access is nonlinear (v < tm * tn * c), and Z3 4.8.12
  // decided it in under 1 to 11 s of CPU depending on the terms other proofs had
  // made in the context, in a loop of its nonlinear arithmetic that neither
  // the deadline's interrupt nor the rlimit stops (docs/robustness.md).
  //
  // TILESCOPE_BOUNDS_INNER_SPLIT=0 turns that split off: a test hook
  // (tests/lit/budget/hard-deadline.test), so that a test can still reach
  // that loop and show the hard deadline of proof/QueryDeadline.h bound it.
  static bool innerSplitOff() {
    static const bool off = [] {
      const char *text = std::getenv("TILESCOPE_BOUNDS_INNER_SPLIT");
      return text && std::string_view(text) == "0";
    }();
    return off;
  }

  struct Split {
    std::string var;
    Expr divisor;             // D
    int64_t inner = 1;        // c: the access reads (var / c) / outer
    Expr outer;               // D' (D itself when c is 1)
    int64_t divisorConst = 1; // D's constant factor
    Expr below, bound;        // q * below < bound
    std::vector<Expr> common; // the cancelled factors, each proved >= 1
  };

  bool sizesOnly(const Expr &e) const {
    struct Finder : IRVisitor {
      const BarrierSkeleton *sk;
      bool other = false;
      void visitVar(const Var &v) override {
        other =
            other || std::find(sk->symbols.begin(), sk->symbols.end(), v.name) == sk->symbols.end();
      }
      void visitBuiltin(const Builtin &) override { other = true; }
    } f;
    f.sk = &sk_;
    f.visit(e);
    return !f.other;
  }

  // A start that is never negative: non-negative constants and CTA indices.
  static bool nonNegativeStart(const Expr &e) {
    if (auto c = constantValue(e))
      return *c >= 0;
    if (e->kind == ExprKind::Builtin)
      return as<Builtin>(e).which == BuiltinKind::blockIdx_x ||
             as<Builtin>(e).which == BuiltinKind::blockIdx_y ||
             as<Builtin>(e).which == BuiltinKind::blockIdx_z;
    if (e->kind == ExprKind::Binary && as<Binary>(e).op == BinaryOp::Add)
      return nonNegativeStart(as<Binary>(e).lhs) && nonNegativeStart(as<Binary>(e).rhs);
    return false;
  }

  // Whether `e` is the variable `var`: a loop variable, or a CTA index
  // (`blockIdx.x`, split over a grid extent that is a product of sizes).
  static bool isVar(const Expr &e, const std::string &var) {
    if (e->kind == ExprKind::Var)
      return as<Var>(e).name == var;
    if (e->kind == ExprKind::Builtin)
      return builtinName(as<Builtin>(e).which) == var;
    return false;
  }

  std::optional<Split> splitOf(const SkeletonLoop &loop, const SyncEvent &e,
                               const MemoryAccess &a) const {
    if (!nonNegativeStart(loop.begin))
      return std::nullopt;
    return splitOf(loop.var, loop.end, e, a);
  }

  std::optional<Split> splitOf(const std::string &var, const Expr &end, const SyncEvent &e,
                               const MemoryAccess &a) const {
    if (!sizesOnly(end))
      return std::nullopt;
    // The divisors the access divides the loop variable by (c, D'):
    // `var / D'` (c = 1) or `(var / c) / D'`.
    std::vector<std::pair<int64_t, Expr>> divisors;
    auto collect = [&](const Expr &x) {
      struct Finder : IRVisitor {
        const std::string *var;
        std::vector<std::pair<int64_t, Expr>> *out;
        void visitBinary(const Binary &b) override {
          if ((b.op == BinaryOp::Div || b.op == BinaryOp::Mod) && !constantValue(b.rhs)) {
            if (isVar(b.lhs, *var))
              out->push_back({1, b.rhs});
            else if (auto c = innerDivisor(b.lhs, *var); c && !innerSplitOff())
              out->push_back({*c, b.rhs});
          }
          IRVisitor::visitBinary(b);
        }
      } f;
      f.var = &var;
      f.out = &divisors;
      f.visit(x);
    };
    for (const RegionDim &r : a.region) {
      collect(r.begin);
      collect(r.extent);
    }
    for (const Expr &g : e.allGuards())
      collect(g);
    for (const auto &[inner, outer] : divisors) {
      if (!sizesOnly(outer))
        continue;
      Expr d = inner == 1 ? outer : Binary::make(BinaryOp::Mul, IntImm::make(inner), outer);
      std::vector<Expr> df, ef;
      coverage::factorsOf(d, df);
      coverage::factorsOf(end, ef);
      Split sp{var, d, inner, outer, 1, nullptr, nullptr, {}};
      int64_t endConst = 1;
      std::vector<Expr> dRest, eRest;
      for (const Expr &f : df)
        if (auto c = constantValue(f))
          sp.divisorConst *= *c;
        else
          dRest.push_back(f);
      for (const Expr &f : ef)
        if (auto c = constantValue(f))
          endConst *= *c;
        else
          eRest.push_back(f);
      bool cancelled = true;
      for (const Expr &f : dRest) {
        auto it = std::find_if(eRest.begin(), eRest.end(),
                               [&](const Expr &g) { return print(g) == print(f); });
        if (it == eRest.end()) {
          cancelled = false;
          break;
        }
        sp.common.push_back(f);
        eRest.erase(it);
      }
      if (!cancelled || sp.divisorConst < 1 || endConst < 1)
        continue;
      sp.below = IntImm::make(sp.divisorConst);
      sp.bound = coverage::productOf(eRest);
      if (endConst != 1)
        sp.bound = Binary::make(BinaryOp::Mul, IntImm::make(endConst), sp.bound);
      return sp;
    }
    return std::nullopt;
  }

  // c when `e` is `var / c` for a constant c >= 1.
  static std::optional<int64_t> innerDivisor(const Expr &e, const std::string &var) {
    if (e->kind != ExprKind::Binary || as<Binary>(e).op != BinaryOp::Div ||
        !isVar(as<Binary>(e).lhs, var))
      return std::nullopt;
    auto c = constantValue(as<Binary>(e).rhs);
    return c && *c >= 1 ? c : std::nullopt;
  }

  // `t / D`, `t % D` and `t % c` (c | D's constant) as q, r and r % c;
  // `(t / c) / D'` and `(t / c) % D'` as q and r / c.
  static Expr splitExpr(const Expr &e, const std::vector<Split> &splits) {
    struct Rewrite : IRMutator {
      const std::vector<Split> *splits;
      Expr mutateBinary(const Binary &b, const Expr &self) override {
        if (b.op == BinaryOp::Div || b.op == BinaryOp::Mod)
          for (const Split &sp : *splits) {
            if (sp.inner > 1 && innerDivisor(b.lhs, sp.var) == sp.inner &&
                print(b.rhs) == print(sp.outer))
              return b.op == BinaryOp::Div ? Var::make(sp.var + "!q")
                                           : Binary::make(BinaryOp::Div, Var::make(sp.var + "!r"),
                                                          IntImm::make(sp.inner));
            if (!isVar(b.lhs, sp.var))
              continue;
            if (print(b.rhs) == print(sp.divisor))
              return Var::make(sp.var + (b.op == BinaryOp::Div ? "!q" : "!r"));
            auto c = constantValue(b.rhs);
            if (b.op == BinaryOp::Mod && c && *c >= 1 && sp.divisorConst % *c == 0)
              return Binary::make(BinaryOp::Mod, Var::make(sp.var + "!r"), b.rhs);
          }
        return IRMutator::mutateBinary(b, self);
      }
    } r;
    r.splits = &splits;
    return r.mutate(e);
  }

  // Whether every cancelled factor is >= 1 for all admitted sizes.
  bool factorsPositive(const Split &sp) {
    std::string key;
    for (const Expr &f : sp.common)
      key += print(f) + ";";
    if (auto it = positive_.find(key); it != positive_.end())
      return it->second;
    detail::SolverScope scope(solver_);
    z3::solver &s = solver_;
    z3::expr_vector low(ctx_);
    for (const Expr &f : sp.common) {
      auto v = enc_.encode(f, {});
      if (!v || !v->is_int())
        return false;
      low.push_back(*v < 1);
    }
    if (low.empty())
      return true;
    s.add(z3::mk_or(low));
    return positive_[key] = checkWithinBudget(s) == z3::unsat;
  }

  enum class Answer { Proved, Witness, Undecided };

  // True when proved.
  bool proveAccess(const SyncEvent &e, const MemoryAccess &a) {
    auto buf = sk_.buffers.find(a.buffer);
    if (buf == sk_.buffers.end() || buf->second.shape.size() != a.region.size()) {
      undecided(e, a, "its region does not match the tensor's shape");
      return false;
    }
    bool split = false;
    for (int l : sk_.loopChain(e))
      split = split || splitOf(sk_.loops[size_t(l)], e, a).has_value();
    for (size_t d = 0; d < sk_.grid.size() && d < 3; ++d)
      split = split || splitOf(std::string(builtinName(kBlock[d])), sk_.grid[d], e, a).has_value();
    Point at;
    std::string why;
    if (split) {
      Answer r = query(e, a, true, at, why);
      if (r == Answer::Proved)
        return true;
      if (r == Answer::Witness && realIteration(e, at))
        return !confirm(e, a, at);
    }
    Answer r = query(e, a, false, at, why);
    if (r == Answer::Proved)
      return true;
    if (r == Answer::Undecided) {
      undecided(e, a, why);
      return false;
    }
    return !confirm(e, a, at);
  }

  Answer query(const SyncEvent &e, const MemoryAccess &a, bool relaxed, Point &at,
               std::string &why) {
    const std::vector<Expr> &shape = sk_.buffers.at(a.buffer).shape;
    if (relaxed) {
      // factorsPositive's own queries first, outside this query's scope.
      for (int l : sk_.loopChain(e))
        if (auto sp = splitOf(sk_.loops[size_t(l)], e, a))
          factorsPositive(*sp);
      for (size_t d = 0; d < sk_.grid.size() && d < 3; ++d)
        if (auto sp = splitOf(std::string(builtinName(kBlock[d])), sk_.grid[d], e, a))
          factorsPositive(*sp);
    }
    detail::SolverScope scope(solver_);
    z3::solver &s = solver_;
    Executor x{{enc_.fresh("bx"), enc_.fresh("by"), enc_.fresh("bz")}, enc_.fresh("t"), {}, {}, {}};
    auto member = detail::threadSetZ3(e.threads, x.thread);
    if (!member)
      return Answer::Proved; // no thread executes it
    s.add(*member);
    for (BuiltinKind b : kThreadBuiltins)
      x.builtins.emplace(b, detail::threadIndexZ3(*threadIndexMap(b), x.thread));
    std::vector<Split> splits;
    // q * D + r for a split loop variable or CTA index (Split).
    auto splitValue = [&](const Split &sp) -> std::optional<z3::expr> {
      auto D = enc_.encode(sp.divisor, {}), below = enc_.encode(sp.below, {}),
           bound = enc_.encode(sp.bound, {});
      if (!D || !below || !bound || !D->is_int() || !below->is_int() || !bound->is_int())
        return std::nullopt;
      z3::expr q = enc_.fresh(sp.var + "!q"), r = enc_.fresh(sp.var + "!r");
      s.add(q >= 0 && q * *below < *bound && r >= 0 && r < *D);
      splits.push_back(sp);
      x.bound.insert_or_assign(sp.var + "!q", q);
      x.bound.insert_or_assign(sp.var + "!r", r);
      return q * *D + r;
    };
    for (int d = 0; d < 3; ++d) {
      z3::expr extent = ctx_.int_val(1);
      if (size_t(d) < sk_.grid.size()) {
        if (relaxed)
          if (auto sp = splitOf(std::string(builtinName(kBlock[d])), sk_.grid[size_t(d)], e, a);
              sp && factorsPositive(*sp))
            if (auto v = splitValue(*sp)) {
              x.cta[size_t(d)] = *v;
              x.builtins.emplace(kBlock[d], *v);
              continue;
            }
        auto g = enc_.encode(sk_.grid[size_t(d)], {});
        if (!g || !g->is_int()) {
          why = "the grid is not an integer expression of the sizes";
          return Answer::Undecided;
        }
        extent = *g;
      }
      s.add(x.cta[size_t(d)] >= 0 && x.cta[size_t(d)] < extent);
      x.builtins.emplace(kBlock[d], x.cta[size_t(d)]);
    }
    if (!sk_.cluster.empty()) {
      auto cshape = clusterShapeOf(sk_);
      if (!cshape) {
        why = "the cluster's shape is not modelled";
        return Answer::Undecided;
      }
      // The rank of a split CTA index: r % e where e divides D's constant.
      z3::expr index = x.cta[size_t(cshape->axis)];
      for (const Split &sp : splits)
        if (sp.var == builtinName(kBlock[cshape->axis]) && sp.divisorConst % cshape->extent == 0)
          index = x.bound.at(sp.var + "!r");
      for (int d = 0; d < 3; ++d)
        x.builtins.emplace(kRank[d], d == cshape->axis
                                         ? z3::mod(index, ctx_.int_val(cshape->extent))
                                         : ctx_.int_val(0));
    }
    auto rewrite = [&](const Expr &ex) { return splits.empty() ? ex : splitExpr(ex, splits); };
    for (int l : sk_.loopChain(e)) {
      const SkeletonLoop &loop = sk_.loops[size_t(l)];
      if (relaxed)
        if (auto sp = splitOf(loop, e, a); sp && factorsPositive(*sp)) {
          auto v = splitValue(*sp);
          if (!v) {
            why = fmt::format("the range of loop {} is not modelled", loop.var);
            return Answer::Undecided;
          }
          x.loops.push_back({loop.var, *v});
          x.bound.insert_or_assign(loop.var, *v);
          continue;
        }
      auto begin = enc_.encode(rewrite(loop.begin), x.bound, x.builtins),
           end = enc_.encode(rewrite(loop.end), x.bound, x.builtins),
           step = enc_.encode(rewrite(loop.step), x.bound, x.builtins);
      if (!begin || !end || !step || !begin->is_int() || !end->is_int() || !step->is_int()) {
        why = fmt::format("the range of loop {} is not modelled", loop.var);
        return Answer::Undecided;
      }
      z3::expr v = enc_.fresh(loop.var);
      s.add(*step >= 1 && v >= *begin && v < *end && z3::mod(v - *begin, *step) == 0);
      x.loops.push_back({loop.var, v});
      x.bound.insert_or_assign(loop.var, v);
    }
    // A guard Z3 cannot express is left out: more executors than run, so a
    // proof still holds; a violation found then is confirmed concretely.
    for (const Expr &g : e.allGuards())
      if (auto c = enc_.encode(rewrite(g), x.bound, x.builtins); c && c->is_bool())
        s.add(*c);
    bool clip = clipped(e, a, sk_.target);
    z3::expr_vector broken(ctx_);
    for (size_t d = 0; d < a.region.size(); ++d) {
      auto lo = enc_.encode(rewrite(a.region[d].begin), x.bound, x.builtins),
           n = enc_.encode(rewrite(a.region[d].extent), x.bound, x.builtins),
           extent = enc_.encode(shape[d], {});
      if (!lo || !n || !extent || !lo->is_int() || !n->is_int() || !extent->is_int()) {
        why = fmt::format("dimension {} of its region is not modelled", d);
        return Answer::Undecided;
      }
      broken.push_back(*lo < 0 || *lo >= *extent || *n < 1 ||
                       (clip ? ctx_.bool_val(false) : *lo + *n > *extent));
    }
    s.add(z3::mk_or(broken));
    z3::check_result r = checkWithinBudget(s);
    if (r == z3::unsat)
      return Answer::Proved;
    if (r == z3::unknown) {
      why = fmt::format("Z3 gave up ({})", reasonUnknown(s));
      return Answer::Undecided;
    }
    // The least witness: sizes first, then the CTA, the loops, the thread.
    std::vector<z3::expr> order;
    for (const std::string &sym : sk_.symbols)
      if (auto it = enc_.symbols().find(sym); it != enc_.symbols().end() && !floats_.count(sym))
        order.push_back(it->second);
    for (const z3::expr &c : x.cta)
      order.push_back(c);
    for (const auto &[name, v] : x.loops)
      order.push_back(v);
    order.push_back(x.thread);
    z3::expr_vector lits(ctx_);
    z3::model m = detail::minimizeWitness(s, lits, order, fmt::format("bounds!{}", witnesses_++));
    for (const z3::expr &v : order) {
      int64_t fits = 0;
      if (!m.eval(v, true).is_numeral_i64(fits)) {
        why = fmt::format("Z3's witness needs {} = {}, past 64 bits", v.to_string(),
                          ProtoEncoder::text(m, v));
        return Answer::Undecided;
      }
    }
    at = Point{};
    for (const std::string &sym : sk_.symbols)
      if (auto it = enc_.symbols().find(sym); it != enc_.symbols().end() && !floats_.count(sym))
        at.sizes[sym] = ProtoEncoder::value(m, it->second);
    for (int d = 0; d < 3; ++d)
      at.cta[size_t(d)] = ProtoEncoder::value(m, x.cta[size_t(d)]);
    for (const auto &[name, v] : x.loops) {
      at.loops[name] = ProtoEncoder::value(m, v);
      at.loopOrder.push_back(name);
    }
    at.thread = ProtoEncoder::value(m, x.thread);
    return Answer::Witness;
  }

  LeafValue leafAt(const Point &at) const {
    return [this, &at](const Expr &x) -> std::optional<int64_t> {
      if (x->kind == ExprKind::Var) {
        const std::string &n = as<Var>(x).name;
        if (auto it = at.loops.find(n); it != at.loops.end())
          return it->second;
        if (auto it = at.sizes.find(n); it != at.sizes.end())
          return it->second;
        return std::nullopt;
      }
      if (x->kind != ExprKind::Builtin)
        return std::nullopt;
      BuiltinKind b = as<Builtin>(x).which;
      if (auto map = threadIndexMap(b))
        return threadIndexValue(*map, at.thread);
      for (int d = 0; d < 3; ++d)
        if (b == kBlock[d])
          return at.cta[size_t(d)];
      if (auto shape = clusterShapeOf(sk_))
        for (int d = 0; d < 3; ++d)
          if (b == kRank[d])
            return d == shape->axis ? at.cta[size_t(d)] % shape->extent : 0;
      return std::nullopt;
    };
  }

  // Whether the CTA of `at` is in the grid and every loop value an iteration
  // of its loop there.
  bool realIteration(const SyncEvent &e, const Point &at) const {
    LeafValue leaf = leafAt(at);
    for (size_t d = 0; d < 3; ++d) {
      auto g = d < sk_.grid.size() ? evalConcrete(sk_.grid[d], leaf) : std::optional<int64_t>(1);
      if (!g || at.cta[d] < 0 || at.cta[d] >= *g)
        return false;
    }
    for (int l : sk_.loopChain(e)) {
      const SkeletonLoop &loop = sk_.loops[size_t(l)];
      auto v = at.loops.find(loop.var);
      auto b = evalConcrete(loop.begin, leaf), end = evalConcrete(loop.end, leaf),
           step = evalConcrete(loop.step, leaf);
      if (v == at.loops.end() || !b || !end || !step || *step < 1 || v->second < *b ||
          v->second >= *end || (v->second - *b) % *step != 0)
        return false;
    }
    return true;
  }

  // Evaluates the access at `at`; a finding when it breaks the rule there
  // (true), not proved when it does not or cannot be evaluated.
  bool confirm(const SyncEvent &e, const MemoryAccess &a, const Point &at) {
    bool clip = clipped(e, a, sk_.target);
    LeafValue leaf = leafAt(at);
    std::string sizes;
    for (const auto &[n, v] : at.sizes)
      sizes += fmt::format("{}{} = {}", sizes.empty() ? "" : ", ", n, v);
    if (!realIteration(e, at)) {
      undecided(e, a,
                fmt::format("Z3 found an access outside the tensor at {} in no iteration of its "
                            "loops",
                            sizes));
      return false;
    }
    for (const Expr &g : e.allGuards()) {
      auto v = evalConcrete(g, leaf);
      if (!v || !*v) {
        undecided(e, a,
                  fmt::format("Z3 found an access outside the tensor at {}, where a guard of the "
                              "access does not hold (a guard the proof could not express)",
                              sizes));
        return false;
      }
    }
    auto extentOf = [&](size_t d) { return evalConcrete(sk_.buffers.at(a.buffer).shape[d], leaf); };
    std::vector<int64_t> lo, n, extent;
    for (size_t d = 0; d < a.region.size(); ++d) {
      auto l = evalConcrete(a.region[d].begin, leaf), c = evalConcrete(a.region[d].extent, leaf),
           x = extentOf(d);
      if (!l || !c || !x) {
        undecided(e, a, fmt::format("its region does not evaluate at {}", sizes));
        return false;
      }
      lo.push_back(*l);
      n.push_back(*c);
      extent.push_back(*x);
    }
    // The first broken dimension, and the element that shows it.
    std::optional<size_t> bad;
    std::vector<int64_t> element = lo;
    std::string why;
    for (size_t d = 0; d < lo.size() && !bad; ++d) {
      if (n[d] < 1) {
        why = fmt::format("its dimension {} is empty (extent {})", d, n[d]);
      } else if (lo[d] < 0 || lo[d] >= extent[d]) {
        why =
            fmt::format("{} {} in dimension {}, where {} has {}",
                        clip ? "the box starts at" : "it starts at", lo[d], d, a.buffer, extent[d]);
      } else if (!clip && lo[d] + n[d] > extent[d]) {
        element[d] = extent[d];
        why = fmt::format("it reaches {} in dimension {}, where {} has {}", lo[d] + n[d] - 1, d,
                          a.buffer, extent[d]);
      } else {
        continue;
      }
      bad = d;
    }
    if (!bad) {
      undecided(e, a,
                fmt::format("Z3 found an access outside the tensor at {} that the "
                            "concrete evaluation does not confirm",
                            sizes));
      return false;
    }
    std::string region, elem;
    for (size_t d = 0; d < lo.size(); ++d) {
      region += fmt::format("{}{}", d ? ", " : "",
                            n[d] == 1 ? fmt::format("{}", lo[d])
                                      : fmt::format("{} .. {}", lo[d], lo[d] + n[d] - 1));
      elem += fmt::format("{}{}", d ? ", " : "", element[d]);
    }
    std::string executor =
        fmt::format("CTA ({}, {}, {}), thread {}", at.cta[0], at.cta[1], at.cta[2], at.thread);
    for (const std::string &name : at.loopOrder)
      executor += fmt::format(", {} = {}", name, at.loops.at(name));
    CoverageFinding f;
    f.loc = e.loc;
    f.message = fmt::format(
        "out of bounds: {} {} {}[{}] (for {}; {}): {}; element {}[{}] is outside {}{}", e.what,
        a.write ? "writes" : "reads", a.buffer, region,
        sizes.empty() ? "the constant sizes" : sizes, executor, why, a.buffer, elem, a.buffer,
        clip ? " (TMA clips a box only past the tensor's end; its start must be inside)" : "");
    report_.findings.push_back(std::move(f));
    report_.results.push_back(fmt::format("{}: violated: {} {}[{}] outside the tensor", a.buffer,
                                          e.what, a.buffer, elem));
    return true;
  }

  const BarrierSkeleton &sk_;
  const std::set<std::string> &floats_;
  CoverageReport &report_;
  z3::context &ctx_;
  ProtoEncoder &enc_;
  z3::solver &solver_;
  std::map<std::string, bool> positive_; // factorsPositive's answers
  int witnesses_ = 0;
};

} // namespace

void detail::proveGlobalBounds(CoverageSolver &z3s, const BarrierSkeleton &skeleton,
                               const std::set<std::string> &floats, CoverageReport &report) {
  Bounds(z3s, skeleton, floats, report).run();
  if (!report.findings.empty())
    report.method = "violated";
  else if (!report.notProved.empty())
    report.method = "not proved (" + report.notProved.front().second + ")";
}

void proveGlobalBounds(const BarrierSkeleton &skeleton, const std::set<std::string> &floats,
                       CoverageReport &report, const BoundsOptions &options) {
  requireSolverContext();
  detail::CoverageSolver z3s(skeleton, options.timeoutMs);
  detail::proveGlobalBounds(z3s, skeleton, floats, report);
}

} // namespace tilescope
