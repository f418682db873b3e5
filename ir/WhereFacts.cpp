#include "ir/WhereFacts.h"

#include "ir/Visitor.h"

namespace tilescope {

namespace {
void conjuncts(const Expr &e, std::vector<Expr> &out) {
  if (e->kind == ExprKind::Binary && as<Binary>(e).op == BinaryOp::And) {
    conjuncts(as<Binary>(e).lhs, out);
    conjuncts(as<Binary>(e).rhs, out);
    return;
  }
  out.push_back(e);
}
} // namespace

std::map<std::string, Expr> whereEqualities(const std::vector<Expr> &constraints) {
  std::vector<Expr> facts;
  for (const Expr &c : constraints)
    conjuncts(c, facts);
  std::map<std::string, Expr> bound;
  for (const Expr &f : facts) {
    if (f->kind != ExprKind::Binary || as<Binary>(f).op != BinaryOp::Eq)
      continue;
    const auto &eq = as<Binary>(f);
    // Bind the side that is a name (the left one when both are).
    for (const auto &[name, value] : {std::pair{eq.lhs, eq.rhs}, std::pair{eq.rhs, eq.lhs}}) {
      if (name->kind != ExprKind::Var)
        continue;
      const std::string &n = as<Var>(name).name;
      if (bound.count(n))
        continue;
      Expr v = substitute(value, bound);
      if (namesUsed(v).count(n))
        continue; // `N == N`, or a cycle through earlier facts
      // Earlier bindings that mention n now refer to v.
      std::map<std::string, Expr> one = {{n, v}};
      for (auto &[other, e] : bound)
        e = substitute(e, one);
      bound.emplace(n, v);
      break;
    }
  }
  return bound;
}

} // namespace tilescope
