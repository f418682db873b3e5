// Expression helpers of the lifting (LiftExprs.h).
#include "ptx/LiftExprs.h"

#include "ir/ConcreteEval.h"
#include "ptx/Values.h"

#include <algorithm>
#include <map>
#include <string>

namespace tilescope::ptx {

const Operand *addressOperand(const Instruction &in) {
  const std::string &op = in.opcode;
  size_t k = 0;
  if (op == "mbarrier") {
    // try_wait / test_wait and arrive forms that return a state or a
    // predicate first; init, inval, expect_tx and sink-less arrivals
    // (`arrive.expect_tx _, [bar], n` has the sink first) address first.
    bool first = in.operands.empty() || in.operands[0].kind == Operand::Memory;
    k = first ? 0 : 1;
  } else if (op == "ld" || op == "atom" || op == "ldmatrix") {
    k = 1;
  } else if (op == "st" || op == "red" || op == "stmatrix" || op == "cp") {
    k = 0;
  } else if (op == "tcgen05" && !in.modifiers.empty() &&
             (in.modifiers[0] == "alloc" || in.modifiers[0] == "commit")) {
    k = 0;
  } else {
    return nullptr;
  }
  if (k >= in.operands.size() || in.operands[k].kind != Operand::Memory)
    return nullptr;
  return &in.operands[k];
}

AddressParts splitAddress(const Expr &e) {
  AddressParts a;
  std::vector<Expr> work{e};
  while (!work.empty()) {
    Expr x = work.back();
    work.pop_back();
    if (!x) {
      a.ok = false;
      continue;
    }
    if (x->kind == ExprKind::Binary && as<Binary>(x).op == BinaryOp::Add) {
      work.push_back(as<Binary>(x).lhs);
      work.push_back(as<Binary>(x).rhs);
    } else if (auto k = constantValue(x)) {
      a.constant += *k;
    } else if (x->kind == ExprKind::Var && as<Var>(x).name.rfind("&", 0) == 0) {
      if (!a.symbol.empty())
        a.ok = false;
      a.symbol = as<Var>(x).name.substr(1);
    } else {
      a.rest = a.rest ? add(a.rest, x) : x;
    }
  }
  return a;
}

namespace {
// The value of `rest` at every iteration 0 .. 63 of the loops it names
// (each at the same count); nullopt when it reads anything else.
template <typename Pick> std::optional<int64_t> overIterations(const Expr &rest, Pick pick) {
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
    best = best ? pick(*best, *v) : *v;
  }
  return best;
}
} // namespace

std::optional<int64_t> minOver(const Expr &rest) {
  return overIterations(rest, [](int64_t a, int64_t b) { return std::min(a, b); });
}
std::optional<int64_t> maxOver(const Expr &rest) {
  return overIterations(rest, [](int64_t a, int64_t b) { return std::max(a, b); });
}

std::optional<int64_t> residueModulo(const Expr &e, int64_t m) {
  auto wrap = [m](int64_t v) { return ((v % m) + m) % m; };
  if (!e || m <= 0 || m > (int64_t(1) << 40) || (m & (m - 1)) != 0)
    return std::nullopt;
  if (m == 1)
    return 0;
  if (auto k = constantValue(e))
    return wrap(*k);
  if (e->kind != ExprKind::Binary)
    return std::nullopt;
  const auto &b = as<Binary>(e);
  switch (b.op) {
  case BinaryOp::Add:
  case BinaryOp::Sub: {
    auto x = residueModulo(b.lhs, m), y = residueModulo(b.rhs, m);
    if (!x || !y)
      return std::nullopt;
    return wrap(b.op == BinaryOp::Add ? *x + *y : *x - *y);
  }
  case BinaryOp::Mul: {
    for (int side = 0; side < 2; ++side) {
      const Expr &kx = side == 0 ? b.lhs : b.rhs, &z = side == 0 ? b.rhs : b.lhs;
      auto k = constantValue(kx);
      if (!k)
        continue;
      if (*k % m == 0)
        return 0;
      // k z modulo m depends on z modulo m / g, g = gcd(k, m) (a power of two).
      int64_t g = 1;
      while (g < m && (*k / g) % 2 == 0)
        g *= 2;
      auto r = residueModulo(z, m / g);
      if (!r)
        return std::nullopt;
      return wrap(wrap(*k) * *r);
    }
    auto x = residueModulo(b.lhs, m), y = residueModulo(b.rhs, m);
    if ((x && *x == 0) || (y && *y == 0))
      return 0;
    if (x && y)
      return wrap(*x * *y);
    return std::nullopt;
  }
  case BinaryOp::Mod: {
    auto c = constantValue(b.rhs);
    if (!c || *c <= 0 || (*c & (*c - 1)) != 0)
      return std::nullopt;
    // m | c: x % c = x - c q keeps x modulo m; c | m: x % c is x modulo c.
    return residueModulo(b.lhs, std::min(m, *c));
  }
  case BinaryOp::Div: {
    auto c = constantValue(b.rhs);
    if (!c || *c <= 0 || (*c & (*c - 1)) != 0 || *c > (int64_t(1) << 20))
      return std::nullopt;
    // x = q c + r with x modulo m c = rho: q modulo m = rho / c.
    auto r = residueModulo(b.lhs, m * *c);
    if (!r)
      return std::nullopt;
    return *r / *c;
  }
  default:
    return std::nullopt;
  }
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
