#include "ir/WhereFacts.h"

#include "ir/Affine.h"
#include "ir/Printer.h"
#include "ir/Stmt.h"
#include "ir/Visitor.h"

#include <cctype>
#include <cmath>
#include <numeric>
#include <optional>

#include <fmt/format.h>

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

// c * n^k: a product of one name with itself and constants.
struct Power {
  std::string name; // empty: a constant
  int power = 0;
  int64_t coefficient = 1;
};

std::optional<Power> powerOf(const Expr &e) {
  if (auto v = constantValue(e))
    return Power{"", 0, *v};
  if (e->kind == ExprKind::Var)
    return Power{as<Var>(e).name, 1, 1};
  if (e->kind == ExprKind::Unary && as<Unary>(e).op == UnaryOp::Neg) {
    auto p = powerOf(as<Unary>(e).operand);
    if (!p || p->coefficient == INT64_MIN)
      return std::nullopt;
    p->coefficient = -p->coefficient;
    return p;
  }
  if (e->kind != ExprKind::Binary || as<Binary>(e).op != BinaryOp::Mul)
    return std::nullopt;
  auto l = powerOf(as<Binary>(e).lhs), r = powerOf(as<Binary>(e).rhs);
  if (!l || !r || (!l->name.empty() && !r->name.empty() && l->name != r->name))
    return std::nullopt;
  Power out{l->name.empty() ? r->name : l->name, l->power + r->power, 1};
  if (out.power > 62 || __builtin_mul_overflow(l->coefficient, r->coefficient, &out.coefficient))
    return std::nullopt;
  return out;
}

// x^k, or nothing past int64_t.
std::optional<int64_t> checkedPower(int64_t x, int k) {
  int64_t out = 1;
  for (int i = 0; i < k; ++i)
    if (__builtin_mul_overflow(out, x, &out))
      return std::nullopt;
  return out;
}

// `c * n^k == v` (either way round, k >= 2) with its one integer root for n:
// `C * C == 1048576` gives (C, 1024) when C is non-negative (an even power
// has the roots r and -r); an odd power has one root whatever the sign.
std::optional<std::pair<std::string, int64_t>>
powerValue(const Binary &eq, const std::map<std::string, Expr> &bound,
           const std::set<std::string> &nonNegative) {
  auto l = powerOf(substitute(eq.lhs, bound)), r = powerOf(substitute(eq.rhs, bound));
  if (!l || !r)
    return std::nullopt;
  if (l->name.empty())
    std::swap(l, r);
  if (l->name.empty() || !r->name.empty() || l->power < 2 || l->coefficient == 0 ||
      r->coefficient % l->coefficient != 0)
    return std::nullopt;
  int64_t w = r->coefficient / l->coefficient;
  bool even = l->power % 2 == 0;
  if (w < 0 && even)
    return std::nullopt;
  if (even && w != 0 && !nonNegative.count(l->name))
    return std::nullopt;              // r and -r
  int64_t magnitude = w < 0 ? -w : w; // w > INT64_MIN: |coefficient| >= 1 divides it
  auto guess = int64_t(std::llround(std::pow(double(magnitude), 1.0 / l->power)));
  for (int64_t root = std::max<int64_t>(0, guess - 2); root <= guess + 2; ++root)
    if (auto p = checkedPower(root, l->power); p && *p == magnitude)
      return std::pair{l->name, w < 0 ? -root : root};
  return std::nullopt;
}
} // namespace

std::map<std::string, Expr> whereEqualities(const std::vector<Expr> &constraints,
                                            const std::set<std::string> &nonNegative) {
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
      else if (auto p = powerValue(eq, bound, nonNegative); p && !bound.count(p->first))
        bind(p->first, IntImm::make(p->second));
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

namespace {

// `n % d == 0` (either way round) with d > 0: (n, d).
std::optional<std::pair<std::string, int64_t>> divisibility(const Binary &eq) {
  Expr mod = eq.lhs, zero = eq.rhs;
  if (mod->kind != ExprKind::Binary)
    std::swap(mod, zero);
  if (constantValue(zero) != 0 || mod->kind != ExprKind::Binary ||
      as<Binary>(mod).op != BinaryOp::Mod || as<Binary>(mod).lhs->kind != ExprKind::Var)
    return std::nullopt;
  auto d = constantValue(as<Binary>(mod).rhs);
  if (!d || *d < 1)
    return std::nullopt;
  return std::pair{as<Var>(as<Binary>(mod).lhs).name, *d};
}

// The atom standing for name / d, for a name that is a multiple of d.
std::string quotientAtom(const std::string &name, int64_t d) {
  return fmt::format("{} / {}", name, d);
}

void addScaled(Affine &acc, const Affine &x, int64_t scale, bool &ok) {
  int64_t t = 0;
  if (__builtin_mul_overflow(scale, x.constant, &t) ||
      __builtin_add_overflow(acc.constant, t, &acc.constant))
    ok = false;
  for (const auto &[atom, c] : x.terms) {
    int64_t &slot = acc.terms[atom];
    if (__builtin_mul_overflow(scale, c, &t) || __builtin_add_overflow(slot, t, &slot))
      ok = false;
    if (slot == 0)
      acc.terms.erase(atom);
  }
}

// Affine::of, with each name of `multiples` read as d * (name / d) and exact
// divisions and remainders by constants cancelled. `ok` is cleared on
// overflow (the caller then falls back to Affine::of).
Affine withMultiples(const Expr &e, const std::map<std::string, int64_t> &multiples, bool &ok) {
  auto atom = [](const std::string &text) {
    Affine a;
    a.terms[text] = 1;
    return a;
  };
  if (auto v = constantValue(e))
    return Affine::constantOf(*v);
  if (e->kind == ExprKind::Var) {
    auto it = multiples.find(as<Var>(e).name);
    if (it == multiples.end() || it->second == 1)
      return atom(as<Var>(e).name);
    Affine a;
    a.terms[quotientAtom(it->first, it->second)] = it->second;
    return a;
  }
  if (e->kind == ExprKind::Unary && as<Unary>(e).op == UnaryOp::Neg) {
    Affine r;
    addScaled(r, withMultiples(as<Unary>(e).operand, multiples, ok), -1, ok);
    return r;
  }
  if (e->kind == ExprKind::Binary) {
    const auto &b = as<Binary>(e);
    if (b.op == BinaryOp::Add || b.op == BinaryOp::Sub) {
      Affine r = withMultiples(b.lhs, multiples, ok);
      addScaled(r, withMultiples(b.rhs, multiples, ok), b.op == BinaryOp::Add ? 1 : -1, ok);
      return r;
    }
    if (b.op == BinaryOp::Mul) {
      Affine x = withMultiples(b.lhs, multiples, ok), y = withMultiples(b.rhs, multiples, ok);
      if (x.isConstant() || y.isConstant()) {
        Affine r;
        addScaled(r, x.isConstant() ? y : x, x.isConstant() ? x.constant : y.constant, ok);
        return r;
      }
    }
    auto q = constantValue(b.rhs);
    if ((b.op == BinaryOp::Div || b.op == BinaryOp::Mod) && q && *q > 0) {
      // Exact: every coefficient and the constant are multiples of q, so the
      // quotient has no remainder to round (whatever the signs).
      Affine x = withMultiples(b.lhs, multiples, ok);
      bool exact = x.constant % *q == 0;
      for (const auto &[a, c] : x.terms)
        exact = exact && c % *q == 0;
      if (exact) {
        if (b.op == BinaryOp::Mod)
          return Affine::constantOf(0);
        Affine r{x.constant / *q, {}};
        for (const auto &[a, c] : x.terms)
          r.terms[a] = c / *q;
        return r;
      }
    }
  }
  return atom(print(e));
}

} // namespace

Affine WhereFacts::affine(const Expr &e) const {
  Expr under = equal.empty() ? e : substitute(e, equal);
  if (multipleOf.empty())
    return Affine::of(under);
  bool ok = true;
  Affine out = withMultiples(under, multipleOf, ok);
  if (!ok)
    return Affine::of(under);
  // Back to the name where the quotient's coefficient allows it (c * (C /
  // d) is c / d * C when d divides c), so a `[C]` still prints as C. The
  // name itself is never an atom here, so this is one-to-one.
  for (const auto &[name, d] : multipleOf) {
    auto it = out.terms.find(quotientAtom(name, d));
    if (it == out.terms.end() || it->second % d != 0)
      continue;
    int64_t c = it->second / d;
    out.terms.erase(it);
    out.terms[name] = c;
  }
  return out;
}

WhereFacts whereFacts(const Kernel &kernel) {
  std::set<std::string> dims;
  for (const Param &p : kernel.params)
    if (p.isTensor)
      for (const Expr &d : p.shape)
        if (d->kind == ExprKind::Var)
          dims.insert(as<Var>(d).name);
  WhereFacts out;
  out.equal = whereEqualities(kernel.constraints, dims);
  std::vector<Expr> facts;
  for (const Expr &c : kernel.constraints)
    conjuncts(c, facts);
  for (const Expr &f : facts) {
    if (f->kind != ExprKind::Binary || as<Binary>(f).op != BinaryOp::Eq)
      continue;
    auto d = divisibility(as<Binary>(f));
    if (!d || out.equal.count(d->first))
      continue;
    int64_t &m = out.multipleOf.emplace(d->first, 1).first->second;
    // The lcm of every divisor stated (a name that is a multiple of 64 and
    // of 96 is a multiple of 192); past int64_t, the first alone.
    int64_t g = std::gcd(m, d->second), l = 0;
    if (!__builtin_mul_overflow(m / g, d->second, &l))
      m = l;
  }
  return out;
}

void splitConjuncts(const Expr &e, std::vector<Expr> &out) {
  if (e->kind == ExprKind::Binary && as<Binary>(e).op == BinaryOp::And) {
    splitConjuncts(as<Binary>(e).lhs, out);
    splitConjuncts(as<Binary>(e).rhs, out);
  } else {
    out.push_back(e);
  }
}

} // namespace tilescope
