#include "dispatch/DispatchSupport.h"

#include "ir/Visitor.h"

#include <algorithm>
#include <map>

namespace tilescope::dispatch {

Expr lit(int64_t v) {
  return IntImm::make(v);
}

static Expr binary(BinaryOp op, Expr a, Expr b) {
  return foldConstants(Binary::make(op, std::move(a), std::move(b)));
}
Expr add(Expr a, Expr b) {
  return binary(BinaryOp::Add, std::move(a), std::move(b));
}
Expr sub(Expr a, Expr b) {
  return binary(BinaryOp::Sub, std::move(a), std::move(b));
}
Expr mul(Expr a, Expr b) {
  auto ca = constantValue(a), cb = constantValue(b);
  if ((ca && *ca == 0) || (cb && *cb == 0))
    return lit(0);
  return binary(BinaryOp::Mul, std::move(a), std::move(b));
}
Expr div(Expr a, Expr b) {
  return binary(BinaryOp::Div, std::move(a), std::move(b));
}
Expr mod(Expr a, Expr b) {
  auto cb = constantValue(b);
  if (cb && *cb == 1)
    return lit(0);
  return binary(BinaryOp::Mod, std::move(a), std::move(b));
}
Expr lt(Expr a, Expr b) {
  return Binary::make(BinaryOp::Lt, std::move(a), std::move(b));
}
Expr name(std::string n) {
  return Var::make(std::move(n));
}
Expr builtin(BuiltinKind b) {
  return Builtin::make(b);
}

Expr elementAt(const Operand &op, const std::vector<Expr> &coords) {
  std::vector<Subscript> subs;
  size_t k = 0;
  for (size_t d = 0; d < op.begin.size(); ++d) {
    Expr e = op.begin[d];
    if (op.kept[d])
      e = add(e, coords.at(k++));
    subs.push_back({Subscript::Point, e, nullptr});
  }
  return Index::make(name(op.buffer), std::move(subs));
}

Expr regionAt(const Operand &op, const std::vector<Expr> &coords,
              const std::vector<int64_t> &extents) {
  std::vector<Subscript> subs;
  size_t k = 0;
  for (size_t d = 0; d < op.begin.size(); ++d) {
    Expr e = op.begin[d];
    if (!op.kept[d]) {
      subs.push_back({Subscript::Point, e, nullptr});
      continue;
    }
    Expr start = add(e, coords.at(k));
    int64_t n = extents.at(k++);
    if (n == 0)
      subs.push_back({Subscript::Point, start, nullptr});
    else
      subs.push_back({Subscript::Extent, start, lit(n)});
  }
  return Index::make(name(op.buffer), std::move(subs));
}

Expr axisExpr(Axis a) {
  switch (a) {
  case Axis::laneid:
    return builtin(BuiltinKind::laneid);
  case Axis::warpid:
    return builtin(BuiltinKind::warpid);
  case Axis::wgid:
    return builtin(BuiltinKind::wgid);
  case Axis::tid_in_wg:
    return builtin(BuiltinKind::tid_in_wg);
  case Axis::wid_in_wg:
    return builtin(BuiltinKind::wid_in_wg);
  case Axis::tx:
    return builtin(BuiltinKind::threadIdx_x);
  default:
    return nullptr;
  }
}

std::optional<OwnerMap> ownerMap(const Layout &layout, const std::vector<int64_t> &shape,
                                 std::string *why) {
  OwnerMap map;
  map.shape = shape;
  if (layout.swizzle()) {
    *why = "a register layout cannot be swizzled";
    return std::nullopt;
  }
  // Radix of each shard iter in the flat logical index: first iter most significant.
  const auto &shard = layout.shard();
  std::vector<int64_t> radix(shard.size(), 1);
  for (size_t k = shard.size(); k-- > 1;)
    radix[k - 1] = radix[k] * shard[k].extent;
  std::map<Axis, std::vector<std::pair<int64_t, int64_t>>> spans; // axis -> (stride, extent)
  for (size_t k = 0; k < shard.size(); ++k) {
    const Iter &it = shard[k];
    if (it.extent == 1)
      continue;
    if (it.axis == Axis::m) {
      map.slotDigits.push_back({it.axis, it.extent, it.stride, radix[k]});
    } else if (isThreadAxis(it.axis) && axisExpr(it.axis)) {
      map.threadDigits.push_back({it.axis, it.extent, it.stride, radix[k]});
    } else {
      *why = "the layout places elements on axis '" + std::string(axisName(it.axis)) +
             "', which a thread cannot enumerate";
      return std::nullopt;
    }
    if (it.stride == 0) {
      *why = "a shard iter of stride 0 on '" + std::string(axisName(it.axis)) +
             "' folds several elements onto one slot";
      return std::nullopt;
    }
    spans[it.axis].push_back({it.stride, it.extent});
  }
  for (const Iter &it : layout.replica())
    if (it.extent > 1)
      spans[it.axis].push_back({it.stride, it.extent});
  for (const AxisOffset &o : layout.offset())
    if (o.value != 0) {
      *why = "offsets in a register layout are not supported by the owner loop";
      return std::nullopt;
    }
  for (auto &[axis, list] : spans) {
    std::sort(list.begin(), list.end());
    int64_t reach = 1;
    for (auto [stride, extent] : list) {
      if (stride < reach) {
        *why = "iters on '" + std::string(axisName(axis)) +
               "' overlap, so a digit cannot be read back from the axis";
        return std::nullopt;
      }
      reach = stride * (extent - 1) + reach;
      reach = std::max(reach, stride * extent);
    }
    if (axis != Axis::m)
      map.covered.push_back({axis, reach});
  }
  for (const auto &d : map.slotDigits)
    map.slots *= d.extent;
  return map;
}

static int64_t launchExtent(Axis a, ExecScope scope, int64_t scopeThreads) {
  switch (a) {
  case Axis::laneid:
    return 32;
  case Axis::tid_in_wg:
    return 128;
  case Axis::wid_in_wg:
    return 4;
  case Axis::warpid:
    return scope == ExecScope::Warpgroup ? 0 : scopeThreads / 32;
  case Axis::tx:
    return scope == ExecScope::Warpgroup ? 0 : scopeThreads;
  case Axis::wgid:
    return 0;
  default:
    return 0;
  }
}

Block ownerLoop(const OwnerMap &map, DispatchState &state,
                const std::function<Block(const std::vector<Expr> &coords)> &body,
                int64_t scopeThreads, ExecScope scope) {
  std::string j = state.fresh("j");
  Expr flat = lit(0);
  for (const auto &d : map.threadDigits)
    flat = add(flat, mul(mod(div(axisExpr(d.axis), lit(d.stride)), lit(d.extent)), lit(d.radix)));
  // Slot j enumerates the slot digits mixed-radix, the first most significant.
  int64_t weight = map.slots;
  for (const auto &d : map.slotDigits) {
    weight /= d.extent;
    flat = add(flat, mul(mod(div(name(j), lit(weight)), lit(d.extent)), lit(d.radix)));
  }
  std::vector<Expr> coords;
  // When every digit lies inside one dimension (its weights span no dimension
  // boundary), each coordinate is an affine sum of digits: codegen can then
  // prove that neighbouring slots touch neighbouring addresses.
  std::vector<int64_t> dimStride(map.shape.size(), 1);
  for (size_t d = map.shape.size(); d-- > 1;)
    dimStride[d - 1] = dimStride[d] * map.shape[d];
  auto dimOf = [&](const OwnerMap::Digit &g) -> int {
    for (size_t d = 0; d < map.shape.size(); ++d)
      if (g.radix >= dimStride[d] && g.radix * g.extent <= dimStride[d] * map.shape[d] &&
          g.radix % dimStride[d] == 0)
        return static_cast<int>(d);
    return -1;
  };
  bool aligned = true;
  for (const auto *list : {&map.threadDigits, &map.slotDigits})
    for (const auto &g : *list)
      aligned &= dimOf(g) >= 0;
  if (aligned) {
    coords.assign(map.shape.size(), lit(0));
    for (const auto &g : map.threadDigits) {
      int d = dimOf(g);
      coords[d] = add(coords[d], mul(mod(div(axisExpr(g.axis), lit(g.stride)), lit(g.extent)),
                                     lit(g.radix / dimStride[d])));
    }
    int64_t w = map.slots;
    for (const auto &g : map.slotDigits) {
      w /= g.extent;
      int d = dimOf(g);
      coords[d] = add(coords[d],
                      mul(mod(div(name(j), lit(w)), lit(g.extent)), lit(g.radix / dimStride[d])));
    }
  } else {
    int64_t stride = 1;
    for (size_t d = map.shape.size(); d-- > 0;) {
      coords.insert(coords.begin(), mod(div(flat, lit(stride)), lit(map.shape[d])));
      stride *= map.shape[d];
    }
  }
  Block inner = body(coords);
  Block loop = {For::make(j, lit(0), lit(map.slots), lit(1), -1, 0, std::move(inner))};
  // Threads of the scope beyond the layout's reach hold nothing.
  Expr guard;
  for (auto [axis, reach] : map.covered) {
    int64_t have = launchExtent(axis, scope, scopeThreads);
    if (have != 0 && reach >= have)
      continue;
    if (have == 0 && axis == Axis::wgid)
      continue;
    if (have == 0)
      continue;
    Expr c = lt(axisExpr(axis), lit(reach));
    guard = guard ? Binary::make(BinaryOp::And, guard, c) : c;
  }
  if (guard)
    return {If::make(guard, std::move(loop), {})};
  return loop;
}

// A thread digit's place on the scope's thread index: (weight, period) of
// its axis there, nothing for an axis the scope does not index.
static std::optional<std::pair<int64_t, int64_t>> axisPlace(Axis a, ExecScope scope,
                                                           int64_t scopeThreads) {
  bool cta = scope == ExecScope::Cta, wg = scope == ExecScope::Warpgroup;
  switch (a) {
  case Axis::laneid:
    return std::make_pair(int64_t(1), int64_t(32));
  case Axis::wid_in_wg:
    return cta || wg ? std::optional(std::make_pair(int64_t(32), int64_t(4))) : std::nullopt;
  case Axis::tid_in_wg:
    return cta || wg ? std::optional(std::make_pair(int64_t(1), int64_t(128))) : std::nullopt;
  case Axis::warpid:
    return cta ? std::optional(std::make_pair(int64_t(32), scopeThreads / 32)) : std::nullopt;
  case Axis::wgid:
    return cta ? std::optional(std::make_pair(int64_t(128), scopeThreads / 128)) : std::nullopt;
  case Axis::tx:
    return cta ? std::optional(std::make_pair(int64_t(1), scopeThreads)) : std::nullopt;
  default:
    return std::nullopt;
  }
}

Expr firstReplica(const OwnerMap &map, ExecScope scope, int64_t scopeThreads) {
  if (scope == ExecScope::Thread || scope == ExecScope::Cluster || scopeThreads <= 1)
    return nullptr;
  // Each thread digit as (stride, extent) on the scope's thread index t.
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const auto &d : map.threadDigits) {
    auto p = axisPlace(d.axis, scope, scopeThreads);
    if (!p || d.stride * d.extent > p->second)
      return nullptr;
    spans.push_back({p->first * d.stride, d.extent});
  }
  std::sort(spans.begin(), spans.end());
  for (size_t k = 1; k < spans.size(); ++k)
    if (spans[k - 1].first * spans[k - 1].second > spans[k].first)
      return nullptr; // overlapping digits: no one representative
  // t's own value read back from the digits: t itself exactly for the first
  // replica (the digits of t outside the layout's are 0).
  auto readBack = [&](int64_t t) {
    int64_t v = 0;
    for (auto [stride, extent] : spans)
      v += (t / stride) % extent * stride;
    return v;
  };
  int64_t reach = 1;
  for (auto [stride, extent] : spans)
    reach = std::max(reach, stride * extent);
  bool replicated = false;
  for (int64_t t = 0; t < std::min(reach, scopeThreads) && !replicated; ++t)
    replicated = readBack(t) != t;
  // Threads past the digits' reach: replicas where the layout's reach
  // guard of ownerLoop lets them in (an axis the layout replicates over).
  for (auto [axis, r] : map.covered)
    if (auto p = axisPlace(axis, scope, scopeThreads); p && p->first * r > reach)
      replicated = true;
  if (!replicated)
    return nullptr;
  Expr t = threadInScope(scope), back = lit(0);
  for (auto [stride, extent] : spans)
    back = add(back, mul(mod(div(t, lit(stride)), lit(extent)), lit(stride)));
  return Binary::make(BinaryOp::Eq, t, back);
}

Expr threadInScope(ExecScope scope) {
  switch (scope) {
  case ExecScope::Thread:
    return lit(0);
  case ExecScope::Warp:
    return builtin(BuiltinKind::laneid);
  case ExecScope::Warpgroup:
    return builtin(BuiltinKind::tid_in_wg);
  case ExecScope::Cta:
  case ExecScope::Cluster:
    return builtin(BuiltinKind::threadIdx_x);
  }
  return lit(0);
}

Block spreadLoop(int64_t count, const std::vector<int64_t> &shape, ExecScope scope,
                 int64_t scopeThreads, DispatchState &state,
                 const std::function<Block(const std::vector<Expr> &coords)> &body) {
  std::string i = state.fresh("i");
  int64_t rounds = (count + scopeThreads - 1) / scopeThreads;
  Expr flat = add(mul(name(i), lit(scopeThreads)), threadInScope(scope));
  std::vector<Expr> coords;
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    coords.insert(coords.begin(), mod(div(flat, lit(stride)), lit(shape[d])));
    stride *= shape[d];
  }
  Block inner = body(coords);
  if (count % scopeThreads != 0)
    inner = {If::make(lt(flat, lit(count)), std::move(inner), {})};
  return {For::make(i, lit(0), lit(rounds), lit(1), rounds <= 16 ? -1 : 0, 0, std::move(inner))};
}

} // namespace tilescope::dispatch
