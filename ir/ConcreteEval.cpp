#include "ir/ConcreteEval.h"

#include "ir/ThreadIndex.h"

#include <algorithm>
#include <cstdint>

namespace tilescope {

std::optional<int64_t> evalConcrete(const Expr &e, const LeafValue &leaf) {
  if (!e)
    return std::nullopt;
  switch (e->kind) {
  case ExprKind::IntImm:
    return as<IntImm>(e).value;
  case ExprKind::BoolImm:
    return as<BoolImm>(e).value ? 1 : 0;
  case ExprKind::Var:
  case ExprKind::Builtin:
    return leaf(e);
  case ExprKind::Unary: {
    auto v = evalConcrete(as<Unary>(e).operand, leaf);
    if (!v)
      return std::nullopt;
    if (as<Unary>(e).op != UnaryOp::Neg)
      return int64_t(*v == 0);
    if (*v == INT64_MIN)
      return std::nullopt; // -v overflows
    return -*v;
  }
  case ExprKind::Binary: {
    const Binary &b = as<Binary>(e);
    auto l = evalConcrete(b.lhs, leaf), r = evalConcrete(b.rhs, leaf);
    if (!l || !r)
      return std::nullopt;
    return foldIntBinary(b.op, *l, *r);
  }
  case ExprKind::Call: {
    const Call &c = as<Call>(e);
    if ((c.callee == "min" || c.callee == "max") && c.args.size() == 2) {
      auto a = evalConcrete(c.args[0], leaf), b = evalConcrete(c.args[1], leaf);
      if (!a || !b)
        return std::nullopt;
      return c.callee == "min" ? std::min(*a, *b) : std::max(*a, *b);
    }
    if (c.callee == "select" && c.args.size() == 3) {
      auto p = evalConcrete(c.args[0], leaf);
      if (!p)
        return std::nullopt;
      return evalConcrete(c.args[*p ? 1 : 2], leaf);
    }
    return std::nullopt;
  }
  default:
    return std::nullopt;
  }
}

std::optional<bool> pathRunsAtThread(const std::vector<std::pair<Expr, bool>> &path,
                                     int64_t tx) {
  bool unknown = false;
  for (const auto &[cond, taken] : path) {
    auto v = evalConcrete(cond, [tx](const Expr &leaf) -> std::optional<int64_t> {
      if (leaf->kind != ExprKind::Builtin)
        return std::nullopt;
      if (auto m = threadIndexMap(as<Builtin>(leaf).which))
        return threadIndexValue(*m, tx);
      return std::nullopt;
    });
    if (!v)
      unknown = true;
    else if ((*v != 0) != taken)
      return false;
  }
  return unknown ? std::nullopt : std::optional(true);
}

} // namespace tilescope
