#include "ir/WhereFacts.h"

#include "ir/Affine.h"
#include "ir/Visitor.h"

#include <cctype>
#include <optional>

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

bool isName(const std::string &atom) {
  if (atom.empty() || !(std::isalpha((unsigned char)atom[0]) || atom[0] == '_'))
    return false;
  for (char c : atom)
    if (!(std::isalnum((unsigned char)c) || c == '_'))
      return false;
  return true;
}

// `lhs - rhs` in normal form, with `bound` substituted: when it is c * n + k
// for one name n and c divides k, the value -k / c the fact forces on n
// (`C - 1024 == 0`, `2 * C == 2048`, `C * 1 == 1024`).
std::optional<std::pair<std::string, int64_t>>
linearValue(const Binary &eq, const std::map<std::string, Expr> &bound) {
  Affine d = Affine::of(substitute(eq.lhs, bound)) - Affine::of(substitute(eq.rhs, bound));
  if (d.terms.size() != 1)
    return std::nullopt;
  const auto &[atom, c] = *d.terms.begin();
  if (!isName(atom) || c == 0 || d.constant % c != 0)
    return std::nullopt;
  return std::pair{atom, -d.constant / c};
}

// A constant bound on a name: `C >= 1024` gives (C, 1024, lower), `C < 1025`
// (C, 1024, upper), either way round.
struct Bound {
  std::string name;
  int64_t value = 0;
  bool lower = false;
};

std::optional<Bound> constantBound(const Binary &b, const std::map<std::string, Expr> &bound) {
  BinaryOp op = b.op;
  Expr name = b.lhs, value = b.rhs;
  if (name->kind != ExprKind::Var) {
    std::swap(name, value);
    // Mirror the comparison: `1024 <= C` is `C >= 1024`.
    op = op == BinaryOp::Lt   ? BinaryOp::Gt
         : op == BinaryOp::Le ? BinaryOp::Ge
         : op == BinaryOp::Gt ? BinaryOp::Lt
                              : BinaryOp::Le;
  }
  if (name->kind != ExprKind::Var)
    return std::nullopt;
  Affine v = Affine::of(substitute(value, bound));
  if (!v.isConstant())
    return std::nullopt;
  switch (op) {
  case BinaryOp::Ge:
    return Bound{as<Var>(name).name, v.constant, true};
  case BinaryOp::Gt:
    return Bound{as<Var>(name).name, v.constant + 1, true};
  case BinaryOp::Le:
    return Bound{as<Var>(name).name, v.constant, false};
  case BinaryOp::Lt:
    return Bound{as<Var>(name).name, v.constant - 1, false};
  default:
    return std::nullopt;
  }
}
} // namespace

std::map<std::string, Expr> whereEqualities(const std::vector<Expr> &constraints) {
  std::vector<Expr> facts;
  for (const Expr &c : constraints)
    conjuncts(c, facts);
  std::map<std::string, Expr> bound;
  auto bind = [&](const std::string &n, Expr v) {
    // Earlier bindings that mention n now refer to v.
    std::map<std::string, Expr> one = {{n, v}};
    for (auto &[other, e] : bound)
      e = substitute(e, one);
    bound.emplace(n, std::move(v));
  };
  // Constant bounds that meet (`C >= 1024, C <= 1024`) are an equality too.
  std::map<std::string, std::pair<std::optional<int64_t>, std::optional<int64_t>>> bounds;
  for (const Expr &f : facts) {
    if (f->kind != ExprKind::Binary)
      continue;
    const auto &b = as<Binary>(f);
    if (b.op != BinaryOp::Ge && b.op != BinaryOp::Gt && b.op != BinaryOp::Le &&
        b.op != BinaryOp::Lt)
      continue;
    if (auto c = constantBound(b, {})) {
      auto &[lo, hi] = bounds[c->name];
      if (c->lower)
        lo = lo ? std::max(*lo, c->value) : c->value;
      else
        hi = hi ? std::min(*hi, c->value) : c->value;
    }
  }
  for (const auto &[n, range] : bounds)
    if (range.first && range.second && *range.first == *range.second && !bound.count(n))
      bind(n, IntImm::make(*range.first));
  for (const Expr &f : facts) {
    if (f->kind != ExprKind::Binary || as<Binary>(f).op != BinaryOp::Eq)
      continue;
    const auto &eq = as<Binary>(f);
    if (eq.lhs->kind != ExprKind::Var && eq.rhs->kind != ExprKind::Var) {
      if (auto v = linearValue(eq, bound); v && !bound.count(v->first))
        bind(v->first, IntImm::make(v->second));
      continue;
    }
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
      bind(n, v);
      break;
    }
  }
  return bound;
}

} // namespace tilescope
