#include "proof/ProtoEncoding.h"

#include "ir/DeviceScale.h"

#include <fmt/format.h>

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
}

z3::expr ProtoEncoder::fresh(const std::string &name) {
  return ctx_.int_const(fmt::format("{}!{}", name, fresh_++).c_str());
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
      return it->second;
    if (auto it = symbols_.find(n); it != symbols_.end())
      return it->second;
    return std::nullopt;
  }
  case ExprKind::Builtin: {
    BuiltinKind b = as<Builtin>(e).which;
    if (auto it = builtins.find(b); it != builtins.end())
      return it->second;
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
      if (ints)
        return *l - *r;
      break;
    case BinaryOp::Mul:
      if (ints)
        return *l * *r;
      break;
    case BinaryOp::Div:
      if (ints)
        return *l / *r;
      break;
    case BinaryOp::Mod:
      if (ints)
        return z3::mod(*l, *r);
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
