#include "proof/DivisionAbstraction.h"

#include "proof/SharedContext.h"

#include <optional>

namespace tilescope::detail {

// c when `d` is a product c * e of a numeral c > 1 and another factor.
std::optional<int64_t> constantFactor(const z3::expr &d) {
  if (!d.is_app() || d.decl().decl_kind() != Z3_OP_MUL || d.num_args() != 2)
    return std::nullopt;
  for (unsigned k = 0; k < 2; ++k) {
    int64_t c = 0;
    if (d.arg(k).is_numeral_i64(c) && c > 1 && !d.arg(1 - k).is_numeral())
      return c;
  }
  return std::nullopt;
}

DivisionAbstraction::DivisionAbstraction(z3::context &ctx, bool uninterpretedProducts,
                                         bool congruences)
    : ctx_(ctx), congruences_(congruences), quotient_(ctx.function("quot!", ctx.int_sort(), ctx.int_sort(), ctx.int_sort())),
      remainder_(ctx.function("rem!", ctx.int_sort(), ctx.int_sort(), ctx.int_sort())) {
  if (uninterpretedProducts)
    products_.emplace(ctx_.function("product!", ctx_.int_sort(), ctx_.int_sort(), ctx_.int_sort()));
}

z3::expr DivisionAbstraction::product(const z3::expr &a, const z3::expr &b) {
  return products_ ? (*products_)(a, b) : a * b;
}

const DivisionAbstraction::Division &DivisionAbstraction::divide(const z3::expr &x,
                                                                 const z3::expr &d) {
  auto key = std::make_pair(x.id(), d.id());
  auto it = byOperands_.find(key);
  if (it == byOperands_.end()) {
    it = byOperands_.emplace(key, divisions_.size()).first;
    divisions_.push_back({x, d, quotient_(x, d), remainder_(x, d)});
  }
  return divisions_[it->second];
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
  // This function once started from `out = e` and assigned the rewritten
  // term: a copy for a division (no leak), a move for the others, which in
  // z3++ 4.8.12 left a reference to `e` behind. Releasing that reference
  // earlier would free terms earlier, and Z3 would number (and order) later
  // terms otherwise: one race proof of the library's grouped FP8 GEMM fell
  // off a cliff that way. So `e` keeps it until the context ends, and it is
  // released then (proof/SharedContext.h).
  if ((kind == Z3_OP_IDIV || kind == Z3_OP_MOD) && !args[1].is_numeral()) {
    // Simplified, so that `kt` and `1 * kt` divide alike.
    const Division &div = divide(args[0].simplify(), args[1].simplify());
    z3::expr out = kind == Z3_OP_IDIV ? div.q : div.r;
    done_.emplace(e.id(), std::make_pair(e, out));
    return out;
  }
  std::optional<z3::expr> built;
  if (kind == Z3_OP_MUL && products_ && args.size() == 2 && !args[0].is_numeral() &&
      !args[1].is_numeral())
    built.emplace((*products_)(args[0], args[1]));
  else if (e.num_args() > 0)
    built.emplace(e.decl()(args));
  if (built)
    keepUntilContextEnd(e);
  z3::expr out = built ? *built : e;
  done_.emplace(e.id(), std::make_pair(e, out));
  return out;
}

void DivisionAbstraction::collect(const z3::expr &e, std::set<unsigned> &visited,
                                  std::set<size_t> &used) {
  if (!e.is_app() || !visited.insert(e.id()).second)
    return;
  for (unsigned k = 0; k < e.num_args(); ++k)
    collect(e.arg(k), visited, used);
  z3::func_decl f = e.decl();
  if (!z3::eq(f, quotient_) && !z3::eq(f, remainder_))
    return;
  auto it = byOperands_.find(std::make_pair(e.arg(0).id(), e.arg(1).id()));
  if (it != byOperands_.end())
    used.insert(it->second);
}

z3::expr_vector DivisionAbstraction::definitionsFor(const z3::expr_vector &terms) {
  std::set<unsigned> visited;
  std::set<size_t> used;
  for (unsigned k = 0; k < terms.size(); ++k)
    collect(terms[int(k)], visited, used);
  z3::expr_vector out(ctx_);
  z3::expr zero = ctx_.int_val(0);
  for (size_t a : used) {
    const Division &x = divisions_[a];
    z3::expr nonZero = x.divisor != zero;
    out.push_back(z3::implies(nonZero, x.dividend == product(x.q, x.divisor) + x.r && x.r >= zero &&
                                           x.r < z3::ite(x.divisor > zero, x.divisor, -x.divisor)));
    // A divisor c * e with a constant c: x - r is a multiple of d, so of c.
    if (std::optional<int64_t> c = congruences_ ? constantFactor(x.divisor) : std::nullopt) {
      z3::expr cv = ctx_.int_val(*c);
      out.push_back(z3::implies(nonZero, z3::mod(x.dividend, cv) == z3::mod(x.r, cv)));
    }
    // Division by d is one-to-one on (quotient, remainder): equal dividends
    // have equal quotients and remainders, and back. With uninterpreted
    // products the solver could only get there through congruence and
    // theory combination, which took it from 5 ms to seconds on the same
    // race query depending on term order; stated, the step is linear.
    for (size_t b : used) {
      const Division &y = divisions_[b];
      if (b <= a || !z3::eq(x.divisor, y.divisor))
        continue;
      out.push_back(z3::implies(nonZero, (x.dividend == y.dividend) == (x.q == y.q && x.r == y.r)));
    }
  }
  return out;
}

} // namespace tilescope::detail
