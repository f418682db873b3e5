#include "verifier/BoundsIntervals.h"

#include "ir/DeviceScale.h"
#include "ir/ThreadIndex.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

namespace tilescope {
namespace {

using Wide = __int128;

// A bound of an interval; nothing: unbounded on that side.
using Bound = std::optional<Wide>;

struct Interval {
  Bound lo, hi;
};

// Values past int64 are taken as unbounded: the bounds compared with them
// are int64 expressions, and a wrap-around must not make a bound look small.
Bound clamp(Bound b) {
  if (b && (*b > std::numeric_limits<int64_t>::max() || *b < std::numeric_limits<int64_t>::min()))
    return std::nullopt;
  return b;
}

Interval add(const Interval &a, const Interval &b) {
  return {a.lo && b.lo ? clamp(*a.lo + *b.lo) : Bound{},
          a.hi && b.hi ? clamp(*a.hi + *b.hi) : Bound{}};
}

Interval negate(const Interval &a) {
  return {a.hi ? Bound(-*a.hi) : Bound{}, a.lo ? Bound(-*a.lo) : Bound{}};
}

// Products of the ends; an unbounded end makes a side unbounded unless the
// other factor is 0 throughout.
std::optional<Interval> multiply(const Interval &a, const Interval &b) {
  auto zero = [](const Interval &x) { return x.lo && x.hi && *x.lo == 0 && *x.hi == 0; };
  if (zero(a) || zero(b))
    return Interval{Wide(0), Wide(0)};
  // Only finite or sign-definite cases: enough for indices (constants times
  // loop variables and thread indices).
  auto nonNeg = [](const Interval &x) { return x.lo && *x.lo >= 0; };
  if (a.lo && a.hi && b.lo && b.hi) {
    Wide c[] = {*a.lo * *b.lo, *a.lo * *b.hi, *a.hi * *b.lo, *a.hi * *b.hi};
    return Interval{clamp(*std::min_element(c, c + 4)), clamp(*std::max_element(c, c + 4))};
  }
  if (nonNeg(a) && nonNeg(b))
    return Interval{clamp(*a.lo * *b.lo), a.hi && b.hi ? clamp(*a.hi * *b.hi) : Bound{}};
  return std::nullopt;
}

// Truncating quotient of the ends by a constant: monotone in the dividend.
Interval divide(const Interval &a, int64_t c) {
  auto q = [c](Bound x) -> Bound { return x ? Bound(*x / c) : Bound{}; };
  return c > 0 ? Interval{q(a.lo), q(a.hi)} : Interval{q(a.hi), q(a.lo)};
}

// Truncating remainder by a divisor of magnitude at most m (m >= 1): the
// dividend's sign, magnitude below m and at most the dividend's.
Interval remainder(const Interval &a, Bound m) {
  Bound top = m ? Bound(*m - 1) : Bound{};
  auto lower = [](Bound x, Bound y) -> Bound {
    if (!x)
      return y;
    if (!y)
      return x;
    return std::min(*x, *y);
  };
  if (a.lo && *a.lo >= 0)
    return {Wide(0), lower(a.hi, top)};
  if (a.hi && *a.hi <= 0)
    return {a.lo && top ? Bound(std::max(*a.lo, -*top)) : (top ? Bound(-*top) : a.lo), Wide(0)};
  return {top ? Bound(-*top) : Bound{}, top};
}

class Ranges {
public:
  Ranges(const BarrierSkeleton &sk, const SyncEvent &e) : sk_(sk), e_(e) {
    for (int l : sk.loopChain(e))
      chain_.push_back(l);
  }

  std::optional<Interval> of(const Expr &x) {
    switch (x->kind) {
    case ExprKind::IntImm:
      return Interval{Wide(as<IntImm>(x).value), Wide(as<IntImm>(x).value)};
    case ExprKind::Var:
      return ofName(as<Var>(x).name);
    case ExprKind::Builtin:
      return ofBuiltin(as<Builtin>(x).which);
    case ExprKind::Unary: {
      const Unary &u = as<Unary>(x);
      if (u.op != UnaryOp::Neg)
        return std::nullopt;
      auto v = of(u.operand);
      return v ? std::optional<Interval>(negate(*v)) : std::nullopt;
    }
    case ExprKind::Binary:
      return ofBinary(as<Binary>(x));
    default:
      return std::nullopt;
    }
  }

private:
  std::optional<Interval> ofBinary(const Binary &b) {
    auto l = of(b.lhs);
    if (!l)
      return std::nullopt;
    if (b.op == BinaryOp::Div || b.op == BinaryOp::Mod) {
      if (auto c = constantValue(b.rhs)) {
        if (*c == 0)
          return std::nullopt;
        if (b.op == BinaryOp::Div)
          return divide(*l, *c);
        return remainder(*l, Wide(*c < 0 ? -Wide(*c) : Wide(*c)));
      }
      // `x % d` for an unknown d >= 1 and x >= 0: 0 .. min(x, d - 1).
      auto d = of(b.rhs);
      if (b.op == BinaryOp::Mod && d && d->lo && *d->lo >= 1 && l->lo && *l->lo >= 0)
        return remainder(*l, d->hi);
      return std::nullopt;
    }
    auto r = of(b.rhs);
    if (!r)
      return std::nullopt;
    switch (b.op) {
    case BinaryOp::Add:
      return add(*l, *r);
    case BinaryOp::Sub:
      return add(*l, negate(*r));
    case BinaryOp::Mul:
      return multiply(*l, *r);
    default:
      return std::nullopt;
    }
  }

  std::optional<Interval> ofName(const std::string &name) {
    // The innermost enclosing loop of that name binds it.
    for (auto it = chain_.rbegin(); it != chain_.rend(); ++it) {
      const SkeletonLoop &loop = sk_.loops[size_t(*it)];
      if (loop.var != name)
        continue;
      if (auto cached = loops_.find(*it); cached != loops_.end())
        return cached->second;
      // Its value is in [begin, end): outer loops only in its bounds.
      std::vector<int> saved = chain_;
      chain_.assign(chain_.begin(), std::find(chain_.begin(), chain_.end(), *it));
      auto begin = of(loop.begin), end = of(loop.end);
      chain_ = saved;
      if (!begin || !end)
        return std::nullopt;
      Interval v{begin->lo, end->hi ? clamp(*end->hi - 1) : Bound{}};
      loops_[*it] = v;
      return v;
    }
    if (std::find(sk_.symbols.begin(), sk_.symbols.end(), name) != sk_.symbols.end())
      return Interval{Wide(leastValueOf(name)), Bound{}};
    return std::nullopt;
  }

  std::optional<Interval> ofBuiltin(BuiltinKind b) {
    if (auto map = threadIndexMap(b)) {
      Bound lo, hi;
      for (int64_t t = 0; t < e_.threads.launchThreads(); ++t)
        if (e_.threads.contains(t)) {
          Wide v = threadIndexValue(*map, t);
          lo = lo ? std::min(*lo, v) : v;
          hi = hi ? std::max(*hi, v) : v;
        }
      if (!lo)
        return std::nullopt;
      return Interval{lo, hi};
    }
    const BuiltinKind block[] = {BuiltinKind::blockIdx_x, BuiltinKind::blockIdx_y,
                                 BuiltinKind::blockIdx_z};
    const BuiltinKind rank[] = {BuiltinKind::clusterCtaIdx_x, BuiltinKind::clusterCtaIdx_y,
                                BuiltinKind::clusterCtaIdx_z};
    for (size_t d = 0; d < 3; ++d) {
      if (b == block[d]) {
        if (d >= sk_.grid.size())
          return Interval{Wide(0), Wide(0)};
        auto g = of(sk_.grid[d]);
        return Interval{Wide(0), g && g->hi ? clamp(*g->hi - 1) : Bound{}};
      }
      if (b == rank[d]) {
        auto shape = clusterShapeOf(sk_);
        if (!shape)
          return std::nullopt;
        Wide top = int(d) == shape->axis ? shape->extent - 1 : 0;
        return Interval{Wide(0), top};
      }
    }
    return std::nullopt;
  }

  const BarrierSkeleton &sk_;
  const SyncEvent &e_;
  std::vector<int> chain_; // the loops whose variables are in scope
  std::map<int, Interval> loops_;
};

} // namespace

bool boundsByIntervals(const BarrierSkeleton &skeleton, const SyncEvent &e, const MemoryAccess &a,
                       bool clipped) {
  auto buf = skeleton.buffers.find(a.buffer);
  if (buf == skeleton.buffers.end() || buf->second.shape.size() != a.region.size())
    return false;
  Ranges ranges(skeleton, e);
  for (size_t d = 0; d < a.region.size(); ++d) {
    auto lo = ranges.of(a.region[d].begin), n = ranges.of(a.region[d].extent),
         extent = ranges.of(buf->second.shape[d]);
    if (!lo || !n || !extent || !lo->lo || !n->lo || !extent->lo || *lo->lo < 0 || *n->lo < 1)
      return false;
    // The largest index reached against the smallest extent admitted.
    Interval last = clipped ? *lo : add(*lo, add(*n, Interval{Wide(-1), Wide(-1)}));
    if (!last.hi || *last.hi >= *extent->lo)
      return false;
  }
  return true;
}

} // namespace tilescope
