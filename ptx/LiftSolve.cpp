// Z3 questions of the lifting (LiftSolve.h).
#include "ptx/LiftSolve.h"

#include "ir/Printer.h"
#include "proof/QueryDeadline.h"
#include "ptx/ThreadConditions.h"
#include "ptx/Values.h"
#include "proof/SolverBudget.h"
#include "proof/TruncatingDivision.h"

#include <fmt/format.h>
#include <z3++.h>

#include <algorithm>
#include <map>
#include <optional>

namespace tilescope::ptx {
namespace {

class Encoder {
public:
  explicit Encoder(z3::context &ctx) : ctx_(ctx), ranges_(ctx) {}

  std::optional<z3::expr> encode(const Expr &e) {
    if (!e)
      return std::nullopt;
    switch (e->kind) {
    case ExprKind::IntImm:
      return ctx_.int_val(int64_t(as<IntImm>(e).value));
    case ExprKind::BoolImm:
      return ctx_.bool_val(as<BoolImm>(e).value);
    case ExprKind::Var:
      return unknown(as<Var>(e).name, as<Var>(e).name.rfind("it", 0) != 0);
    case ExprKind::Builtin:
      switch (as<Builtin>(e).which) {
      case BuiltinKind::blockIdx_x:
      case BuiltinKind::blockIdx_y:
      case BuiltinKind::blockIdx_z:
        return unknown(print(e), false);
      default:
        return std::nullopt; // the thread index is bound by the caller
      }
    case ExprKind::Unary: {
      const auto &u = as<Unary>(e);
      auto x = encode(u.operand);
      if (!x)
        return std::nullopt;
      if (u.op == UnaryOp::Not && x->is_bool())
        return !*x;
      if (u.op == UnaryOp::Neg && x->is_int())
        return -*x;
      return std::nullopt;
    }
    case ExprKind::Call: {
      const auto &c = as<Call>(e);
      if ((c.callee != "max" && c.callee != "min") || c.args.size() != 2)
        return std::nullopt;
      auto x = encode(c.args[0]), y = encode(c.args[1]);
      if (!x || !y || !x->is_int() || !y->is_int())
        return std::nullopt;
      return c.callee == "max" ? z3::ite(*x >= *y, *x, *y) : z3::ite(*x <= *y, *x, *y);
    }
    case ExprKind::Binary: {
      const auto &b = as<Binary>(e);
      auto x = encode(b.lhs), y = encode(b.rhs);
      if (!x || !y)
        return std::nullopt;
      bool ints = x->is_int() && y->is_int(), bools = x->is_bool() && y->is_bool();
      switch (b.op) {
      case BinaryOp::Add:
        return ints ? std::optional(*x + *y) : std::nullopt;
      case BinaryOp::Sub:
        return ints ? std::optional(*x - *y) : std::nullopt;
      case BinaryOp::Mul:
        return ints ? std::optional(*x * *y) : std::nullopt;
      case BinaryOp::Div: // truncating, as div.s32 and the IR's
        return ints ? std::optional(detail::truncatingDiv(*x, *y, nonNegative())) : std::nullopt;
      case BinaryOp::Mod:
        return ints ? std::optional(detail::truncatingRem(*x, *y, nonNegative())) : std::nullopt;
      case BinaryOp::Lt:
        return ints ? std::optional(*x < *y) : std::nullopt;
      case BinaryOp::Le:
        return ints ? std::optional(*x <= *y) : std::nullopt;
      case BinaryOp::Gt:
        return ints ? std::optional(*x > *y) : std::nullopt;
      case BinaryOp::Ge:
        return ints ? std::optional(*x >= *y) : std::nullopt;
      case BinaryOp::Eq:
        return ints || bools ? std::optional(*x == *y) : std::nullopt;
      case BinaryOp::Ne:
        return ints || bools ? std::optional(*x != *y) : std::nullopt;
      case BinaryOp::And:
        return bools ? std::optional(*x && *y) : std::nullopt;
      case BinaryOp::Or:
        return bools ? std::optional(*x || *y) : std::nullopt;
      default:
        return std::nullopt;
      }
    }
    default:
      return std::nullopt;
    }
  }

  const z3::expr_vector &ranges() const { return ranges_; }

private:
  // The unknowns (each >= 0 under ranges()).
  detail::NonNegativeConstant nonNegative() const {
    return [this](const z3::expr &c) {
      auto it = vars_.find(c.decl().name().str());
      return it != vars_.end() && z3::eq(it->second, c);
    };
  }

  z3::expr unknown(const std::string &name, bool parameter) {
    auto it = vars_.find(name);
    if (it != vars_.end())
      return it->second;
    z3::expr v = ctx_.int_const(name.c_str());
    ranges_.push_back(v >= 0);
    if (parameter)
      ranges_.push_back(v <= ctx_.int_val(int64_t(1) << 30));
    vars_.emplace(name, v);
    return v;
  }

  z3::context &ctx_;
  std::map<std::string, z3::expr> vars_;
  z3::expr_vector ranges_;
};

} // namespace

Implication implies(const std::vector<Expr> &facts, const Expr &goal, std::string &why) {
  try {
    requireSolverContext();
    z3::context ctx;
    Encoder enc(ctx);
    z3::solver s = oneShotSolver(ctx, 2000);
    for (const Expr &f : facts) {
      auto x = enc.encode(f);
      if (!x || !x->is_bool()) {
        why = fmt::format("'{}' is not encoded", f ? print(f) : "?");
        return Implication::Unknown;
      }
      s.add(*x);
    }
    auto g = enc.encode(goal);
    if (!g || !g->is_bool()) {
      why = fmt::format("'{}' is not encoded", goal ? print(goal) : "?");
      return Implication::Unknown;
    }
    for (const z3::expr &r : enc.ranges())
      s.add(r);
    s.add(!*g);
    switch (checkWithinBudget(s)) {
    case z3::unsat:
      return Implication::Holds;
    case z3::sat:
      return Implication::Fails;
    default:
      why = "Z3 gave up: " + reasonUnknown(s);
      noteSolverGaveUp(reasonUnknown(s));
      return Implication::Unknown;
    }
  } catch (const z3::exception &e) {
    why = std::string("Z3: ") + e.msg();
  } catch (const std::bad_alloc &) {
    why = "Z3: out of memory";
  }
  return Implication::Unknown;
}

bool holdsWhereRun(const std::vector<Expr> &runs, const std::vector<Expr> &facts, const Expr &need,
                   std::string &why) {
  std::vector<Expr> seen;
  for (const Expr &g : runs) {
    if (!g || isFalse(g))
      continue;
    if (std::any_of(seen.begin(), seen.end(), [&](const Expr &x) { return equal(x, g); }))
      continue;
    seen.push_back(g);
    std::vector<Expr> all = facts;
    if (!isTrue(g))
      all.push_back(g);
    if (implies(all, need, why) != Implication::Holds) {
      if (why.empty())
        why = fmt::format("not implied by what runs the loop ({})", print(g));
      return false;
    }
  }
  return true;
}

void foldLoopEntryGuards(BarrierSkeleton &sk, const std::vector<Expr> &trips,
                         const std::vector<Expr> &facts) {
  for (size_t s = 0; s < sk.loops.size(); ++s) {
    std::vector<SyncEvent *> inside;
    for (SyncEvent &e : sk.events) {
      std::vector<int> chain = sk.loopChain(e);
      if (std::find(chain.begin(), chain.end(), int(s)) != chain.end())
        inside.push_back(&e);
    }
    if (inside.empty())
      continue;
    Expr n = trips[s];
    Expr entered = Binary::make(BinaryOp::Ge, n, IntImm::make(1));
    std::string why;
    std::vector<Expr> candidates = inside.front()->guards; // copied: erased below
    for (const Expr &c : candidates) {
      std::vector<std::string> vars;
      freeVars(c, vars);
      // Over sizes and the counters of enclosing loops only.
      bool outer = true;
      for (const std::string &v : vars) {
        if (v.rfind("it", 0) != 0)
          continue;
        bool enclosing = false;
        for (int p = sk.loops[s].parent; p >= 0; p = sk.loops[size_t(p)].parent)
          enclosing |= sk.loops[size_t(p)].var == v;
        outer &= enclosing;
      }
      if (!outer)
        continue;
      bool everywhere = std::all_of(inside.begin(), inside.end(), [&](const SyncEvent *e) {
        return std::any_of(e->guards.begin(), e->guards.end(),
                           [&](const Expr &g) { return equal(g, c); });
      });
      if (!everywhere)
        continue;
      std::vector<Expr> withC = facts, withEntered = facts;
      withC.push_back(c);
      withEntered.push_back(entered);
      if (implies(withC, entered, why) != Implication::Holds ||
          implies(withEntered, c, why) != Implication::Holds)
        continue;
      sk.loops[s].end = n;
      for (SyncEvent *e : inside)
        e->guards.erase(std::remove_if(e->guards.begin(), e->guards.end(),
                                       [&](const Expr &g) { return equal(g, c); }),
                        e->guards.end());
      break;
    }
  }
}

void relateLoopBounds(BarrierSkeleton &sk, const std::vector<Expr> &facts) {
  // Only outermost loops that hold events: the stage pairs compare those.
  std::vector<bool> used(sk.loops.size(), false);
  for (const SyncEvent &e : sk.events)
    for (int l : sk.loopChain(e))
      used[size_t(l)] = true;
  for (size_t b = 1; b < sk.loops.size(); ++b)
    for (size_t a = 0; a < b; ++a) {
      const SkeletonLoop &x = sk.loops[a];
      SkeletonLoop &y = sk.loops[b];
      if (!used[a] || !used[b] || x.parent >= 0 || y.parent >= 0 || !equal(x.begin, y.begin) ||
          !equal(x.step, y.step) || equal(x.end, y.end))
        continue;
      std::string why;
      if (implies(facts, Binary::make(BinaryOp::Eq, x.end, y.end), why) != Implication::Holds)
        continue;
      y.end = x.end;
      break;
    }
}

} // namespace tilescope::ptx
