#include "ir/Affine.h"

#include "ir/Printer.h"

namespace tilescope {

namespace {
void addInto(Affine &acc, const Affine &x, int64_t scale) {
  acc.constant += scale * x.constant;
  for (const auto &[atom, c] : x.terms) {
    int64_t &slot = acc.terms[atom];
    slot += scale * c;
    if (slot == 0)
      acc.terms.erase(atom);
  }
}
Affine atom(const Expr &e) {
  Affine a;
  a.terms[print(e)] = 1;
  return a;
}
} // namespace

Affine Affine::of(const Expr &e) {
  if (auto v = constantValue(e))
    return constantOf(*v);
  if (e->kind == ExprKind::Unary && as<Unary>(e).op == UnaryOp::Neg) {
    Affine r;
    addInto(r, of(as<Unary>(e).operand), -1);
    return r;
  }
  if (e->kind == ExprKind::Binary) {
    const auto &b = as<Binary>(e);
    if (b.op == BinaryOp::Add || b.op == BinaryOp::Sub) {
      Affine r = of(b.lhs);
      addInto(r, of(b.rhs), b.op == BinaryOp::Add ? 1 : -1);
      return r;
    }
    if (b.op == BinaryOp::Mul) {
      Affine x = of(b.lhs), y = of(b.rhs);
      if (x.isConstant() || y.isConstant()) {
        Affine r;
        addInto(r, x.isConstant() ? y : x, x.isConstant() ? x.constant : y.constant);
        return r;
      }
    }
  }
  return atom(e);
}

Affine Affine::operator-(const Affine &o) const {
  Affine r = *this;
  addInto(r, o, -1);
  return r;
}

std::string Affine::str() const {
  std::string out;
  for (const auto &[a, c] : terms) {
    // A composite atom is parenthesised under a coefficient: 1024 * (C / 1024).
    std::string atom = c != 1 && a.find(' ') != std::string::npos ? "(" + a + ")" : a;
    std::string term = c == 1 ? a : c == -1 ? "-" + atom : std::to_string(c) + " * " + atom;
    if (out.empty())
      out = term;
    else if (term[0] == '-')
      out += " - " + term.substr(1);
    else
      out += " + " + term;
  }
  if (out.empty())
    return std::to_string(constant);
  if (constant > 0)
    out += " + " + std::to_string(constant);
  else if (constant < 0)
    out += " - " + std::to_string(-constant);
  return out;
}

} // namespace tilescope
