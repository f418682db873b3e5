#include "proof/TruncatingDivision.h"

#include <cstdint>

namespace tilescope::detail {

bool nonNegativeByForm(const z3::expr &e, const NonNegativeConstant &constant) {
  if (e.is_numeral()) {
    int64_t v = 0;
    return e.is_numeral_i64(v) ? v >= 0 : false;
  }
  if (!e.is_app())
    return false;
  if (constant && constant(e))
    return true;
  auto all = [&](unsigned from) {
    for (unsigned i = from; i < e.num_args(); ++i)
      if (!nonNegativeByForm(e.arg(i), constant))
        return false;
    return true;
  };
  switch (e.decl().decl_kind()) {
  case Z3_OP_MOD: // Euclidean: in [0, |r|)
    return true;
  case Z3_OP_ADD:
  case Z3_OP_MUL:
  case Z3_OP_IDIV:
    return all(0);
  case Z3_OP_ITE:
    return all(1);
  default:
    return false;
  }
}

namespace {
// The adjustment from Z3's Euclidean quotient and remainder (q, m: l = r q +
// m, 0 <= m < |r|) to the truncated ones: where l < 0 and m != 0 the
// truncated remainder is m - |r| and the quotient q + sign(r); elsewhere
// they agree. Written over Z3's own q and m, so a query has no division term
// it did not have before, only the case split.
z3::expr rounds(const z3::expr &l, const z3::expr &m) {
  return l < 0 && m != 0;
}
z3::expr signOf(const z3::expr &r) {
  int64_t v = 0;
  if (r.is_numeral_i64(v))
    return r.ctx().int_val(v > 0 ? 1 : -1);
  return z3::ite(r > 0, r.ctx().int_val(1), r.ctx().int_val(-1));
}
z3::expr magnitudeOf(const z3::expr &r) {
  int64_t v = 0;
  if (r.is_numeral_i64(v) && v != INT64_MIN)
    return r.ctx().int_val(v < 0 ? -v : v);
  return z3::ite(r > 0, r, -r);
}
} // namespace

z3::expr truncatingDiv(const z3::expr &l, const z3::expr &r, const NonNegativeConstant &constant) {
  z3::expr q = l / r;
  if (nonNegativeByForm(l, constant))
    return q;
  return z3::ite(rounds(l, z3::mod(l, r)), q + signOf(r), q);
}

z3::expr truncatingRem(const z3::expr &l, const z3::expr &r, const NonNegativeConstant &constant) {
  z3::expr m = z3::mod(l, r);
  if (nonNegativeByForm(l, constant))
    return m;
  return z3::ite(rounds(l, m), m - magnitudeOf(r), m);
}

} // namespace tilescope::detail
