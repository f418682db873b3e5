// Expressions of the compiled body (ExprCode.h) evaluated for the active lanes
// of a warp. An operation returns a pointer to its values: a constant's
// values filled once per CTA, a slot of the warp, or its own scratch lanes;
// nothing is copied, looked up or allocated per evaluation. The semantics are
// those of docs/simulator.md ("Expressions"): 64-bit integers with C
// semantics, floats of a dtype computed in single precision and rounded,
// literals that adapt to the dtype they meet, f32 a * b + c as one fmaf.
#include "simulator/CtaExecutor.h"
#include "simulator/Ex2Approx.h"
#include "simulator/Log32.h"
#include "simulator/Lanes.h"
#include "simulator/Packed.h"

#include <fmt/format.h>
#include <llvm/ADT/SmallVector.h>

#include <cmath>

namespace tilescope::sim {

namespace {

double asDouble(const LaneValues &v, int lane) {
  return isFloatKind(v.kind) ? v.lane[lane].f : static_cast<double>(v.lane[lane].i);
}

double floatOp(BinaryOp op, Dtype d, double x, double y) {
  if (d == Dtype::f64) {
    switch (op) {
    case BinaryOp::Add:
      return x + y;
    case BinaryOp::Sub:
      return x - y;
    case BinaryOp::Mul:
      return x * y;
    case BinaryOp::Div:
      return x / y;
    default:
      return 0;
    }
  }
  float a = static_cast<float>(x), b = static_cast<float>(y), r = 0;
  switch (op) {
  case BinaryOp::Add:
    r = a + b;
    break;
  case BinaryOp::Sub:
    r = a - b;
    break;
  case BinaryOp::Mul:
    r = a * b;
    break;
  case BinaryOp::Div:
    r = a / b;
    break;
  default:
    break;
  }
  return d == Dtype::f32 ? static_cast<double>(r) : roundTo(d, r);
}

bool isCompare(BinaryOp op) {
  return binaryOpPrecedence(op) == 3 || binaryOpPrecedence(op) == 4;
}

template <typename Fn>
void intLanes(uint32_t mask, const LaneValues &x, const LaneValues &y, LaneValues &out, Fn fn) {
  forLanes(mask, [&](int l) { out.lane[l].i = fn(x.lane[l].i, y.lane[l].i); });
}

// Integer operators except division (which checks its divisors first).
void intBinary(BinaryOp op, uint32_t mask, const LaneValues &x, const LaneValues &y,
               LaneValues &out) {
  switch (op) {
  // Lambdas, not the functions themselves: a function pointer is called per
  // lane, a lambda is inlined into the lane loop.
  case BinaryOp::Add:
    return intLanes(mask, x, y, out, [](int64_t p, int64_t q) { return wrapAdd(p, q); });
  case BinaryOp::Sub:
    return intLanes(mask, x, y, out, [](int64_t p, int64_t q) { return wrapSub(p, q); });
  case BinaryOp::Mul:
    return intLanes(mask, x, y, out, [](int64_t p, int64_t q) { return wrapMul(p, q); });
  case BinaryOp::Lt:
    return intLanes(mask, x, y, out, [](int64_t p, int64_t q) -> int64_t { return p < q; });
  case BinaryOp::Le:
    return intLanes(mask, x, y, out, [](int64_t p, int64_t q) -> int64_t { return p <= q; });
  case BinaryOp::Gt:
    return intLanes(mask, x, y, out, [](int64_t p, int64_t q) -> int64_t { return p > q; });
  case BinaryOp::Ge:
    return intLanes(mask, x, y, out, [](int64_t p, int64_t q) -> int64_t { return p >= q; });
  case BinaryOp::Eq:
    return intLanes(mask, x, y, out, [](int64_t p, int64_t q) -> int64_t { return p == q; });
  case BinaryOp::Ne:
    return intLanes(mask, x, y, out, [](int64_t p, int64_t q) -> int64_t { return p != q; });
  default:
    return intLanes(mask, x, y, out, [](int64_t, int64_t) -> int64_t { return 0; });
  }
}

// f32 (or narrower, already exact) Float operands of an f32 left side: the
// common case of float arithmetic, without literal rounding.
void f32Binary(BinaryOp op, uint32_t mask, const LaneValues &x, const LaneValues &y,
               LaneValues &out) {
  auto compare = [&](auto fn) {
    forLanes(mask, [&](int l) { out.lane[l].i = fn(x.lane[l].f, y.lane[l].f); });
  };
  switch (op) {
  case BinaryOp::Lt:
    return compare([](double p, double q) -> int64_t { return p < q; });
  case BinaryOp::Le:
    return compare([](double p, double q) -> int64_t { return p <= q; });
  case BinaryOp::Gt:
    return compare([](double p, double q) -> int64_t { return p > q; });
  case BinaryOp::Ge:
    return compare([](double p, double q) -> int64_t { return p >= q; });
  case BinaryOp::Eq:
    return compare([](double p, double q) -> int64_t { return p == q; });
  case BinaryOp::Ne:
    return compare([](double p, double q) -> int64_t { return p != q; });
  default:
    forLanes(mask, [&](int l) {
      out.lane[l].f = static_cast<double>(
          f32Arith(op, static_cast<float>(x.lane[l].f), static_cast<float>(y.lane[l].f)));
    });
    return;
  }
}

// The contracted f32 multiply-add of every active lane: -p * q + r, p * q - r
// or p * q + r (`variant` -1, 1, 0). fmaf is exactly rounded, so the clone
// for processors with an FMA unit (one instruction instead of a libm call)
// gives the same bits as the default one.
#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target_clones("fma", "default")))
#endif
void fmaLanes(uint32_t mask, int variant, const LaneValues &p, const LaneValues &q,
              const LaneValues &r, LaneValues &out) {
  forLanes(mask, [&](int l) {
    out.lane[l].f = static_cast<double>(f32Fma(variant, static_cast<float>(p.lane[l].f),
                                               static_cast<float>(q.lane[l].f),
                                               static_cast<float>(r.lane[l].f)));
  });
}

} // namespace

bool CtaExecutor::binaryInto(BinaryOp op, llvm::SMLoc loc, const LaneValues &x, const LaneValues &y,
                             uint32_t mask, LaneValues &out) {
  const ValueKind xk = x.kind, yk = y.kind;
  const Dtype xd = x.dtype, yd = y.dtype;
  if (op == BinaryOp::And || op == BinaryOp::Or) {
    bool isAnd = op == BinaryOp::And;
    forLanes(mask, [&](int l) {
      out.lane[l].i = isAnd ? (x.lane[l].i && y.lane[l].i) : (x.lane[l].i || y.lane[l].i);
    });
    out.kind = ValueKind::Bool;
    out.dtype = xd;
    return true;
  }
  const bool compare = isCompare(op);
  if (!isFloatKind(xk) && !isFloatKind(yk)) {
    if (op == BinaryOp::Div || op == BinaryOp::Mod) {
      if (!divideLanes(op == BinaryOp::Div, mask, x, y, out))
        return fail(loc, "integer division by zero");
    } else {
      intBinary(op, mask, x, y, out);
    }
    if (compare) {
      out.kind = ValueKind::Bool;
      out.dtype = Dtype::pred;
    } else if (xk != ValueKind::Int || yk != ValueKind::Int) {
      out.kind = ValueKind::Int;
      out.dtype = Dtype::i64;
    } else {
      out.kind = xk;
      out.dtype = xd;
    }
    return true;
  }
  // Floats: the non-literal side's dtype wins; literals round into it.
  if (xk == ValueKind::Float && xd == Dtype::f32 && yk == ValueKind::Float) {
    f32Binary(op, mask, x, y, out);
  } else {
    Dtype d = Dtype::f64;
    bool literal = true;
    if (xk == ValueKind::Float) {
      d = xd;
      literal = false;
    } else if (yk == ValueKind::Float) {
      d = yd;
      literal = false;
    }
    forLanes(mask, [&](int l) {
      double p = asDouble(x, l), q = asDouble(y, l);
      if (!literal) {
        p = xk == ValueKind::Float ? p : roundTo(d, p);
        q = yk == ValueKind::Float ? q : roundTo(d, q);
      }
      double r = 0;
      switch (op) {
      case BinaryOp::Lt:
        r = p < q;
        break;
      case BinaryOp::Le:
        r = p <= q;
        break;
      case BinaryOp::Gt:
        r = p > q;
        break;
      case BinaryOp::Ge:
        r = p >= q;
        break;
      case BinaryOp::Eq:
        r = p == q;
        break;
      case BinaryOp::Ne:
        r = p != q;
        break;
      default:
        r = floatOp(op, literal ? Dtype::f64 : d, p, q);
        break;
      }
      if (compare)
        out.lane[l].i = r != 0;
      else
        out.lane[l].f = r;
    });
    if (!compare) {
      out.kind = literal ? ValueKind::Literal : ValueKind::Float;
      out.dtype = d;
      return true;
    }
  }
  if (compare) {
    out.kind = ValueKind::Bool;
    out.dtype = Dtype::pred;
  } else {
    out.kind = ValueKind::Float;
    out.dtype = Dtype::f32;
  }
  return true;
}

const LaneValues &CtaExecutor::builtinLanes(BuiltinKind b, const Warp &w) {
  constexpr size_t kBuiltins = size_t(BuiltinKind::clusterCtaIdx_z) + 1;
  size_t i = size_t(w.id) * kBuiltins + size_t(b);
  if (i >= builtinLanes_.size()) {
    builtinLanes_.resize(size_t(p_.warps) * kBuiltins);
    builtinFilled_.resize(builtinLanes_.size(), false);
  }
  LaneValues &v = builtinLanes_[i];
  if (!builtinFilled_[i]) {
    v.kind = ValueKind::Int;
    v.dtype = Dtype::i64;
    for (int l = 0; l < 32; ++l)
      v.lane[l].i = builtin(b, int64_t(w.id) * 32 + l);
    builtinFilled_[i] = true;
  }
  return v;
}

const LaneValues *CtaExecutor::evalOp(int index, Warp &w, uint32_t mask) {
  if (index < 0) {
    fail({}, "an expression is missing");
    return nullptr;
  }
  const ExprOp &op = code_->ops[index];
  LaneValues &out = scratch_[index];
  switch (op.kind) {
  case OpKind::Constant:
    return &out;
  case OpKind::Slot:
    return &w.slots[op.slot];
  case OpKind::Builtin:
    return &builtinLanes(op.builtin, w);
  case OpKind::Unary: {
    const LaneValues *x = evalOp(op.args[0], w, mask);
    if (!x)
      return nullptr;
    out.kind = x->kind;
    out.dtype = x->dtype;
    if (op.unary == UnaryOp::Not)
      forLanes(mask, [&](int l) { out.lane[l].i = !x->lane[l].i; });
    else if (isFloatKind(x->kind))
      forLanes(mask, [&](int l) { out.lane[l].f = -x->lane[l].f; });
    else
      forLanes(mask, [&](int l) { out.lane[l].i = wrapSub(0, x->lane[l].i); });
    return &out;
  }
  case OpKind::Binary: {
    const LaneValues *x = evalOp(op.args[0], w, mask);
    const LaneValues *y = x ? evalOp(op.args[1], w, mask) : nullptr;
    if (!y)
      return nullptr;
    // A warp-uniform operation (ExprOp::uniform: every active lane has the
    // same operands) computed in the first active lane and copied to the
    // others: the same values and, a division's zero divisor being in every
    // lane or none, the same errors.
    if (op.uniform && mask != 0 && options_.scalarFastPaths) {
      const int first = std::countr_zero(mask);
      if (!binaryInto(op.binary, op.ast->loc, *x, *y, uint32_t{1} << first, out))
        return nullptr;
      const Scalar v = out.lane[first];
      forLanes(mask, [&](int l) { out.lane[l] = v; });
      return &out;
    }
    if (!binaryInto(op.binary, op.ast->loc, *x, *y, mask, out))
      return nullptr;
    return &out;
  }
  case OpKind::Fma:
    return evalFma(op, w, mask, out) ? &out : nullptr;
  case OpKind::Load:
    return evalLoad(op, w, mask, out) ? &out : nullptr;
  case OpKind::Call:
    return evalCall(op, w, mask, out) ? &out : nullptr;
  case OpKind::Error:
    fail(op.errorLoc, op.error);
    return nullptr;
  }
  return nullptr;
}

bool CtaExecutor::evalFma(const ExprOp &op, Warp &w, uint32_t mask, LaneValues &out) {
  const LaneValues *mx = evalOp(op.args[0], w, mask);
  const LaneValues *my = mx ? evalOp(op.args[1], w, mask) : nullptr;
  const LaneValues *c = my ? evalOp(op.args[2], w, mask) : nullptr;
  if (!c)
    return false;
  auto isF32 = [](const LaneValues *v) {
    return v->kind == ValueKind::Float && v->dtype == Dtype::f32;
  };
  bool f32 = isF32(mx) || isF32(my) || isF32(c);
  bool allFloat = isFloatKind(mx->kind) && isFloatKind(my->kind) && isFloatKind(c->kind);
  if (!f32 || !allFloat) {
    // Not contracted: the product, then the sum, as two operators.
    const ExprNode &sum = *op.ast;
    const auto &b = static_cast<const Binary &>(sum);
    const ExprNode &product = *(op.mulLeft ? b.lhs : b.rhs);
    if (!binaryInto(BinaryOp::Mul, product.loc, *mx, *my, mask, product_))
      return false;
    return op.mulLeft ? binaryInto(op.binary, sum.loc, product_, *c, mask, out)
                      : binaryInto(op.binary, sum.loc, *c, product_, mask, out);
  }
  fmaLanes(mask, op.binary == BinaryOp::Add ? 0 : op.mulLeft ? 1 : -1, *mx, *my, *c, out);
  out.kind = ValueKind::Float;
  out.dtype = Dtype::f32;
  return true;
}

namespace {

// The flat element index of every active lane over subscripts that are
// already evaluated, in one pass: fn(lane, flat) with flat 0 for a lane whose
// index is out of range (so a fused load stays inside the buffer); returns
// whether any lane was out of range.
template <int Dims, typename Fn>
bool flatLanes(uint32_t mask, const LaneValues *const *sub, const int64_t *shape, Fn fn) {
  uint64_t bad = 0;
  forLanes(mask, [&](int l) {
    uint64_t flat = 0, out = 0;
    for (int d = 0; d < Dims; ++d) {
      const uint64_t i = static_cast<uint64_t>(sub[d]->lane[l].i);
      const uint64_t extent = static_cast<uint64_t>(shape[d]);
      out |= i >= extent;
      flat = flat * extent + i;
    }
    bad |= out;
    fn(l, out ? int64_t{0} : static_cast<int64_t>(flat));
  });
  return bad != 0;
}

// Whole converged warps, the common case, get loops the compiler turns into
// vector code (a clone for AVX2 processors, chosen at load time; integer and
// bit moves only, so every clone gives the same bits).
#if defined(__GNUC__) && defined(__x86_64__)
#define TILESCOPE_LANE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TILESCOPE_LANE_CLONES
#endif

using F32Bits = uint32_t __attribute__((may_alias));

template <int Dims, typename Fn>
inline bool warpFlats(const LaneValues *const *sub, const int64_t *shape, Fn fn) {
  const int64_t *__restrict index[3] = {&sub[0]->lane[0].i, Dims > 1 ? &sub[1]->lane[0].i : nullptr,
                                        Dims > 2 ? &sub[2]->lane[0].i : nullptr};
  uint64_t bad = 0;
  for (int l = 0; l < kWarpSize; ++l) {
    uint64_t flat = 0, out = 0;
    for (int d = 0; d < Dims; ++d) {
      const uint64_t i = static_cast<uint64_t>(index[d][l]);
      const uint64_t extent = static_cast<uint64_t>(shape[d]);
      out |= i >= extent;
      // Extents are at most 2^30 (bindProgram), so in a lane whose indices are in
      // range the first product is one of two 32-bit numbers (a multiply
      // vector units have); other lanes' flat is replaced by 0 anyway.
      flat = d == 1 ? uint64_t(uint32_t(flat)) * uint32_t(extent) + i : flat * extent + i;
    }
    bad |= out;
    fn(l, out ? uint64_t{0} : flat);
  }
  return bad != 0;
}

template <int Dims>
bool warpLoadGlobalF32(const LaneValues *const *sub, const int64_t *shape, const uint8_t *bytes,
                       LaneValues &out) {
  const F32Bits *base = reinterpret_cast<const F32Bits *>(bytes);
  double *__restrict values = &out.lane[0].f;
  return warpFlats<Dims>(sub, shape, [&](int l, uint64_t f) {
    values[l] = static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(base[f])));
  });
}

template <int Dims>
bool warpLoadRegF32(const LaneValues *const *sub, const int64_t *shape, const uint64_t *regs,
                    int64_t perThread, LaneValues &out) {
  double *__restrict values = &out.lane[0].f;
  return warpFlats<Dims>(sub, shape, [&](int l, uint64_t f) {
    values[l] = static_cast<double>(
        std::bit_cast<float>(static_cast<uint32_t>(regs[l * perThread + static_cast<int64_t>(f)])));
  });
}

TILESCOPE_LANE_CLONES
bool loadGlobalF32(size_t dims, const LaneValues *const *sub, const int64_t *shape,
                   const uint8_t *bytes, LaneValues &out) {
  switch (dims) {
  case 1:
    return warpLoadGlobalF32<1>(sub, shape, bytes, out);
  case 2:
    return warpLoadGlobalF32<2>(sub, shape, bytes, out);
  default:
    return warpLoadGlobalF32<3>(sub, shape, bytes, out);
  }
}

TILESCOPE_LANE_CLONES
bool loadRegF32(size_t dims, const LaneValues *const *sub, const int64_t *shape,
                const uint64_t *regs, int64_t perThread, LaneValues &out) {
  switch (dims) {
  case 1:
    return warpLoadRegF32<1>(sub, shape, regs, perThread, out);
  case 2:
    return warpLoadRegF32<2>(sub, shape, regs, perThread, out);
  default:
    return warpLoadRegF32<3>(sub, shape, regs, perThread, out);
  }
}

TILESCOPE_LANE_CLONES
bool warpFlatsInto(size_t dims, const LaneValues *const *sub, const int64_t *shape,
                   int64_t *__restrict flat) {
  auto keep = [&](int l, uint64_t f) { flat[l] = static_cast<int64_t>(f); };
  switch (dims) {
  case 1:
    return warpFlats<1>(sub, shape, keep);
  case 2:
    return warpFlats<2>(sub, shape, keep);
  default:
    return warpFlats<3>(sub, shape, keep);
  }
}

template <typename Fn>
bool forFlats(size_t dims, uint32_t mask, const LaneValues *const *sub, const int64_t *shape,
              Fn fn) {
  switch (dims) {
  case 1:
    return flatLanes<1>(mask, sub, shape, fn);
  case 2:
    return flatLanes<2>(mask, sub, shape, fn);
  default:
    return flatLanes<3>(mask, sub, shape, fn);
  }
}

} // namespace

bool CtaExecutor::pointSubscripts(const ExprOp &op, Warp &w, uint32_t mask,
                                  std::array<const LaneValues *, 3> &sub) {
  if (op.buffer < 0 || !op.pointsInfallible || op.args.empty() || op.args.size() > 3)
    return false;
  for (size_t d = 0; d < op.args.size(); ++d)
    if (!(sub[d] = evalOp(op.args[d], w, mask)))
      return false;
  return true;
}

bool CtaExecutor::boundsError(const ExprOp &op, Warp &w, uint32_t mask,
                              std::array<const LaneValues *, 3> &sub) {
  const BufferPlan &b = p_.buffers[op.buffer];
  for (size_t d = 0; d < op.args.size(); ++d)
    for (uint32_t m = mask; m; m &= m - 1) {
      int l = std::countr_zero(m);
      if (sub[d]->lane[l].i < 0 || sub[d]->lane[l].i >= b.shape[d])
        return outOfRange(op, d, sub[d]->lane[l].i, w.id * 32 + l);
    }
  return false;
}

bool CtaExecutor::outOfRange(const ExprOp &op, size_t d, int64_t index, int64_t thread) {
  const BufferPlan &b = p_.buffers[op.buffer];
  return fail(code_->ops[op.args[d]].ast->loc,
              fmt::format("index {} is out of range for dimension {} of '{}' (extent {}) in "
                          "thread {}",
                          index, d, b.name, b.shape[d], thread));
}

void CtaExecutor::raceLoads(const ExprOp &op, Warp &w, uint32_t mask,
                            const std::array<int64_t, kWarpSize> *flat,
                            const std::array<const LaneValues *, 3> *sub) {
  // The device race detector sees element loads too (a peer's put racing
  // them), as it sees every other access to global memory.
  bool device = deviceTraced_;
  if (!race_ && !device)
    return;
  const BufferPlan &b = p_.buffers[op.buffer];
  forLanes(mask, [&](int l) {
    int64_t f = 0;
    if (flat) {
      f = (*flat)[l];
    } else {
      for (size_t d = 0; d < op.args.size(); ++d)
        f = f * b.shape[d] + (*sub)[d]->lane[l].i;
    }
    int64_t t = w.id * 32 + l;
    if (device)
      deviceAccess(devid_, b.tensor, f, false, op.ast->loc);
    if (race_)
      raceAccess(RaceSpace::Global, op.buffer, f, f, 1, false, {t, t + 1}, op.ast->loc);
  });
}

bool CtaExecutor::elementFlat(const ExprOp &op, Warp &w, uint32_t mask,
                              std::array<int64_t, kWarpSize> &flat) {
  if (op.buffer < 0)
    return fail(op.errorLoc, op.error);
  const BufferPlan &b = p_.buffers[op.buffer];
  // Subscripts that cannot fail: compute them all, check the bounds in the
  // same pass, and report the first bad (dimension, lane) as the ordered
  // walk below would.
  std::array<const LaneValues *, 3> sub{};
  if (pointSubscripts(op, w, mask, sub)) {
    bool bad = mask == ~0u ? warpFlatsInto(op.args.size(), sub.data(), b.shape.data(), flat.data())
                           : forFlats(op.args.size(), mask, sub.data(), b.shape.data(),
                                      [&](int l, int64_t f) { flat[l] = f; });
    return !bad || boundsError(op, w, mask, sub);
  }
  if (failure_)
    return false;
  flat.fill(0);
  for (size_t d = 0; d < op.args.size(); ++d) {
    if (op.args[d] < 0)
      return fail(op.ast->loc, "a region is not a value");
    const LaneValues *v = evalOp(op.args[d], w, mask);
    if (!v)
      return false;
    int64_t extent = b.shape[d];
    int badLane = -1;
    forLanes(mask, [&](int l) {
      int64_t i = v->lane[l].i;
      if ((i < 0 || i >= extent) && badLane < 0)
        badLane = l;
      flat[l] = flat[l] * extent + i;
    });
    if (badLane >= 0)
      return outOfRange(op, d, v->lane[badLane].i, w.id * 32 + badLane);
  }
  return true;
}

bool CtaExecutor::evalLoad(const ExprOp &op, Warp &w, uint32_t mask, LaneValues &out) {
  const BufferPlan *bp = op.buffer >= 0 ? &p_.buffers[op.buffer] : nullptr;
  // The common loads in one pass: f32 elements of a global tensor or of
  // private registers, subscripts that cannot fail.
  std::array<const LaneValues *, 3> sub{};
  if (bp && bp->dtype == Dtype::f32 && (bp->scope == MemScope::Global || bp->privateRegs()) &&
      pointSubscripts(op, w, mask, sub)) {
    out.dtype = Dtype::f32;
    out.kind = ValueKind::Float;
    bool bad;
    const int64_t perThread = p_.regsPerThread;
    const uint64_t *regs = regs_.data() + w.id * 32 * perThread + bp->regBase;
    const uint8_t *base =
        bp->scope == MemScope::Global ? tensors_[bp->tensor].bytes.data() : nullptr;
    const bool global = bp->scope == MemScope::Global;
    if (mask == ~0u) {
      bad = global ? loadGlobalF32(op.args.size(), sub.data(), bp->shape.data(), base, out)
                   : loadRegF32(op.args.size(), sub.data(), bp->shape.data(), regs, perThread, out);
      if (global && !bad)
        stats_.globalBytesRead += 4 * kWarpSize;
      if (global && !bad)
        raceLoads(op, w, mask, nullptr, &sub);
    } else if (global) {
      bad = forFlats(op.args.size(), mask, sub.data(), bp->shape.data(), [&](int l, int64_t f) {
        uint32_t bits;
        std::memcpy(&bits, base + f * 4, 4);
        out.lane[l].f = std::bit_cast<float>(bits);
      });
      if (!bad) {
        stats_.globalBytesRead += 4 * std::popcount(mask);
        raceLoads(op, w, mask, nullptr, &sub);
      }
    } else {
      bad = forFlats(op.args.size(), mask, sub.data(), bp->shape.data(), [&](int l, int64_t f) {
        out.lane[l].f = std::bit_cast<float>(static_cast<uint32_t>(regs[l * perThread + f]));
      });
    }
    return !bad || boundsError(op, w, mask, sub);
  }
  if (failure_)
    return false;
  std::array<int64_t, kWarpSize> flat;
  if (!elementFlat(op, w, mask, flat))
    return false;
  const BufferPlan &b = *bp;
  out.dtype = b.dtype;
  out.kind = isFloat(b.dtype)         ? ValueKind::Float
             : b.dtype == Dtype::pred ? ValueKind::Bool
                                      : ValueKind::Int;
  auto decode = [&](int l, uint64_t bits) {
    if (out.kind == ValueKind::Float)
      out.lane[l].f = decodeFloat(b.dtype, bits);
    else
      out.lane[l].i = decodeInt(b.dtype, bits);
  };
  if (b.scope == MemScope::Global && !isPacked(b.dtype)) {
    const uint8_t *base = tensors_[b.tensor].bytes.data();
    const int bytes = b.elementBytes;
    forLanes(mask, [&](int l) { decode(l, loadBits(base + flat[l] * bytes, bytes)); });
    stats_.globalBytesRead += bytes * std::popcount(mask);
    raceLoads(op, w, mask, &flat, nullptr);
    return true;
  }
  if (b.privateRegs()) {
    const uint64_t *regs = regs_.data() + w.id * 32 * p_.regsPerThread + b.regBase;
    const int64_t perThread = p_.regsPerThread;
    forLanes(mask, [&](int l) { decode(l, regs[l * perThread + flat[l]]); });
    return true;
  }
  bool ok = true;
  forLanes(mask, [&](int l) {
    if (!ok)
      return;
    int64_t t = w.id * 32 + l;
    auto bits = readBits(op.buffer, flat[l], {t, t + 1}, op.ast->loc);
    if (!bits) {
      ok = false;
      return;
    }
    decode(l, *bits);
  });
  return ok;
}

bool CtaExecutor::evalCall(const ExprOp &op, Warp &w, uint32_t mask, LaneValues &out) {
  const auto &call = static_cast<const Call &>(*op.ast);
  const std::string &f = call.callee;
  const llvm::SMLoc loc = op.ast->loc;
  if (op.fn == CallFn::Convert) {
    if (op.args.size() != 1)
      return fail(loc, "a conversion takes one value");
    const LaneValues *x = evalOp(op.args[0], w, mask);
    if (!x)
      return false;
    const Dtype d = op.convertTo;
    const bool from = isFloatKind(x->kind);
    forLanes(mask, [&](int l) {
      if (isFloat(d)) {
        double v = from ? x->lane[l].f : static_cast<double>(x->lane[l].i);
        out.lane[l].f = roundTo(d, v);
      } else {
        int64_t v = from ? static_cast<int64_t>(std::trunc(x->lane[l].f)) : x->lane[l].i;
        out.lane[l].i = decodeInt(d, encodeInt(d, v));
      }
    });
    out.kind = isFloat(d) ? ValueKind::Float : d == Dtype::pred ? ValueKind::Bool : ValueKind::Int;
    out.dtype = d;
    return true;
  }
  if (op.fn == CallFn::ElectSync) {
    out.kind = ValueKind::Bool;
    out.dtype = Dtype::pred;
    int first = std::countr_zero(mask);
    forLanes(mask, [&](int l) { out.lane[l].i = l == first; });
    return true;
  }
  llvm::SmallVector<const LaneValues *, 4> a; // arguments may be calls themselves
  for (int arg : op.args) {
    const LaneValues *v = evalOp(arg, w, mask);
    if (!v)
      return false;
    a.push_back(v);
  }
  auto needs = [&](size_t n) {
    return a.size() >= n ||
           fail(loc, fmt::format("'{}' takes {} argument{}", f, n, n == 1 ? "" : "s"));
  };
  switch (op.fn) {
  case CallFn::VoteAny:
  case CallFn::VoteAll:
  case CallFn::Ballot: {
    if (!needs(1))
      return false;
    uint32_t bits = 0;
    forLanes(mask, [&](int l) { bits |= (a[0]->lane[l].i ? 1u : 0u) << l; });
    bool ballot = op.fn == CallFn::Ballot;
    int64_t r = ballot ? bits : op.fn == CallFn::VoteAny ? bits != 0 : bits == mask;
    out.kind = ballot ? ValueKind::Int : ValueKind::Bool;
    out.dtype = ballot ? Dtype::u32 : Dtype::pred;
    forLanes(mask, [&](int l) { out.lane[l].i = r; });
    return true;
  }
  case CallFn::ShflXor:
  case CallFn::ShflIdx:
  case CallFn::ShflUp:
  case CallFn::ShflDown: {
    if (!needs(2))
      return false;
    out.kind = a[0]->kind;
    out.dtype = a[0]->dtype;
    int badLane = -1;
    forLanes(mask, [&](int l) {
      int64_t k = a[1]->lane[l].i, src = l;
      if (op.fn == CallFn::ShflXor)
        src = l ^ (k & 31);
      else if (op.fn == CallFn::ShflIdx)
        src = k & 31;
      else if (op.fn == CallFn::ShflUp)
        src = l - k >= 0 ? l - k : l;
      else
        src = l + k < 32 ? l + k : l;
      if (src < 0 || src > 31 || !(mask >> src & 1)) {
        badLane = l;
        return;
      }
      out.lane[l] = a[0]->lane[src];
    });
    if (badLane >= 0)
      return fail(loc, fmt::format("'{}' in lane {} reads an inactive lane", f, badLane));
    return true;
  }
  case CallFn::Select: {
    if (!needs(3))
      return false;
    const LaneValues &c = *a[0], &x = *a[1], &y = *a[2];
    out.kind = x.kind;
    out.dtype = x.dtype;
    forLanes(mask, [&](int l) { out.lane[l] = c.lane[l].i ? x.lane[l] : y.lane[l]; });
    if (isFloatKind(x.kind) && !isFloatKind(y.kind))
      forLanes(mask, [&](int l) {
        if (!c.lane[l].i)
          out.lane[l].f = static_cast<double>(y.lane[l].i);
      });
    return true;
  }
  default:
    break;
  }
  if (a.empty() || op.fn == CallFn::Unknown)
    return fail(loc, fmt::format("unknown function '{}'", f));
  return evalMath(op, a, mask, out);
}

bool CtaExecutor::evalMath(const ExprOp &op, llvm::ArrayRef<const LaneValues *> a, uint32_t mask,
                           LaneValues &out) {
  // Math on numbers: integers for min/max/abs of integers, otherwise floats of
  // the first non-literal dtype, evaluated in single precision (correctly
  // rounded; the GPU's .approx instructions may differ in the last bits).
  const CallFn fn = op.fn;
  bool anyFloat = false;
  Dtype d = Dtype::f64;
  bool literal = true;
  for (const LaneValues *v : a) {
    anyFloat |= isFloatKind(v->kind);
    if (v->kind == ValueKind::Float && literal) {
      d = v->dtype;
      literal = false;
    }
  }
  bool pair = fn == CallFn::Min || fn == CallFn::Max;
  if (!anyFloat && (pair || fn == CallFn::Abs)) {
    if (pair && a.size() < 2)
      return fail(op.ast->loc,
                  fmt::format("'{}' takes 2 arguments", static_cast<const Call &>(*op.ast).callee));
    out.kind = ValueKind::Int;
    out.dtype = a[0]->dtype;
    forLanes(mask, [&](int l) {
      int64_t x = a[0]->lane[l].i;
      out.lane[l].i = fn == CallFn::Abs   ? (x < 0 ? wrapSub(0, x) : x)
                      : fn == CallFn::Min ? std::min(x, a[1]->lane[l].i)
                                          : std::max(x, a[1]->lane[l].i);
    });
    return true;
  }
  if (literal)
    d = Dtype::f32;
  if (fn == CallFn::Fma) {
    // One rounding of the exact a * b + c: in double for f64, else fmaf.
    if (a.size() != 3)
      return fail(op.ast->loc, "'fma' takes 3 arguments");
    forLanes(mask, [&](int l) {
      double x = roundTo(d, asDouble(*a[0], l)), y = roundTo(d, asDouble(*a[1], l)),
             z = roundTo(d, asDouble(*a[2], l));
      out.lane[l].f = d == Dtype::f64
                          ? std::fma(x, y, z)
                          : roundTo(d, std::fmaf(static_cast<float>(x), static_cast<float>(y),
                                                 static_cast<float>(z)));
    });
    out.kind = ValueKind::Float;
    out.dtype = d;
    return true;
  }
  forLanes(mask, [&](int l) {
    float x = static_cast<float>(roundTo(d, asDouble(*a[0], l)));
    float y = a.size() > 1 ? static_cast<float>(roundTo(d, asDouble(*a[1], l))) : 0.0f;
    float r = 0;
    switch (fn) {
    case CallFn::Min:
      r = std::fmin(x, y);
      break;
    case CallFn::Max:
      r = std::fmax(x, y);
      break;
    case CallFn::Abs:
      r = std::fabs(x);
      break;
    case CallFn::Exp:
      r = std::exp(x);
      break;
    case CallFn::Exp2:
      r = ex2ApproxFtz(x); // what the lowering emits: ex2.approx.ftz.f32, measured
      break;
    case CallFn::Log:
      r = log32(x); // what the lowering emits: ts_log (simulator/Log32.h)
      break;
    case CallFn::Sqrt:
      r = std::sqrt(x);
      break;
    default: // rsqrt
      r = static_cast<float>(1.0 / std::sqrt(static_cast<double>(x)));
      break;
    }
    out.lane[l].f = d == Dtype::f64 ? static_cast<double>(r) : roundTo(d, r);
  });
  out.kind = ValueKind::Float;
  out.dtype = d;
  return true;
}

bool CtaExecutor::eval(const Expr &e, Warp &w, uint32_t mask, LaneValues &out) {
  int op = code_->op(e);
  if (op < 0)
    return fail(e->loc, "unresolved name");
  const LaneValues *v = evalOp(op, w, mask);
  if (!v)
    return false;
  out.kind = v->kind;
  out.dtype = v->dtype;
  forLanes(mask, [&](int l) { out.lane[l] = v->lane[l]; });
  return true;
}

} // namespace tilescope::sim
