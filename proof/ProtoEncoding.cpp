#include "proof/ProtoEncoding.h"

#include "ir/DeviceScale.h"
#include "ir/Printer.h"
#include "proof/TruncatingDivision.h"

#include <fmt/format.h>

#include <functional>

namespace tilescope::detail {

std::optional<z3::expr> threadSetZ3(const ThreadSet &set, const z3::expr &t) {
  z3::context &ctx = t.ctx();
  z3::expr_vector any(ctx);
  for (int64_t x = 0; x < set.launchThreads();) {
    if (!set.contains(x)) {
      ++x;
      continue;
    }
    int64_t y = x;
    while (y + 1 < set.launchThreads() && set.contains(y + 1))
      ++y;
    any.push_back(x == y ? t == ctx.int_val(x) : t >= ctx.int_val(x) && t <= ctx.int_val(y));
    x = y + 1;
  }
  if (any.empty())
    return std::nullopt;
  return z3::mk_or(any);
}

namespace {
// Whether the IR expression is non-negative by its form: constants >= 0,
// the names `var` says are (sizes, loop variables already known to be), CTA
// and thread indices, and their sums, products and quotients.
bool nonNegativeStart(const Expr &e, const std::function<bool(const std::string &)> &var) {
  if (!e)
    return false;
  switch (e->kind) {
  case ExprKind::IntImm:
    return as<IntImm>(e).value >= 0;
  case ExprKind::Var:
    return var(as<Var>(e).name);
  case ExprKind::Builtin:
    return true;
  case ExprKind::Binary: {
    const Binary &b = as<Binary>(e);
    bool arithmetic = b.op == BinaryOp::Add || b.op == BinaryOp::Mul || b.op == BinaryOp::Div ||
                      b.op == BinaryOp::Mod;
    return arithmetic && nonNegativeStart(b.lhs, var) && nonNegativeStart(b.rhs, var);
  }
  default:
    return false;
  }
}
} // namespace

ProtoEncoder::ProtoEncoder(z3::context &ctx, const BarrierSkeleton &sk)
    : ctx_(ctx), assumptions_(ctx) {
  for (const std::string &s : sk.symbols) {
    z3::expr v = ctx_.int_const(s.c_str());
    symbols_.emplace(s, v);
    assumptions_.push_back(v >= ctx_.int_val(leastValueOf(s)));
  }
  for (const Expr &c : sk.constraints)
    if (auto e = encode(c, {}))
      if (e->is_bool())
        assumptions_.push_back(*e);
  // A loop variable is non-negative where every loop of that name starts at
  // a non-negative value and steps up (outer loops come first; a start that
  // names a loop variable not yet known counts as possibly negative).
  std::set<std::string> otherwise;
  auto nonNegativeName = [&](const std::string &n) {
    return symbols_.count(n) || (nonNegativeLoops_.count(n) && !otherwise.count(n));
  };
  for (const SkeletonLoop &l : sk.loops) {
    auto step = constantValue(l.step);
    if (nonNegativeStart(l.begin, nonNegativeName) && step && *step >= 1)
      nonNegativeLoops_.insert(l.var);
    else
      otherwise.insert(l.var);
  }
  for (const std::string &v : otherwise)
    nonNegativeLoops_.erase(v);
  // A loop variable minus its loop's start, or minus a part x of a start
  // x + c with c non-negative (`(t - blockIdx.x) / 132`, the persistent
  // GEMM's tile count), is non-negative in every iteration of a loop that
  // steps up. Kept in the same set under the key "var\nx", for names whose
  // loops all step up from one start.
  std::map<std::string, std::set<std::string>> starts;
  std::map<std::string, Expr> startOf;
  for (const SkeletonLoop &l : sk.loops) {
    auto step = constantValue(l.step);
    starts[l.var].insert(step && *step >= 1 ? print(l.begin) : std::string("\n"));
    startOf[l.var] = l.begin;
  }
  for (const auto &[v, begins] : starts) {
    if (begins.size() != 1 || *begins.begin() == "\n")
      continue;
    const Expr &start = startOf.at(v);
    nonNegativeLoops_.insert(v + "\n" + print(start));
    if (start->kind == ExprKind::Binary && as<Binary>(start).op == BinaryOp::Add) {
      const Binary &a = as<Binary>(start);
      if (nonNegativeStart(a.rhs, nonNegativeName))
        nonNegativeLoops_.insert(v + "\n" + print(a.lhs));
      if (nonNegativeStart(a.lhs, nonNegativeName))
        nonNegativeLoops_.insert(v + "\n" + print(a.rhs));
    }
  }
}

bool ProtoEncoder::nonNegativeByForm(const z3::expr &e) const {
  return detail::nonNegativeByForm(e, nonNegative());
}

NonNegativeConstant ProtoEncoder::nonNegative() const {
  return [this](const z3::expr &c) {
    if (knownIds_.count(c.id()))
      return true;
    if (!c.is_const())
      return false;
    auto it = symbols_.find(c.decl().name().str());
    return it != symbols_.end() && z3::eq(it->second, c);
  };
}

z3::expr ProtoEncoder::known(z3::expr e) {
  if (knownIds_.insert(e.id()).second)
    knownTerms_.push_back(e);
  return e;
}

z3::expr ProtoEncoder::fresh(const std::string &name) {
  return ctx_.int_const(fmt::format("{}!{}", name, fresh_++).c_str());
}

z3::expr ProtoEncoder::symbolSum(const std::vector<std::string> &names) const {
  z3::expr sum = ctx_.int_val(0);
  for (const std::string &s : names)
    sum = sum + symbols_.at(s);
  return sum;
}

std::map<std::string, int64_t> ProtoEncoder::symbolValues(const z3::model &m,
                                                          const std::vector<std::string> &names) const {
  std::map<std::string, int64_t> out;
  for (const std::string &s : names)
    out[s] = value(m, symbols_.at(s));
  return out;
}

int64_t ProtoEncoder::value(const z3::model &m, const z3::expr &e) {
  z3::expr v = m.eval(e, true);
  int64_t out = 0;
  if (v.is_numeral_i64(out))
    return out;
  return 0;
}

std::string ProtoEncoder::text(const z3::model &m, const z3::expr &e) {
  z3::expr v = m.eval(e, true);
  if (v.is_numeral())
    return v.get_decimal_string(0);
  return v.to_string();
}

std::string ProtoEncoder::describeSymbols(const z3::model &m) const {
  std::string out;
  for (const auto &[name, v] : symbols_) {
    if (!out.empty())
      out += ", ";
    out += fmt::format("{} = {}", name, text(m, v));
  }
  return out;
}

std::optional<z3::expr> ProtoEncoder::encode(const Expr &e,
                                             const std::map<std::string, z3::expr> &bound,
                                             const std::map<BuiltinKind, z3::expr> &builtins) {
  if (!e)
    return std::nullopt;
  switch (e->kind) {
  case ExprKind::IntImm:
    return ctx_.int_val(as<IntImm>(e).value);
  case ExprKind::BoolImm:
    return ctx_.bool_val(as<BoolImm>(e).value);
  case ExprKind::Var: {
    const std::string &n = as<Var>(e).name;
    if (auto it = bound.find(n); it != bound.end())
      return nonNegativeLoops_.count(n) ? known(it->second) : it->second;
    if (auto it = symbols_.find(n); it != symbols_.end())
      return it->second;
    return std::nullopt;
  }
  case ExprKind::Builtin: {
    BuiltinKind b = as<Builtin>(e).which;
    // Thread, warp, CTA and cluster indices are never negative.
    if (auto it = builtins.find(b); it != builtins.end())
      return known(it->second);
    switch (b) {
    case BuiltinKind::blockIdx_x:
    case BuiltinKind::blockIdx_y:
    case BuiltinKind::blockIdx_z: {
      std::string name(builtinName(b));
      auto it = symbols_.find(name);
      if (it == symbols_.end()) {
        z3::expr v = ctx_.int_const(name.c_str());
        it = symbols_.emplace(name, v).first;
        assumptions_.push_back(v >= 0);
      }
      return it->second;
    }
    default:
      return std::nullopt;
    }
  }
  case ExprKind::Unary: {
    auto v = encode(as<Unary>(e).operand, bound, builtins);
    if (!v)
      return std::nullopt;
    if (as<Unary>(e).op == UnaryOp::Neg)
      return v->is_int() ? std::optional<z3::expr>(-*v) : std::nullopt;
    return v->is_bool() ? std::optional<z3::expr>(!*v) : std::nullopt;
  }
  case ExprKind::Binary: {
    const Binary &b = as<Binary>(e);
    auto l = encode(b.lhs, bound, builtins), r = encode(b.rhs, bound, builtins);
    if (!l || !r)
      return std::nullopt;
    bool ints = l->is_int() && r->is_int();
    bool bools = l->is_bool() && r->is_bool();
    switch (b.op) {
    case BinaryOp::Add:
      if (ints)
        return *l + *r;
      break;
    case BinaryOp::Sub:
      if (ints) {
        bool sinceStart = b.lhs->kind == ExprKind::Var && bound.count(as<Var>(b.lhs).name) &&
                          nonNegativeLoops_.count(as<Var>(b.lhs).name + "\n" + print(b.rhs));
        return sinceStart ? known(*l - *r) : *l - *r;
      }
      break;
    case BinaryOp::Mul:
      if (ints)
        return *l * *r;
      break;
    case BinaryOp::Div:
      if (ints)
        return truncatingDiv(*l, *r, nonNegative());
      break;
    case BinaryOp::Mod:
      if (ints)
        return truncatingRem(*l, *r, nonNegative());
      break;
    case BinaryOp::Lt:
      if (ints)
        return *l < *r;
      break;
    case BinaryOp::Le:
      if (ints)
        return *l <= *r;
      break;
    case BinaryOp::Gt:
      if (ints)
        return *l > *r;
      break;
    case BinaryOp::Ge:
      if (ints)
        return *l >= *r;
      break;
    case BinaryOp::Eq:
      if (ints || bools)
        return *l == *r;
      break;
    case BinaryOp::Ne:
      if (ints || bools)
        return *l != *r;
      break;
    case BinaryOp::And:
      if (bools)
        return *l && *r;
      break;
    case BinaryOp::Or:
      if (bools)
        return *l || *r;
      break;
    }
    return std::nullopt;
  }
  case ExprKind::Call: {
    const Call &c = as<Call>(e);
    if ((c.callee == "min" || c.callee == "max") && c.args.size() == 2) {
      // max(0, l / d) with a constant d > 0 (a loop's trip count,
      // SkeletonLoop::trip) is the same whether l / d truncates or floors:
      // both are <= 0 where l < 0. Z3's own division keeps the trip counts
      // every proof asks about as they were.
      if (c.callee == "max" && constantValue(c.args[0]) == 0 &&
          c.args[1]->kind == ExprKind::Binary && as<Binary>(c.args[1]).op == BinaryOp::Div &&
          constantValue(as<Binary>(c.args[1]).rhs).value_or(0) > 0) {
        const Binary &q = as<Binary>(c.args[1]);
        auto l = encode(q.lhs, bound, builtins), d = encode(q.rhs, bound, builtins);
        if (!l || !d || !l->is_int() || !d->is_int())
          return std::nullopt;
        z3::expr zero = ctx_.int_val(0), floor = *l / *d;
        return z3::ite(zero >= floor, zero, floor);
      }
      auto a = encode(c.args[0], bound, builtins), b = encode(c.args[1], bound, builtins);
      if (!a || !b || !a->is_int() || !b->is_int())
        return std::nullopt;
      return c.callee == "min" ? z3::ite(*a <= *b, *a, *b) : z3::ite(*a >= *b, *a, *b);
    }
    if (c.callee == "select" && c.args.size() == 3) {
      auto p = encode(c.args[0], bound, builtins), a = encode(c.args[1], bound, builtins),
           b = encode(c.args[2], bound, builtins);
      if (!p || !a || !b || !p->is_bool())
        return std::nullopt;
      return z3::ite(*p, *a, *b);
    }
    return std::nullopt;
  }
  default:
    return std::nullopt;
  }
}

} // namespace tilescope::detail
