// Expression helpers of the lifting (LiftExprs.h).
#include "ptx/LiftExprs.h"

#include "ir/ConcreteEval.h"
#include "ptx/Values.h"

#include <map>
#include <string>

namespace tilescope::ptx {

// The smallest value of `rest` over the iterations of the loops it names.
std::optional<int64_t> minOver(const Expr &rest) {
  std::vector<std::string> vars;
  freeVars(rest, vars);
  for (const std::string &v : vars)
    if (v.rfind("it", 0) != 0)
      return std::nullopt;
  std::optional<int64_t> best;
  for (int64_t k = 0; k < 64; ++k) {
    auto v = evalConcrete(rest, [&](const Expr &leaf) -> std::optional<int64_t> {
      if (leaf->kind == ExprKind::Var)
        return k;
      return std::nullopt;
    });
    if (!v)
      return std::nullopt;
    best = best ? std::min(*best, *v) : *v;
  }
  return best;
}

// `rest / 8` when rest is a sum of multiples of 8.
Expr divide8(const Expr &e) {
  if (!e)
    return IntImm::make(0);
  if (auto k = constantValue(e))
    return *k % 8 == 0 ? IntImm::make(*k / 8) : nullptr;
  if (e->kind != ExprKind::Binary)
    return nullptr;
  const auto &b = as<Binary>(e);
  if (b.op == BinaryOp::Add) {
    Expr x = divide8(b.lhs), y = divide8(b.rhs);
    return x && y ? add(x, y) : nullptr;
  }
  if (b.op == BinaryOp::Mul)
    if (auto k = constantValue(b.rhs); k && *k % 8 == 0)
      return mul(b.lhs, IntImm::make(*k / 8));
  return nullptr;
}

// A guard as a list of conjuncts, negations pushed into comparisons, and
// `it != 0` on a loop counter (never negative) written `it > 0`.
std::vector<Expr> conjuncts(const Expr &g) {
  std::vector<Expr> out;
  std::vector<std::pair<Expr, bool>> work{{g, false}};
  static const std::map<BinaryOp, BinaryOp> inverse = {
      {BinaryOp::Lt, BinaryOp::Ge}, {BinaryOp::Le, BinaryOp::Gt}, {BinaryOp::Gt, BinaryOp::Le},
      {BinaryOp::Ge, BinaryOp::Lt}, {BinaryOp::Eq, BinaryOp::Ne}, {BinaryOp::Ne, BinaryOp::Eq}};
  while (!work.empty()) {
    auto [e, negated] = work.back();
    work.pop_back();
    if (e->kind == ExprKind::Unary && as<Unary>(e).op == UnaryOp::Not) {
      work.push_back({as<Unary>(e).operand, !negated});
      continue;
    }
    if (e->kind == ExprKind::Binary) {
      const auto &b = as<Binary>(e);
      if ((b.op == BinaryOp::And && !negated) || (b.op == BinaryOp::Or && negated)) {
        work.push_back({b.rhs, negated});
        work.push_back({b.lhs, negated});
        continue;
      }
      auto inv = inverse.find(b.op);
      if (inv != inverse.end()) {
        BinaryOp op = negated ? inv->second : b.op;
        Expr x = Binary::make(op, b.lhs, b.rhs);
        if (op == BinaryOp::Ne && b.lhs->kind == ExprKind::Var &&
            as<Var>(b.lhs).name.rfind("it", 0) == 0 && constantValue(b.rhs) == 0)
          x = Binary::make(BinaryOp::Gt, b.lhs, b.rhs);
        out.push_back(x);
        continue;
      }
    }
    out.push_back(negated ? Unary::make(UnaryOp::Not, e) : e);
  }
  return out;
}

} // namespace tilescope::ptx
