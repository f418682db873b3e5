#include "reward/SizeRanges.h"

#include "ir/ConcreteEval.h"
#include "ir/DeviceScale.h"
#include "ir/Printer.h"
#include "verifier/FallbackSizes.h"

#include <algorithm>
#include <cstdlib>
#include <functional>

namespace tilescope::reward_detail {

namespace {

bool nonNegative(const Range &r) {
  return r.lo && *r.lo >= 0;
}

} // namespace

// The least value of each symbol the where clause gives by a conjunct alone:
// `X > c`, `X >= c`, and `X % c == 0` (with X >= 1: X >= c).
LeastValues leastValues(const Kernel &kernel) {
  LeastValues out;
  auto raise = [&](const Expr &e, int64_t v) {
    if (e->kind != ExprKind::Var)
      return;
    const std::string &name = as<Var>(e).name;
    int64_t least = std::max(v, leastValueOf(name));
    auto [it, fresh] = out.emplace(name, least);
    if (!fresh)
      it->second = std::max(it->second, least);
  };
  for (const Expr &c : kernel.constraints) {
    if (c->kind != ExprKind::Binary)
      continue;
    const Binary &b = as<Binary>(c);
    std::optional<int64_t> rhs = constantValue(b.rhs);
    if (!rhs)
      continue;
    if (b.op == BinaryOp::Gt)
      raise(b.lhs, *rhs + 1);
    else if (b.op == BinaryOp::Ge)
      raise(b.lhs, *rhs);
    else if (b.op == BinaryOp::Eq && *rhs == 0 && b.lhs->kind == ExprKind::Binary &&
             as<Binary>(b.lhs).op == BinaryOp::Mod &&
             constantValue(as<Binary>(b.lhs).rhs).value_or(0) > 0 &&
             leastValueOf(print(as<Binary>(b.lhs).lhs)) >= 1)
      raise(as<Binary>(b.lhs).lhs, *constantValue(as<Binary>(b.lhs).rhs));
  }
  return out;
}

// The range of `e` (nothing: not an integer the rules below bound).
std::optional<Range> rangeOf(const Expr &e, const LeastValues &least) {
  using R = std::optional<Range>;
  switch (e->kind) {
  case ExprKind::IntImm:
    return Range{as<IntImm>(e).value, as<IntImm>(e).value};
  case ExprKind::Var:
    if (auto it = least.find(as<Var>(e).name); it != least.end())
      return Range{it->second, std::nullopt};
    return Range{leastValueOf(as<Var>(e).name), std::nullopt};
  case ExprKind::Builtin:
    return Range{0, std::nullopt};
  case ExprKind::Binary: {
    const Binary &b = as<Binary>(e);
    R l = rangeOf(b.lhs, least), r = rangeOf(b.rhs, least);
    if (!l || !r)
      return std::nullopt;
    auto both = [](std::optional<int64_t> x, std::optional<int64_t> y, auto f) {
      return x && y ? std::optional<int64_t>(f(*x, *y)) : std::nullopt;
    };
    std::optional<int64_t> c = r->lo == r->hi ? r->lo : std::nullopt;
    // Bounds stay far from overflow: sizes in a kernel are small constants.
    auto small = [](const Range &x) {
      return (!x.lo || std::abs(*x.lo) < (int64_t{1} << 30)) &&
             (!x.hi || std::abs(*x.hi) < (int64_t{1} << 30));
    };
    if (!small(*l) || !small(*r))
      return std::nullopt;
    switch (b.op) {
    case BinaryOp::Add:
      return Range{both(l->lo, r->lo, std::plus<>()), both(l->hi, r->hi, std::plus<>())};
    case BinaryOp::Sub:
      return Range{both(l->lo, r->hi, std::minus<>()), both(l->hi, r->lo, std::minus<>())};
    case BinaryOp::Mul:
      if (nonNegative(*l) && nonNegative(*r))
        return Range{*l->lo * *r->lo, both(l->hi, r->hi, std::multiplies<>())};
      return std::nullopt;
    case BinaryOp::Div:
      if (nonNegative(*l) && c && *c > 0)
        return Range{*l->lo / *c, l->hi ? std::optional<int64_t>(*l->hi / *c) : std::nullopt};
      return std::nullopt;
    case BinaryOp::Mod:
      if (nonNegative(*l) && c && *c > 0)
        return Range{0, *c - 1};
      return std::nullopt;
    default:
      return std::nullopt;
    }
  }
  default:
    return std::nullopt;
  }
}

// Whether `cond` is false at every size by the ranges alone (`(K + 63) / 64
// == 0` where K >= 1): an outcome no size takes, without asking Z3.
bool falseByRanges(const Expr &cond, const LeastValues &least) {
  if (cond->kind != ExprKind::Binary)
    return false;
  const Binary &b = as<Binary>(cond);
  auto l = rangeOf(b.lhs, least), r = rangeOf(b.rhs, least);
  if (!l || !r)
    return false;
  auto below = [](const Range &x, const Range &y) { return x.hi && y.lo && *x.hi < *y.lo; };
  switch (b.op) {
  case BinaryOp::Eq:
    return below(*l, *r) || below(*r, *l);
  case BinaryOp::Lt:
    return l->lo && r->hi && *l->lo >= *r->hi;
  case BinaryOp::Gt:
    return r->lo && l->hi && *r->lo >= *l->hi;
  default:
    return false;
  }
}


} // namespace tilescope::reward_detail
