#include "verifier/DivisionAbstraction.h"

namespace tilescope::detail {

DivisionAbstraction::DivisionAbstraction(z3::context &ctx, bool uninterpretedProducts)
    : ctx_(ctx), quotient_(ctx.function("quot!", ctx.int_sort(), ctx.int_sort(), ctx.int_sort())),
      remainder_(ctx.function("rem!", ctx.int_sort(), ctx.int_sort(), ctx.int_sort())),
      definitions_(ctx) {
  if (uninterpretedProducts)
    products_.emplace(ctx_.function("product!", ctx_.int_sort(), ctx_.int_sort(), ctx_.int_sort()));
}

z3::expr DivisionAbstraction::product(const z3::expr &a, const z3::expr &b) {
  return products_ ? (*products_)(a, b) : a * b;
}

z3::expr DivisionAbstraction::rewrite(const z3::expr &e) {
  if (!e.is_app())
    return e;
  if (auto it = done_.find(e.id()); it != done_.end())
    return it->second.second;
  z3::expr_vector args(ctx_);
  for (unsigned k = 0; k < e.num_args(); ++k)
    args.push_back(rewrite(e.arg(k)));
  Z3_decl_kind kind = e.decl().decl_kind();
  z3::expr out = e;
  if ((kind == Z3_OP_IDIV || kind == Z3_OP_MOD) && !args[1].is_numeral()) {
    z3::expr x = args[0], d = args[1];
    auto key = std::make_pair(x.id(), d.id());
    auto it = quotients_.find(key);
    if (it == quotients_.end()) {
      z3::expr q = quotient_(x, d), r = remainder_(x, d);
      z3::expr zero = ctx_.int_val(0);
      definitions_.push_back(z3::implies(d != zero, x == product(q, d) + r && r >= zero &&
                                                        r < z3::ite(d > zero, d, -d)));
      it = quotients_.emplace(key, std::make_pair(q, r)).first;
    }
    out = kind == Z3_OP_IDIV ? it->second.first : it->second.second;
  } else if (kind == Z3_OP_MUL && products_ && args.size() == 2 && !args[0].is_numeral() &&
             !args[1].is_numeral()) {
    out = (*products_)(args[0], args[1]);
  } else if (e.num_args() > 0) {
    out = e.decl()(args);
  }
  done_.emplace(e.id(), std::make_pair(e, out));
  return out;
}

} // namespace tilescope::detail
