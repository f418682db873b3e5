// Integer expressions in a normal form: a constant plus integer multiples of
// atoms (names, or non-linear subexpressions kept whole). Enough to see that
// `m0 + 128 - m0` is 128 and that `[K / 64 * 64]` equals `[K / 64 * 64]`, which
// is what shape checks of regions need. Not a decision procedure.
#pragma once

#include "ir/Expr.h"

#include <map>
#include <string>

namespace tilescope {

struct Affine {
  int64_t constant = 0;
  std::map<std::string, int64_t> terms; // atom text -> coefficient, no zeros

  static Affine of(const Expr &e);
  static Affine constantOf(int64_t v) { return Affine{v, {}}; }
  bool isConstant() const { return terms.empty(); }
  Affine operator-(const Affine &o) const;
  bool operator==(const Affine &o) const = default;
  std::string str() const;
};

} // namespace tilescope
