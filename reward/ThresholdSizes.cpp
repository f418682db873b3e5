#include "reward/ThresholdSizes.h"
#include "reward/SizeRelations.h"

#include "ir/ConcreteEval.h"
#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "proof/ProtoEncoding.h"
#include "proof/QueryDeadline.h"
#include "proof/SolverBudget.h"
#include "sync/BarrierSkeleton.h"
#include "verifier/FallbackSizes.h"

#include <fmt/format.h>

#include <array>
#include <set>

namespace tilescope::reward_detail {
namespace {

// A decision over sizes and CTA indices: two exclusive outcomes, reached
// under `path` (the size-only conditions of the enclosing ifs; null: always).
struct Decision {
  Expr outcome[2];
  std::string name[2];
  Expr path;
  llvm::SMLoc loc;
  bool readsCta = false;
};

bool isCta(BuiltinKind b) {
  return b == BuiltinKind::blockIdx_x || b == BuiltinKind::blockIdx_y ||
         b == BuiltinKind::blockIdx_z;
}

// Whether `e` reads only shape symbols, blockIdx and literals (ints, bools),
// through operators ConcreteEval and ProtoEncoder both know; `reads` is set
// when it reads a symbol or blockIdx at all, `cta` when blockIdx.
bool sizeOnly(const Expr &e, const std::set<std::string> &symbols, bool &reads, bool &cta) {
  switch (e->kind) {
  case ExprKind::IntImm:
  case ExprKind::BoolImm:
    return true;
  case ExprKind::Var:
    reads = true;
    return symbols.count(as<Var>(e).name) != 0;
  case ExprKind::Builtin:
    reads = cta = true;
    return isCta(as<Builtin>(e).which);
  case ExprKind::Unary:
    return sizeOnly(as<Unary>(e).operand, symbols, reads, cta);
  case ExprKind::Binary:
    return sizeOnly(as<Binary>(e).lhs, symbols, reads, cta) &&
           sizeOnly(as<Binary>(e).rhs, symbols, reads, cta);
  case ExprKind::Call: {
    const Call &c = as<Call>(e);
    if (!((c.callee == "min" || c.callee == "max") && c.args.size() == 2) &&
        !(c.callee == "select" && c.args.size() == 3))
      return false;
    for (const Expr &a : c.args)
      if (!sizeOnly(a, symbols, reads, cta))
        return false;
    return true;
  }
  default:
    return false;
  }
}

Expr cmp(BinaryOp op, const Expr &a, const Expr &b, llvm::SMLoc loc) {
  return Binary::make(op, a, b, loc);
}

// Collects the decisions of a kernel body, lets substituted.
class Collector {
public:
  explicit Collector(std::set<std::string> symbols) : symbols_(std::move(symbols)) {}
  std::vector<Decision> decisions;

  void block(const Block &b, const Expr &path, std::map<std::string, Expr> env) {
    for (const Stmt &s : b)
      stmt(s, path, env);
  }

private:
  std::set<std::string> symbols_;
  std::set<std::string> seen_;

  void stmt(const Stmt &s, const Expr &path, std::map<std::string, Expr> &env) {
    switch (s->kind) {
    case StmtKind::Let: {
      const Let &l = as<Let>(s);
      Expr v = substitute(l.value, env);
      expr(v, path);
      env[l.name] = v;
      break;
    }
    case StmtKind::For: {
      const For &f = as<For>(s);
      for (const Expr &e : {f.begin, f.end, f.step})
        if (e)
          expr(substitute(e, env), path);
      std::map<std::string, Expr> inner = env;
      inner.erase(f.var); // the loop variable reads no size only
      block(f.body, path, inner);
      break;
    }
    case StmtKind::If: {
      const If &i = as<If>(s);
      Expr c = substitute(i.cond, env);
      expr(c, path);
      bool reads = false, cta = false;
      bool guard = sizeOnly(c, symbols_, reads, cta);
      auto under = [&](const Expr &cond) {
        if (!guard)
          return path;
        return path ? Binary::make(BinaryOp::And, path, cond, i.loc) : cond;
      };
      block(i.thenBody, under(c), env);
      block(i.elseBody, under(Unary::make(UnaryOp::Not, c, i.loc)), env);
      break;
    }
    default: {
      // Stores, calls, declarations: every expression they hold.
      struct Exprs : IRVisitor {
        std::vector<Expr> top;
        bool inside = false;
        void visitStore(const Store &st) override {
          top.push_back(st.target);
          top.push_back(st.value);
        }
        void visitCallStmt(const CallStmt &c) override {
          for (const CallArg &a : c.args)
            top.push_back(a.value);
        }
      } exprs;
      exprs.visit(s);
      for (const Expr &e : exprs.top)
        if (e)
          expr(substitute(e, env), path);
    }
    }
  }

  // Every decision node of `e`.
  void expr(const Expr &e, const Expr &path) {
    struct Walk : IRVisitor {
      Collector *self;
      const Expr *path;
      void visitBinary(const Binary &b) override {
        self->node(b, *path);
        IRVisitor::visitBinary(b);
      }
      void visitCall(const Call &c) override {
        self->node(c, *path);
        IRVisitor::visitCall(c);
      }
    } walk;
    walk.self = this;
    walk.path = &path;
    walk.visit(e);
  }

  void node(const Binary &b, const Expr &path) {
    Expr self = Binary::make(b.op, b.lhs, b.rhs, b.loc);
    switch (b.op) {
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::And:
    case BinaryOp::Or:
      add(self, self, Unary::make(UnaryOp::Not, self, b.loc), "true", "false", path, b.loc);
      break;
    case BinaryOp::Mod:
    case BinaryOp::Div: {
      Expr zero = IntImm::make(0, b.loc);
      bool mod = b.op == BinaryOp::Mod;
      add(self, cmp(BinaryOp::Eq, self, zero, b.loc), cmp(BinaryOp::Ne, self, zero, b.loc),
          mod ? "remainder zero" : "quotient zero", mod ? "remainder not zero" : "quotient not zero",
          path, b.loc);
      break;
    }
    default:
      break;
    }
  }

  void node(const Call &c, const Expr &path) {
    if ((c.callee != "min" && c.callee != "max") || c.args.size() != 2)
      return;
    Expr self = Call::make(c.callee, c.args, c.loc);
    add(self, cmp(BinaryOp::Lt, c.args[0], c.args[1], c.loc),
        cmp(BinaryOp::Gt, c.args[0], c.args[1], c.loc), "first argument smaller",
        "first argument larger", path, c.loc);
  }

  void add(const Expr &self, const Expr &yes, const Expr &no, const char *yesName,
           const char *noName, const Expr &path, llvm::SMLoc loc) {
    bool reads = false, cta = false;
    if (!sizeOnly(self, symbols_, reads, cta) || !reads)
      return;
    std::string key = print(self) + "\n" + (path ? print(path) : "");
    if (!seen_.insert(key).second)
      return;
    std::string text = print(self);
    Decision d;
    d.outcome[0] = yes;
    d.outcome[1] = no;
    d.name[0] = fmt::format("`{}` {}", text, yesName);
    d.name[1] = fmt::format("`{}` {}", text, noName);
    d.path = path;
    d.loc = loc;
    bool pathReads = false, pathCta = false;
    if (path)
      sizeOnly(path, symbols_, pathReads, pathCta);
    d.readsCta = cta || pathCta;
    decisions.push_back(std::move(d));
  }
};

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
std::array<bool, 2> outcomesAt(const Decision &d, const BarrierSkeleton &sk,
                               const SimSize &size) {
  std::array<bool, 2> out{false, false};
  if (d.readsCta && size.sampleCtas > 0)
    return out; // which CTAs run is drawn per evaluation
  std::vector<std::array<int64_t, 3>> ctas{{0, 0, 0}};
  if (d.readsCta) {
    auto grid = gridExtent(sk, size.values);
    if (!grid)
      return out;
    ctas = ctasOf(*grid);
  }
  for (const auto &cta : ctas) {
    LeafValue leaf = [&](const Expr &e) -> std::optional<int64_t> {
      if (e->kind == ExprKind::Builtin)
        return cta[size_t(int(as<Builtin>(e).which) - int(BuiltinKind::blockIdx_x))];
      auto it = size.values.find(as<Var>(e).name);
      return it == size.values.end() ? std::nullopt : std::optional<int64_t>(it->second);
    };
    if (d.path && evalConcrete(d.path, leaf).value_or(0) == 0)
      continue;
    for (size_t k = 0; k < 2; ++k)
      out[k] = out[k] || evalConcrete(d.outcome[k], leaf).value_or(0) != 0;
    if (out[0] && out[1])
      break;
  }
  return out;
}

// The admitted size with the least sum of symbols at which `d` takes
// outcome k; nothing with `why` (empty `why`: the where clause rules it out).
std::optional<SizeAssignment> solveFor(const Decision &d, size_t k, const BarrierSkeleton &sk,
                                       std::string &why) {
  for (bool capped : {true, false}) {
    requireSolverContext();
    z3::context ctx;
    detail::ProtoEncoder enc(ctx, sk);
    z3::optimize opt(ctx);
    for (unsigned i = 0; i < enc.assumptions().size(); ++i)
      opt.add(enc.assumptions()[int(i)]);
    std::map<BuiltinKind, z3::expr> ctas;
    const BuiltinKind dims[3] = {BuiltinKind::blockIdx_x, BuiltinKind::blockIdx_y,
                                 BuiltinKind::blockIdx_z};
    for (size_t dim = 0; dim < 3; ++dim) {
      z3::expr b = ctx.int_const(fmt::format("cta{}", dim).c_str());
      std::optional<z3::expr> extent =
          dim < sk.grid.size() ? enc.encode(sk.grid[dim], {}) : ctx.int_val(1);
      if (!extent) {
        why = "the launch grid is beyond the solver";
        return std::nullopt;
      }
      opt.add(b >= 0 && b < *extent);
      ctas.emplace(dims[dim], b);
    }
    auto target = enc.encode(d.outcome[k], {}, ctas);
    auto path = d.path ? enc.encode(d.path, {}, ctas) : std::optional<z3::expr>(ctx.bool_val(true));
    if (!target || !path || !target->is_bool() || !path->is_bool()) {
      why = "the decision is beyond the solver";
      return std::nullopt;
    }
    opt.add(*target && *path);
    z3::expr sum = ctx.int_val(0);
    for (const std::string &s : sk.symbols) {
      z3::expr v = enc.symbols().at(s);
      if (capped)
        opt.add(v <= ctx.int_val(kMaxThresholdSymbol));
      sum = sum + v;
    }
    if (capped)
      opt.minimize(sum);
    z3::check_result r = checkWithinBudget(opt);
    if (r == z3::unknown) {
      why = fmt::format("Z3 gave up ({})", Z3_optimize_get_reason_unknown(ctx, opt));
      return std::nullopt;
    }
    if (r == z3::unsat)
      continue; // capped: try without the cap; uncapped: ruled out
    if (!capped) {
      why = fmt::format("it needs a size above {}", kMaxThresholdSymbol);
      return std::nullopt;
    }
    z3::model m = opt.get_model();
    SizeAssignment out;
    for (const std::string &s : sk.symbols)
      out[s] = detail::ProtoEncoder::value(m, enc.symbols().at(s));
    return out;
  }
  why.clear();
  return std::nullopt;
}

// The symbols `d` reads (those of the grid for blockIdx) doubled, when the
// outcome holds there too: a kernel that stops working at the threshold then
// leaves half its work undone, not one step of it (`for k in 0 .. min(K,
// 4096)` at K = 4097 drops one product of 4097, within the tolerance).
SimSize farSide(const Decision &d, size_t k, const BarrierSkeleton &sk, const SizeRelations &rel,
                const SimSize &size) {
  std::set<std::string> read = namesUsed(d.outcome[k]);
  if (d.path)
    read.merge(namesUsed(d.path));
  if (d.readsCta)
    for (const Expr &g : sk.grid)
      read.merge(namesUsed(g));
  SimSize far = size;
  for (const std::string &s : rel.freeBehind(read))
    if (auto it = far.values.find(s); it != far.values.end() && it->second <= kMaxThresholdSymbol)
      it->second *= 2;
  if (rel.admits(far.values) && outcomesAt(d, sk, far)[k])
    return far;
  return size;
}

} // namespace

ThresholdPlan thresholdSizes(const Kernel &kernel, const std::vector<SimSize> &sampled,
                             const std::function<std::string(llvm::SMLoc)> &where) {
  ThresholdPlan plan;
  std::vector<std::string> symbolList = shapeSymbols(kernel);
  if (symbolList.empty() || sampled.empty())
    return plan;
  BarrierSkeleton sk = extractBarrierSkeleton(kernel);
  SizeRelations rel(kernel, sk, symbolList);
  Collector collect({symbolList.begin(), symbolList.end()});
  collect.block(kernel.body, nullptr, {});

  std::vector<SimSize> sizes = sampled;
  for (const Decision &d : collect.decisions) {
    std::array<bool, 2> seen{false, false};
    for (const SimSize &s : sizes) {
      auto got = outcomesAt(d, sk, s);
      seen = {seen[0] || got[0], seen[1] || got[1]};
    }
    for (size_t k = 0; k < 2; ++k) {
      if (seen[k])
        continue;
      std::string at = where(d.loc);
      std::string why;
      std::optional<SizeAssignment> found;
      try {
        found = solveFor(d, k, sk, why);
      } catch (const z3::exception &e) {
        why = fmt::format("Z3 failed: {}", e.msg());
      }
      if (!found && why.empty())
        continue; // the where clause rules this outcome out
      SimSize size{{}, 0, "threshold"};
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
        if (why.empty())
          size = farSide(d, k, sk, rel, size);
      }
      if (!why.empty()) {
        plan.unreached.push_back(fmt::format("{} at {}: {}", d.name[k], at, why));
        continue;
      }
      plan.reasons.push_back(fmt::format("{} at {}", d.name[k], at));
      seen[k] = true;
      sizes.push_back(size);
      plan.sizes.push_back(std::move(size));
    }
  }
  return plan;
}

} // namespace tilescope::reward_detail
