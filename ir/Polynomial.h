// Integer polynomials over opaque atoms (names, or the text of pieces kept
// whole): beside ir/Affine.h's affine normal form, for the products that
// index arithmetic builds (`(k * 64 + col) * K`). The emitter's divisibility
// analysis (codegen/EmitExpressions.cpp, KernelEmitter::poly / multipleOf)
// reads a polynomial's terms to prove that consecutive iterations touch
// consecutive, aligned elements.
//
// Depends on nothing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tilescope {

// A product of atoms (sorted, with repeats) and a polynomial: monomials
// with their non-zero coefficients.
using Monomial = std::vector<std::string>;
using Poly = std::map<Monomial, int64_t>;

inline Poly polyConst(int64_t v) {
  return v ? Poly{{{}, v}} : Poly{};
}
// a + sign * b.
inline Poly polyAdd(const Poly &a, const Poly &b, int64_t sign = 1) {
  Poly r = a;
  for (auto &[m, c] : b)
    if ((r[m] += sign * c) == 0)
      r.erase(m);
  return r;
}
inline Poly polyMul(const Poly &a, const Poly &b) {
  Poly r;
  for (auto &[ma, ca] : a)
    for (auto &[mb, cb] : b) {
      Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      if ((r[m] += ca * cb) == 0)
        r.erase(m);
    }
  return r;
}

} // namespace tilescope
