// The CUDA emitter's expressions (KernelEmitter.h): values known per thread,
// buffer elements and addresses, the polynomial and divisibility analysis of
// indices.
#include "codegen/KernelEmitter.h"

#include "ir/Intrinsics.h"
#include "ir/Printer.h"

#include <fmt/format.h>

namespace tilescope::codegen::detail {

// ------------------------------------------------------------------ expressions

std::optional<int64_t> KernelEmitter::eval(const Expr &e, int64_t t) {
  switch (e->kind) {
  case ExprKind::IntImm:
    return as<IntImm>(e).value;
  case ExprKind::Var: {
    auto it = env_.find(as<Var>(e).name);
    if (it != env_.end())
      return it->second;
    // A visible let (innermost first): immutable, so its value stands in.
    for (auto l = lets_.rbegin(); l != lets_.rend(); ++l)
      if (l->first == as<Var>(e).name)
        return eval(l->second, t);
    return std::nullopt;
  }
  case ExprKind::Builtin:
    if (t < 0)
      return std::nullopt; // asked for a value no thread position decides
    if (auto m = threadIndexMap(as<Builtin>(e).which))
      return threadIndexValue(*m, t);
    return std::nullopt;
  case ExprKind::Unary:
    if (as<Unary>(e).op == UnaryOp::Neg)
      if (auto v = eval(as<Unary>(e).operand, t))
        return -*v;
    return std::nullopt;
  case ExprKind::Binary: {
    const auto &b = as<Binary>(e);
    auto l = eval(b.lhs, t), r = eval(b.rhs, t);
    if (!l || !r)
      return std::nullopt;
    if (binaryOpPrecedence(b.op) < 5) // arithmetic only
      return std::nullopt;
    return foldIntBinary(b.op, *l, *r);
  }
  default:
    return std::nullopt;
  }
}

std::optional<int64_t> KernelEmitter::slotOf(const std::string &, const BufferInfo &b,
                                             const std::vector<Expr> &idx) {
  std::optional<int64_t> slot;
  bool any = false;
  for (int64_t t = 0; t < k_.launch.threads; ++t) {
    int64_t flat = 0;
    bool inRange = true;
    for (size_t d = 0; d < idx.size(); ++d) {
      auto v = eval(idx[d], t);
      if (!v)
        return std::nullopt;
      if (*v < 0 || *v >= b.constShape[d])
        inRange = false;
      flat = flat * b.constShape[d] + *v;
    }
    if (!inRange)
      continue;
    int64_t m = b.layout->base(flat).get(Axis::m);
    if (any && m != *slot)
      return std::nullopt;
    slot = m;
    any = true;
  }
  return slot;
}

Dtype KernelEmitter::typeOf(const Expr &e) {
  switch (e->kind) {
  case ExprKind::IntImm:
    return Dtype::i32;
  case ExprKind::FloatImm:
    return Dtype::f32;
  case ExprKind::BoolImm:
    return Dtype::pred;
  case ExprKind::Var: {
    const std::string &n = as<Var>(e).name;
    if (auto it = letTypes_.find(n); it != letTypes_.end())
      return it->second;
    for (const Param &p : k_.params)
      if (p.name == n && !p.isTensor)
        return p.dtype;
    return Dtype::i32;
  }
  case ExprKind::Index: {
    Expr base = e;
    while (base->kind == ExprKind::Index)
      base = as<Index>(base).base;
    if (base->kind == ExprKind::Var)
      if (auto it = bufs_.find(as<Var>(base).name); it != bufs_.end())
        return it->second.dtype;
    return Dtype::f32;
  }
  case ExprKind::Call: {
    const auto &c = as<Call>(e);
    if (auto d = dtypeFromName(c.callee))
      return *d;
    if (c.callee == "elect_sync" || c.callee == "vote_any" || c.callee == "vote_all")
      return Dtype::pred;
    if (c.callee == "ballot")
      return Dtype::u32;
    if (!c.args.empty())
      return typeOf(c.args.back());
    return Dtype::f32;
  }
  case ExprKind::Binary: {
    const auto &b = as<Binary>(e);
    if (b.op >= BinaryOp::Lt)
      return Dtype::pred;
    Dtype l = typeOf(b.lhs), r = typeOf(b.rhs);
    if (isFloat(l) || isFloat(r))
      return Dtype::f32;
    return Dtype::i32;
  }
  case ExprKind::Unary:
    return typeOf(as<Unary>(e).operand);
  default:
    return Dtype::i32;
  }
}

std::string KernelEmitter::globalFlat(const std::string &buf, const std::vector<Expr> &idx) {
  const BufferInfo &b = bufs_.at(buf);
  std::string flat;
  for (size_t d = 0; d < idx.size(); ++d) {
    if (d == 0)
      flat = "(int64_t)(" + ex(idx[d]) + ")";
    else
      flat = "(" + flat + ") * (" + ex(b.shape[d]) + ") + (" + ex(idx[d]) + ")";
  }
  return flat;
}

// The widest run (elements, a power of two up to 16 bytes) of logical
// elements, aligned to its width, that a shared buffer's layout keeps
// contiguous and aligned in memory: the innermost iter is on m with stride 1
// and a multiple of the width, every other m stride and offset is one, and
// the swizzle leaves the run's low bits alone.
int64_t KernelEmitter::sharedRunWidth(const BufferInfo &b) {
  const Layout &l = *b.layout;
  const auto &shard = l.shard();
  if (shard.empty() || !l.replica().empty() || shard.back().axis != Axis::m ||
      shard.back().stride != 1)
    return 1;
  int64_t w = 16 / std::max(1, dtypeBits(b.dtype) / 8);
  auto fits = [&](int64_t v) { return v % w == 0; };
  while (w > 1) {
    bool ok = fits(shard.back().extent);
    for (size_t k = 0; k + 1 < shard.size() && ok; ++k)
      if (shard[k].axis == Axis::m && shard[k].extent > 1)
        ok = fits(shard[k].stride);
    for (const AxisOffset &o : l.offset())
      ok = ok && (o.axis != Axis::m || fits(o.value));
    if (const auto &sw = l.swizzle())
      ok = ok && fits(int64_t(1) << sw->bitsKept);
    if (ok)
      return w;
    w /= 2;
  }
  return 1;
}

// The physical element of a shared buffer at logical coordinates `at` (one
// C++ expression a dimension): the layout's m coordinate, then the swizzle.
// A layout whose modes are the buffer's dimensions, extent for extent (a
// stage ring S[(S, R, C):(R C, C, 1)]), takes each coordinate times its
// stride; any other takes the digits of the flat row-major index, by
// division and remainder (signed: the compiler cannot drop them).
std::string KernelEmitter::sharedElement(const BufferInfo &b, const std::vector<std::string> &at) {
  const Layout &l = *b.layout;
  const auto &shard = l.shard();
  bool direct = shard.size() == at.size() && at.size() == b.constShape.size();
  for (size_t k = 0; direct && k < shard.size(); ++k)
    direct = shard[k].axis == Axis::m && shard[k].extent == b.constShape[k];
  std::string flat;
  for (size_t d = 0; d < at.size(); ++d)
    flat = d == 0 ? "(" + at[d] + ")" : fmt::format("({}) * {} + ({})", flat, b.constShape[d], at[d]);
  std::vector<int64_t> radix(shard.size(), 1);
  for (size_t k = shard.size(); k-- > 1;)
    radix[k - 1] = radix[k] * shard[k].extent;
  std::string m;
  for (size_t k = 0; k < shard.size(); ++k) {
    if (shard[k].axis != Axis::m || shard[k].stride == 0 || shard[k].extent == 1)
      continue;
    std::string digit = direct ? fmt::format("({})", at[k])
                        : k == 0 ? fmt::format("(({}) / {})", flat, radix[k])
                                 : fmt::format("((({}) / {}) % {})", flat, radix[k], shard[k].extent);
    m += (m.empty() ? "" : " + ") + fmt::format("{} * {}", digit, shard[k].stride);
  }
  for (const AxisOffset &o : l.offset())
    if (o.axis == Axis::m && o.value)
      m += fmt::format(" + {}", o.value);
  if (m.empty())
    m = "0";
  if (const auto &sw = l.swizzle())
    m = fmt::format("ts_swizzle<{}, {}, {}>({})", sw->bitsKept, sw->bitsXored, sw->shift, m);
  return m;
}

std::string KernelEmitter::index(const Index &x, const Expr &self) {
  // Flatten a chain into one point index per dimension.
  std::vector<const Index *> chain;
  Expr base = self;
  while (base->kind == ExprKind::Index) {
    chain.insert(chain.begin(), &as<Index>(base));
    base = as<Index>(base).base;
  }
  (void)x;
  std::string name = as<Var>(base).name;
  if (barriers_.count(name))
    return barrierAddr(self);
  auto it = bufs_.find(name);
  if (it == bufs_.end()) {
    error(self->loc, fmt::format("'{}' is not a buffer", name));
    return "0";
  }
  const BufferInfo &b = it->second;
  std::vector<Expr> idx;
  for (const Index *c : chain)
    for (const Subscript &s : c->subscripts) {
      if (s.kind != Subscript::Point) {
        error(self->loc, "a region is used where an element is expected");
        return "0";
      }
      idx.push_back(s.begin);
    }
  if (idx.size() != b.shape.size()) {
    error(self->loc, "element access with the wrong number of indices");
    return "0";
  }
  switch (b.scope) {
  case MemScope::Global:
    return fmt::format("{}[{}]", name, globalFlat(name, idx));
  case MemScope::Shared: {
    std::vector<std::string> at;
    for (const Expr &i : idx)
      at.push_back(ex(i));
    return fmt::format("{}[{}]", name, sharedElement(b, at));
  }
  case MemScope::Reg: {
    if (auto slot = slotOf(name, b, idx))
      return fmt::format("{}[{}]", name, *slot);
    // Run-time slot: correct, but the array leaves registers.
    std::string flat;
    for (size_t d = 0; d < idx.size(); ++d)
      flat = d == 0 ? "(" + ex(idx[d]) + ")"
                    : fmt::format("({}) * {} + ({})", flat, b.constShape[d], ex(idx[d]));
    std::string note = fmt::format("register tile '{}' is indexed by a run-time slot at {} "
                                   "(it may live in local memory)",
                                   name, print(self));
    if (std::find(info_.notes.begin(), info_.notes.end(), note) == info_.notes.end())
      info_.notes.push_back(note);
    BufferInfo asMemory = b;
    const auto &shard = b.layout->shard();
    std::string m;
    std::vector<int64_t> radix(shard.size(), 1);
    for (size_t k = shard.size(); k-- > 1;)
      radix[k - 1] = radix[k] * shard[k].extent;
    for (size_t k = 0; k < shard.size(); ++k)
      if (shard[k].axis == Axis::m && shard[k].extent > 1)
        m += (m.empty() ? "" : " + ") + fmt::format("((({}) / {}) % {}) * {}", flat, radix[k],
                                                    shard[k].extent, shard[k].stride);
    return fmt::format("{}[{}]", name, m.empty() ? "0" : m);
  }
  case MemScope::Tmem:
    error(self->loc, "tensor memory is not lowered yet");
    return "0";
  }
  return "0";
}

std::string KernelEmitter::barrierAddr(const Expr &e) {
  std::string name;
  std::string i = "0";
  if (e->kind == ExprKind::Var) {
    name = as<Var>(e).name;
  } else if (e->kind == ExprKind::Index && as<Index>(e).base->kind == ExprKind::Var) {
    name = as<Var>(as<Index>(e).base).name;
    i = ex(as<Index>(e).subscripts.at(0).begin);
  }
  if (!barriers_.count(name)) {
    error(e->loc, "expected an mbarrier");
    return "0";
  }
  return fmt::format("ts_smem_addr(&{}[{}])", name, i);
}

std::string floatLiteral(double v) {
  std::string s = fmt::format("{:.9g}", v);
  if (s.find_first_of(".eE") == std::string::npos && s.find("inf") == std::string::npos)
    s += ".0";
  return s + "f";
}

std::string KernelEmitter::ex(const Expr &e) {
  switch (e->kind) {
  case ExprKind::IntImm: {
    int64_t v = as<IntImm>(e).value;
    if (v > INT32_MAX || v < INT32_MIN)
      return std::to_string(v) + "LL";
    return std::to_string(v);
  }
  case ExprKind::FloatImm:
    return floatLiteral(as<FloatImm>(e).value);
  case ExprKind::BoolImm:
    return as<BoolImm>(e).value ? "true" : "false";
  case ExprKind::StringImm:
    return "\"" + as<StringImm>(e).value + "\"";
  case ExprKind::Var: {
    const std::string &n = as<Var>(e).name;
    if (auto it = env_.find(n); it != env_.end())
      return std::to_string(it->second);
    // In device code a size the `where` clause fixes is a constant (a
    // division by it becomes a multiplication, an index product a shift);
    // the host launcher still checks the clause on the value passed.
    if (auto it = fixedSymbols_.find(n); deviceSide_ && it != fixedSymbols_.end())
      return std::to_string(it->second);
    return n;
  }
  case ExprKind::Builtin:
    // Thread indices derive from ts_tid, which outer loops re-read (stmt, For).
    // Plain arithmetic, not a broadcast shuffle: these are read under divergent
    // conditions too (a shuffle there would wait for lanes that never come).
    if (auto m = threadIndexMap(as<Builtin>(e).which))
      return threadIndexCuda(*m, "ts_tid");
    switch (as<Builtin>(e).which) {
    case BuiltinKind::blockIdx_x:
      return "(int)blockIdx.x";
    case BuiltinKind::blockIdx_y:
      return "(int)blockIdx.y";
    case BuiltinKind::blockIdx_z:
      return "(int)blockIdx.z";
    case BuiltinKind::clusterCtaIdx_x:
      return "ts_cluster_ctaid(0)";
    case BuiltinKind::clusterCtaIdx_y:
      return "ts_cluster_ctaid(1)";
    case BuiltinKind::clusterCtaIdx_z:
      return "ts_cluster_ctaid(2)";
    default:
      return "0";
    }
  case ExprKind::Unary: {
    const auto &u = as<Unary>(e);
    return fmt::format("({}({}))", u.op == UnaryOp::Neg ? "-" : "!", ex(u.operand));
  }
  case ExprKind::Binary: {
    const auto &b = as<Binary>(e);
    if (auto v = constantValue(e); v && env_.empty())
      return std::to_string(*v);
    if (auto v = eval(e, -1))
      return std::to_string(*v);
    return fmt::format("({} {} {})", ex(b.lhs), binaryOpSpelling(b.op), ex(b.rhs));
  }
  case ExprKind::Call: {
    const auto &c = as<Call>(e);
    std::vector<std::string> a;
    for (const Expr &x : c.args)
      a.push_back(ex(x));
    if (auto d = dtypeFromName(c.callee)) {
      switch (*d) {
      case Dtype::f32:
        return fmt::format("ts_to_f32({})", a[0]);
      case Dtype::bf16:
        return fmt::format("__float2bfloat16_rn(ts_to_f32({}))", a[0]);
      case Dtype::f16:
        return fmt::format("__float2half_rn(ts_to_f32({}))", a[0]);
      default:
        return fmt::format("(({})({}))", cType(*d), a[0]);
      }
    }
    const std::string &f = c.callee;
    if (f == "elect_sync")
      return "ts_elect_sync()";
    if (f == "shfl_xor")
      return fmt::format("__shfl_xor_sync(0xffffffffu, {}, {})", a[0], a[1]);
    if (f == "shfl_idx")
      return fmt::format("__shfl_sync(0xffffffffu, {}, {})", a[0], a[1]);
    if (f == "shfl_up")
      return fmt::format("__shfl_up_sync(0xffffffffu, {}, {})", a[0], a[1]);
    if (f == "shfl_down")
      return fmt::format("__shfl_down_sync(0xffffffffu, {}, {})", a[0], a[1]);
    if (f == "vote_any")
      return fmt::format("__any_sync(0xffffffffu, {})", a[0]);
    if (f == "vote_all")
      return fmt::format("__all_sync(0xffffffffu, {})", a[0]);
    if (f == "ballot")
      return fmt::format("__ballot_sync(0xffffffffu, {})", a[0]);
    if (f == "select")
      return fmt::format("(({}) ? ({}) : ({}))", a[0], a[1], a[2]);
    if (f == "rsqrt")
      return fmt::format("rsqrtf({})", a[0]);
    if (f == "fma")
      return fmt::format("__fmaf_rn({}, {}, {})", a[0], a[1], a[2]);
    if (f == "sqrt")
      return fmt::format("sqrtf({})", a[0]);
    if (f == "exp")
      return fmt::format("__expf({})", a[0]);
    if (f == "exp2")
      return fmt::format("ts_ex2({})", a[0]);
    if (f == "log")
      return fmt::format("ts_log({})", a[0]);
    if (f == "abs")
      return fmt::format("fabsf({})", a[0]);
    if (f == "min")
      return fmt::format("min({}, {})", a[0], a[1]);
    if (f == "max")
      return fmt::format("max({}, {})", a[0], a[1]);
    error(e->loc, fmt::format("no lowering for function '{}'", f));
    return "0";
  }
  case ExprKind::Index:
    return index(as<Index>(e), e);
  }
  return "0";
}

Poly KernelEmitter::poly(const Expr &e) {
  if (auto v = eval(e, -1))
    return polyConst(*v);
  switch (e->kind) {
  case ExprKind::IntImm:
    return polyConst(as<IntImm>(e).value);
  case ExprKind::Var: {
    const std::string &n = as<Var>(e).name;
    if (auto it = env_.find(n); it != env_.end())
      return polyConst(it->second);
    for (auto l = lets_.rbegin(); l != lets_.rend(); ++l)
      if (l->first == n)
        return poly(l->second);
    return Poly{{{n}, 1}};
  }
  case ExprKind::Binary: {
    const auto &b = as<Binary>(e);
    if (b.op == BinaryOp::Add)
      return polyAdd(poly(b.lhs), poly(b.rhs));
    if (b.op == BinaryOp::Sub)
      return polyAdd(poly(b.lhs), poly(b.rhs), -1);
    if (b.op == BinaryOp::Mul)
      return polyMul(poly(b.lhs), poly(b.rhs));
    break;
  }
  default:
    break;
  }
  return Poly{{{ex(e)}, 1}};
}

int64_t KernelEmitter::divisibility(const Monomial &m) {
  int64_t d = 1;
  for (const std::string &a : m)
    if (auto it = symbolMultiple_.find(a); it != symbolMultiple_.end())
      d *= it->second;
  return d;
}

// Where a region of a buffer starts, per dimension of the buffer, and which
// dimensions it keeps (points drop theirs) with their extents.
KernelEmitter::RegionStart KernelEmitter::regionStart(const Expr &region) {
  std::vector<const Index *> chain;
  Expr base = region;
  while (base->kind == ExprKind::Index) {
    chain.insert(chain.begin(), &as<Index>(base));
    base = as<Index>(base).base;
  }
  RegionStart r;
  r.buffer = as<Var>(base).name;
  const BufferInfo &b = bufs_.at(r.buffer);
  r.begin.assign(b.shape.size(), IntImm::make(0));
  r.kept.assign(b.shape.size(), true);
  // Extents from the declared shape: global tensors have no constShape, and
  // their extents may be sizes (then the region's size is not a constant).
  r.extent.assign(b.shape.size(), 0);
  std::vector<bool> known(b.shape.size());
  for (size_t d = 0; d < b.shape.size(); ++d) {
    std::optional<int64_t> e = constantValue(b.shape[d]);
    known[d] = e.has_value();
    r.extent[d] = e.value_or(0);
  }
  for (const Index *c : chain) {
    size_t i = 0;
    for (size_t d = 0; d < r.kept.size() && i < c->subscripts.size(); ++d) {
      if (!r.kept[d])
        continue;
      const Subscript &s = c->subscripts[i++];
      if (s.kind == Subscript::Full)
        continue;
      r.begin[d] = foldConstants(Binary::make(BinaryOp::Add, r.begin[d], s.begin));
      if (s.kind == Subscript::Point) {
        r.kept[d] = false;
        r.extent[d] = 1;
        known[d] = true;
      } else {
        auto e = s.kind == Subscript::Extent
                     ? constantValue(s.end)
                     : constantValue(foldConstants(Binary::make(BinaryOp::Sub, s.end, s.begin)));
        // A slice of unknown length keeps the enclosing view's extent.
        known[d] = e.has_value();
        r.extent[d] = e.value_or(r.extent[d]);
      }
    }
  }
  r.constantSize = std::all_of(known.begin(), known.end(), [](bool k) { return k; });
  return r;
}

// The byte address (shared state space) of the start of a shared region.
std::string KernelEmitter::regionByteAddress(const Expr &region, std::string *buffer) {
  RegionStart start = regionStart(region);
  *buffer = start.buffer;
  const BufferInfo &b = bufs_.at(start.buffer);
  const std::vector<Expr> &begin = start.begin;
  const std::string &name = start.buffer;
  std::vector<std::string> at;
  for (const Expr &i : begin)
    at.push_back(ex(i));
  // The unswizzled element offset: descriptors and TMA apply the swizzle.
  BufferInfo plain = b;
  if (plain.layout && plain.layout->swizzle()) {
    std::string why;
    plain.layout = Layout::make(plain.layout->shard(), plain.layout->replica(),
                                plain.layout->offset(), std::nullopt, &why);
  }
  return fmt::format("(ts_smem_addr({}) + (uint32_t)({}) * {})", name, sharedElement(plain, at),
                     dtypeBits(b.dtype) / 8);
}

// The extents of a region's dimensions that remain (points drop theirs).
std::vector<int64_t> KernelEmitter::regionExtents(const Expr &region) {
  RegionStart r = regionStart(region);
  std::vector<int64_t> extent;
  for (size_t d = 0; d < r.kept.size(); ++d)
    if (r.kept[d])
      extent.push_back(r.extent[d]);
  return extent;
}

// A 2-D region narrowed to the `width` elements of dimension `dim` from `k`.
Expr KernelEmitter::kSlice(const Expr &region, size_t dim, int64_t k, int64_t width) {
  std::vector<Subscript> subs(2, Subscript{Subscript::Full, nullptr, nullptr});
  subs[dim] = {Subscript::Extent, IntImm::make(k), IntImm::make(width)};
  return Index::make(region, std::move(subs));
}

} // namespace tilescope::codegen::detail
