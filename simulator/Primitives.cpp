// Reference semantics of the tile primitives: what a copy, fill, cast,
// elementwise operation, reduction or gemm does to the logical elements of its
// operands, whatever instruction a dispatch later picks. Elements are found
// through the operands' layouts (shared memory through Layout and its swizzle,
// register tiles through their owner tables), so a primitive executed by a
// warpgroup reads and writes exactly the registers its threads hold.
#include "simulator/CtaExecutor.h"
#include "simulator/Ex2Approx.h"
#include "simulator/Log32.h"
#include "simulator/Packed.h"

#include "ir/Intrinsics.h"
#include "simulator/Mma.h"
#include "simulator/ReduceOrder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <type_traits>

namespace tilescope::sim {

namespace {

bool isFloatKind(ValueKind k) {
  return k == ValueKind::Float || k == ValueKind::Literal;
}

// A register or memory element as a number, or a scalar operand.
struct Number {
  bool isFloat;
  double f;
  int64_t i;
};

Number decodeNumber(Dtype d, uint64_t bits) {
  if (isFloat(d))
    return {true, decodeFloat(d, bits), 0};
  return {false, 0, decodeInt(d, bits)};
}

uint64_t encodeNumber(Dtype d, const Number &n) {
  return n.isFloat ? encodeFloat(d, n.f) : encodeInt(d, n.i);
}

// One floating-point elementwise operation in T's arithmetic (float for f32
// and narrower dtypes, double for f64). rsqrt is 1/sqrt taken in double and
// rounded once into T.
template <typename T> T floatOp(IntrinsicId id, T a, T b) {
  if (id == IntrinsicId::Add)
    return a + b;
  if (id == IntrinsicId::Sub)
    return a - b;
  if (id == IntrinsicId::Mul)
    return a * b;
  if (id == IntrinsicId::Div)
    return a / b;
  if (id == IntrinsicId::Max)
    return std::fmax(a, b);
  if (id == IntrinsicId::Min)
    return std::fmin(a, b);
  if (id == IntrinsicId::Exp)
    return std::exp(a);
  if (id == IntrinsicId::Exp2) {
    if constexpr (std::is_same_v<T, float>)
      return ex2ApproxFtz(a); // ex2.approx.ftz.f32, as lowered (simulator/Ex2Approx.h)
    return std::exp2(a);
  }
  if (id == IntrinsicId::Log) {
    if constexpr (std::is_same_v<T, float>)
      return log32(a); // the lowering's ts_log, bit for bit (simulator/Log32.h)
    return std::log(a);
  }
  if (id == IntrinsicId::Sqrt)
    return std::sqrt(a);
  if (id == IntrinsicId::Rsqrt)
    return static_cast<T>(1.0 / std::sqrt(static_cast<double>(a)));
  if (id == IntrinsicId::Neg)
    return -a;
  if (id == IntrinsicId::Abs)
    return std::fabs(a);
  return 0;
}

// Arithmetic of elementwise operations in the destination's dtype: single
// precision for f32 and narrower floats (then rounded into the dtype), double
// for f64, 64-bit integers otherwise.
Number arith(IntrinsicId id, Dtype d, Number x, Number y) {
  if (!isFloat(d)) {
    int64_t a = x.isFloat ? static_cast<int64_t>(x.f) : x.i;
    int64_t b = y.isFloat ? static_cast<int64_t>(y.f) : y.i;
    int64_t r = 0;
    if (id == IntrinsicId::Add)
      r = a + b;
    else if (id == IntrinsicId::Sub)
      r = a - b;
    else if (id == IntrinsicId::Mul)
      r = a * b;
    else if (id == IntrinsicId::Div)
      r = b ? a / b : 0;
    else if (id == IntrinsicId::Max)
      r = std::max(a, b);
    else if (id == IntrinsicId::Min)
      r = std::min(a, b);
    else if (id == IntrinsicId::Neg)
      r = -a;
    else if (id == IntrinsicId::Abs)
      r = a < 0 ? -a : a;
    return {false, 0, r};
  }
  double a = x.isFloat ? x.f : static_cast<double>(x.i);
  double b = y.isFloat ? y.f : static_cast<double>(y.i);
  if (d == Dtype::f64)
    return {true, floatOp(id, a, b), 0};
  float r = floatOp(id, static_cast<float>(a), static_cast<float>(b));
  return {true, roundTo(d, r), 0};
}

const mma::MmaInstructionRow *pickMma(TargetKind target, bool warpgroup, Dtype d, Dtype a,
                                      Dtype b) {
  mma::MmaFamily family = mma::MmaFamily::MmaSync;
  if (target == TargetKind::sm_100a)
    family = mma::MmaFamily::Tcgen05;
  else if (target == TargetKind::sm_90a && warpgroup)
    family = mma::MmaFamily::Wgmma;
  for (const mma::MmaInstructionRow &row : mma::instructionTable())
    if (row.target == target && row.family == family && row.d == d && row.a == a && row.b == b)
      return &row;
  return nullptr;
}

// The identity the `shuffle.smem` dispatch starts each thread's partial
// from: 0 for sums, the largest finite float for min, its negation for max.
double reduceIdentity(IntrinsicId combine) {
  constexpr double kMaxFinite = 3.4028234663852886e38;
  return combine == IntrinsicId::Add ? 0.0 : combine == IntrinsicId::Max ? -kMaxFinite : kMaxFinite;
}

// Where each element of a register-tile region lives inside the scope
// `threads` (a whole number of warps), for the tree order; nullopt when the
// source is not such a tile or an element has other than one holder there.
std::optional<std::vector<HeldElement>> heldByScope(const BufferPlan &b, const Region &r,
                                                    ThreadRange threads,
                                                    const std::function<int64_t(int64_t)> &flatOf) {
  int64_t count = threads.end - threads.begin;
  if (b.scope != MemScope::Reg || !b.layout || count < kWarpSize || count % kWarpSize != 0 ||
      threads.begin % kWarpSize != 0)
    return std::nullopt;
  std::vector<HeldElement> held;
  for (int64_t i = 0; i < r.elements(); ++i) {
    int64_t flat = flatOf(i);
    if (flat < 0 || flat >= b.elements)
      return std::nullopt; // the logical-order path reports the bad read
    int holders = 0;
    for (int32_t k = b.ownerStart[flat]; k < b.ownerStart[flat + 1]; ++k)
      if (threads.contains(b.owners[k].first)) {
        held.push_back({b.owners[k].first - threads.begin, b.owners[k].second, i});
        ++holders;
      }
    if (holders != 1)
      return std::nullopt;
  }
  return held;
}

std::string regionText(const BufferPlan &b, const Region &r) {
  std::string s = b.name + "[";
  for (size_t i = 0; i < r.extent.size(); ++i)
    s += (i ? ", " : "") + std::to_string(r.extent[i]);
  return s + "]";
}

} // namespace

bool CtaExecutor::transposeSource(PrimitiveCall &call) {
  const CallStmt &c = *call.call;
  if (call.positional.size() < 2 || !call.positional[1].isRegion)
    return fail(c.loc, fmt::format("'{}' needs a source region", c.callee));
  Region &src = call.positional[1].region;
  size_t rank = src.extent.size();
  if (rank < 2)
    return fail(c.loc, fmt::format("'{}' with trans = true needs a source of at least two "
                                   "dimensions (rows and columns of each matrix)",
                                   c.callee));
  // A region is a view: swapping its last two dimensions reads it transposed.
  std::swap(src.extent[rank - 1], src.extent[rank - 2]);
  std::swap(src.dimOf[rank - 1], src.dimOf[rank - 2]);
  return true;
}

bool CtaExecutor::executePrimitive(const PrimitiveCall &call) {
  const CallStmt &c = *call.call;
  const std::string &op = c.callee;
  const IntrinsicId id = idOf(c);
  llvm::SMLoc loc = c.loc;
  ThreadRange threads = call.threads;
  auto region = [&](size_t i) -> const Region * {
    if (i < call.positional.size() && call.positional[i].isRegion)
      return &call.positional[i].region;
    return nullptr;
  };
  auto flag = [&](const char *kw, bool fallback) {
    auto it = call.keywords.find(kw);
    return it == call.keywords.end() ? fallback : it->second.value.i != 0;
  };
  // Element i of r, by `by` (default: every thread of the call).
  auto read = [&](const Region &r, int64_t i, std::optional<ThreadRange> by = std::nullopt,
                  int64_t known = -1) -> std::optional<uint64_t> {
    int64_t flat = known >= 0 ? known : flatInBounds(r, i);
    if (flat < 0) {
      fail(loc, fmt::format("'{}' reads outside '{}'", op, plan(r.buffer).name));
      return std::nullopt;
    }
    return readBits(r.buffer, flat, by.value_or(threads), loc);
  };
  auto write = [&](const Region &r, int64_t i, uint64_t bits,
                   std::optional<ThreadRange> by = std::nullopt, int64_t known = -1) {
    int64_t flat = known >= 0 ? known : flatInBounds(r, i);
    if (flat < 0)
      return fail(loc, fmt::format("'{}' writes outside '{}'", op, plan(r.buffer).name));
    return writeBits(r.buffer, flat, bits, by.value_or(threads), loc);
  };

  if (id == IntrinsicId::Sync)
    return true;
  const Region *dst = region(0);
  if (!dst)
    return fail(loc, fmt::format("'{}' needs a destination region", op));
  const BufferPlan &db = plan(dst->buffer);
  int64_t n = dst->elements();
  // fn(i, by, dstFlat, srcFlat) for every element i and the threads `by`
  // that do it: the call's threads at once, or, for a warp's share, each of
  // its threads that does element i (shareOf), one by one, with the
  // element's flat indices when known (else -1).
  int64_t done = call.warpShare ? 0 : n; // elements this call moves
  auto forElements = [&](const Region *src, auto &&fn) {
    if (!call.warpShare) {
      for (int64_t i = 0; i < n; ++i)
        if (!fn(i, threads, int64_t{-1}, int64_t{-1}))
          return false;
      return true;
    }
    int64_t last = -1;
    for (const ShareElement &e : warpShare(*dst, src, n, threads)) {
      done += e.element != last;
      last = e.element;
      if (!fn(e.element, ThreadRange{e.thread, e.thread + 1}, e.dstFlat, e.srcFlat))
        return false;
    }
    return true;
  };
  bool whole = !call.warpShare; // the whole-region paths move every element
  // A warp's share of a register destination with a layout is every element
  // its threads hold (shareOf): the whole-region paths move just those.
  bool ownedDst = call.warpShare && db.scope == MemScope::Reg && !db.privateRegs();

  if (id == IntrinsicId::Copy || id == IntrinsicId::CopyAsync || id == IntrinsicId::TmaLoad ||
      id == IntrinsicId::Ldmatrix || id == IntrinsicId::Stmatrix || id == IntrinsicId::Tcgen05Ld ||
      id == IntrinsicId::Tcgen05St) {
    const Region *src = region(1);
    if (!src)
      return fail(loc, fmt::format("'{}' needs a source region", op));
    const BufferPlan &sb = plan(src->buffer);
    if (src->elements() != n)
      return fail(loc, fmt::format("'{}' copies {} elements into {}", op, src->elements(), n));
    if (sb.dtype != db.dtype)
      return fail(loc, fmt::format("'{}' between {} and {}: use cast", op, dtypeName(sb.dtype),
                                   dtypeName(db.dtype)));
    bool async = (id == IntrinsicId::CopyAsync || id == IntrinsicId::TmaLoad) &&
                 sb.scope == MemScope::Global && db.scope == MemScope::Shared;
    if (async) {
      if (!checkTmaAlignment(*src, *dst, loc))
        return false;
      AsyncCopy copy;
      copy.dst = *dst;
      copy.src = *src;
      copy.barrier = call.barrier;
      copy.bytes = storageBytes(db.dtype, n);
      copy.loc = loc;
      stampAsync(copy, threads);
      if (call.barrier >= 0 && !barriers_[call.barrier].live())
        return fail(loc, fmt::format("copy signals {}, which is not initialised",
                                     barrierName(call.barrier)));
      enqueue(std::move(copy));
      return true;
    }
    if (whole && src->buffer != dst->buffer && fastRegion(*dst) &&
        gatherBits(*src, threads, bits_) && scatterBits(*dst, threads, bits_)) {
      countAccess(*src, false);
      countAccess(*dst, true);
    } else if (call.warpShare && src->buffer != dst->buffer &&
               copyShareToShared(*src, *dst, n, threads, done)) {
    } else if (!forElements(src, [&](int64_t i, ThreadRange by, int64_t to, int64_t from) {
                 auto bits = read(*src, i, by, from);
                 return bits && write(*dst, i, *bits, by, to);
               })) {
      return false;
    }
    stats_.elementsMoved += done;
    return true;
  }
  if (id == IntrinsicId::Fill) {
    if (call.positional.size() < 2 || call.positional[1].isRegion)
      return fail(loc, "'fill' needs a value");
    const Operand &v = call.positional[1];
    uint64_t bits =
        isFloatKind(v.kind) ? encodeFloat(db.dtype, v.value.f) : encodeInt(db.dtype, v.value.i);
    if ((whole || (ownedDst && fastRegion(*dst))) &&
        scatterBits(*dst, threads, std::span(&bits, 1), ownedDst)) {
      countAccess(*dst, true);
      return true;
    }
    return forElements(nullptr, [&](int64_t i, ThreadRange by, int64_t to, int64_t) {
      return write(*dst, i, bits, by, to);
    });
  }
  if (id == IntrinsicId::Cast) {
    const Region *src = region(1);
    if (!src || src->elements() != n)
      return fail(loc, "'cast' needs a source region of the destination's size");
    Dtype sd = plan(src->buffer).dtype;
    const BufferPlan &sp = plan(src->buffer);
    bool ownedSrc = ownedDst && sp.scope == MemScope::Reg && !sp.privateRegs();
    if ((whole || ownedSrc) && src->buffer != dst->buffer && fastRegion(*dst) &&
        gatherBits(*src, threads, bits_, ownedSrc)) {
      // decodeNumber and encodeNumber below, with the dtypes' kinds found once.
      const bool fromFloat = isFloat(sd), toFloat = isFloat(db.dtype);
      for (uint64_t &bits : bits_) {
        if (!fromFloat)
          bits = encodeInt(db.dtype, decodeInt(sd, bits));
        else if (toFloat)
          bits = encodeFloat(db.dtype, decodeFloat(sd, bits));
        else
          bits = encodeInt(db.dtype, static_cast<int64_t>(std::trunc(decodeFloat(sd, bits))));
      }
      if (scatterBits(*dst, threads, bits_, ownedSrc)) {
        countAccess(*src, false);
        countAccess(*dst, true);
        return true;
      }
    }
    return forElements(src, [&](int64_t i, ThreadRange by, int64_t to, int64_t from) {
      auto bits = read(*src, i, by, from);
      if (!bits)
        return false;
      Number x = decodeNumber(sd, *bits);
      if (x.isFloat && !isFloat(db.dtype))
        x = {false, 0, static_cast<int64_t>(std::trunc(x.f))};
      return write(*dst, i, encodeNumber(db.dtype, x), by, to);
    });
  }
  bool unary = isUnaryElementwise(id);
  bool binary = isElementwise(id) && !unary;
  if (binary || unary) {
    size_t arity = binary ? 2 : 1;
    if (call.positional.size() != arity + 1)
      return fail(loc, fmt::format("'{}' takes {} operands", op, arity));
    for (size_t k = 1; k <= arity; ++k)
      if (call.positional[k].isRegion && call.positional[k].region.elements() != n)
        return fail(loc, fmt::format("'{}' operand {} has {} elements, the destination {}", op, k,
                                     call.positional[k].region.elements(), n));
    // Read every operand before writing: the destination may be an operand.
    std::vector<Number> results(n);
    for (int64_t i = 0; i < n; ++i) {
      Number xs[2] = {{false, 0, 0}, {false, 0, 0}};
      for (size_t k = 1; k <= arity; ++k) {
        const Operand &o = call.positional[k];
        if (o.isRegion) {
          auto bits = read(o.region, i);
          if (!bits)
            return false;
          xs[k - 1] = decodeNumber(plan(o.region.buffer).dtype, *bits);
        } else if (isFloatKind(o.kind)) {
          xs[k - 1] = {true, o.value.f, 0};
        } else {
          xs[k - 1] = {false, 0, o.value.i};
        }
      }
      results[i] = arith(id, db.dtype, xs[0], xs[1]);
    }
    for (int64_t i = 0; i < n; ++i)
      if (!write(*dst, i, encodeNumber(db.dtype, results[i])))
        return false;
    return true;
  }
  if (isReduction(id)) {
    const Region *src = region(1);
    if (!src)
      return fail(loc, "a reduction needs a source region");
    IntrinsicId combine = id == IntrinsicId::ReduceSum   ? IntrinsicId::Add
                          : id == IntrinsicId::ReduceMax ? IntrinsicId::Max
                                                         : IntrinsicId::Min;
    Dtype sd = plan(src->buffer).dtype;
    auto axisIt = call.keywords.find("axis");
    int64_t axis = axisIt == call.keywords.end() ? -1 : axisIt->second.value.i;
    int64_t sn = src->elements();
    int64_t reduceExtent = axis < 0 ? sn : src->extent.at(axis);
    int64_t inner = 1;
    if (axis >= 0)
      for (size_t k = axis + 1; k < src->extent.size(); ++k)
        inner *= src->extent[k];
    int64_t outputs = sn / reduceExtent;
    if (outputs != n)
      return fail(loc, fmt::format("'{}' produces {} values into {} elements", op, outputs, n));
    // A full reduction of a register tile by a warp, warpgroup or CTA
    // combines in the tree order of simulator/ReduceOrder.h; any other
    // reduction combines each output's inputs in logical order, starting
    // from the first one. Both in the destination's arithmetic.
    std::optional<std::vector<HeldElement>> held;
    if (axis < 0 && isFloat(db.dtype))
      held = heldByScope(plan(src->buffer), *src, threads,
                         [&](int64_t i) { return flatInBounds(*src, i); });
    for (int64_t o = 0; o < outputs; ++o) {
      int64_t outer = o / inner, in = o % inner;
      Number acc{};
      if (held) {
        bool readFailed = false;
        auto total = treeReduce(
            *held, threads.end - threads.begin, reduceIdentity(combine),
            [&](double a, double b) {
              return arith(combine, db.dtype, {true, a, 0}, {true, b, 0}).f;
            },
            [&](int64_t i) -> std::optional<double> {
              auto bits = read(*src, i);
              if (!bits) {
                readFailed = true;
                return std::nullopt;
              }
              Number x = decodeNumber(sd, *bits);
              return x.isFloat ? x.f : static_cast<double>(x.i);
            });
        if (!total || readFailed)
          return false;
        acc = {true, *total, 0};
      }
      for (int64_t r = 0; !held && r < reduceExtent; ++r) {
        int64_t i = axis < 0 ? r : (outer * reduceExtent + r) * inner + in;
        auto bits = read(*src, i);
        if (!bits)
          return false;
        Number x = decodeNumber(sd, *bits);
        acc = r == 0 ? arith(IntrinsicId::Add, db.dtype, x, Number{x.isFloat, 0, 0})
                     : arith(combine, db.dtype, acc, x);
      }
      if (flag("accumulate", false)) {
        auto old = read(*dst, o);
        if (!old)
          return false;
        acc = arith(combine, db.dtype, decodeNumber(db.dtype, *old), acc);
      }
      if (!write(*dst, o, encodeNumber(db.dtype, acc)))
        return false;
    }
    return true;
  }
  if (id == IntrinsicId::Gemm || id == IntrinsicId::GemmAsync || id == IntrinsicId::WgmmaMmaAsync ||
      id == IntrinsicId::Tcgen05Mma) {
    const Region *a = region(1), *b = region(2);
    if (id == IntrinsicId::Tcgen05Mma)
      threads = {0, p_.threads}; // the accumulator lives in tensor memory
    if (!a || !b)
      return fail(loc, fmt::format("'{}' needs regions C, A and B", op));
    auto dims = [](const Region &r) {
      std::vector<int64_t> d;
      for (int64_t e : r.extent)
        if (e != 1)
          d.push_back(e);
      while (d.size() < 2)
        d.insert(d.begin(), 1);
      return d;
    };
    std::vector<int64_t> cd = dims(*dst), ad = dims(*a), bd = dims(*b);
    if (call.bRows) // B gathered from a CTA pair: N x K
      bd = {call.bRows, bd[1]};
    if (cd.size() != 2 || ad.size() != 2 || bd.size() != 2)
      return fail(loc, fmt::format("'{}' operands must be 2-D", op));
    // tcgen05.mma takes both operands K-major (its descriptors' common
    // form): A is M x K and B is N x K.
    bool ta = flag("transpose_a", false), tb = flag("transpose_b", id == IntrinsicId::Tcgen05Mma);
    int64_t M = cd[0], N = cd[1], K = ta ? ad[0] : ad[1];
    if ((ta ? ad[1] : ad[0]) != M || (tb ? bd[1] : bd[0]) != K || (tb ? bd[0] : bd[1]) != N)
      return fail(loc,
                  fmt::format("'{}' shapes do not agree: C {}, A {}{}, B {}{}", op,
                              regionText(db, *dst), regionText(plan(a->buffer), *a), ta ? "^T" : "",
                              regionText(plan(b->buffer), *b), tb ? "^T" : ""));
    Dtype ad_t = plan(a->buffer).dtype, bd_t = plan(b->buffer).dtype;
    bool accumulate = flag("accumulate", true);
    // Operands as row-major M x K codes, B transposed (N x K, so one output's
    // operands are contiguous) and the M x N accumulator as f32 bits.
    // Reused from call to call (a k-loop issues thousands): every element of
    // A and Bt is set below before it is read, C's too when it accumulates.
    thread_local std::vector<uint32_t> A, Bt, C;
    A.resize(M * K);
    Bt.resize(N * K);
    if (accumulate)
      C.resize(M * N);
    else
      C.assign(M * N, 0);
    auto aIndex = [&](int64_t i, int64_t k) { return ta ? k * M + i : i * K + k; };
    auto bIndex = [&](int64_t k, int64_t j) { return tb ? j * K + k : k * N + j; };
    auto toF32 = [&](uint64_t bits) {
      return db.dtype == Dtype::f32
                 ? static_cast<uint32_t>(bits)
                 : numerics::bitsOf(static_cast<float>(decodeFloat(db.dtype, bits)));
    };
    // B gathered from a CTA pair (call.bRows) comes as N x K codes already.
    auto pairB = [&](int64_t k, int64_t j) { return call.bBits[j * K + k]; };
    if (gatherBits(*a, threads, bits_) && (call.bRows || gatherBits(*b, threads, bitsB_)) &&
        (!accumulate || gatherBits(*dst, threads, bitsC_))) {
      for (int64_t i = 0; i < M; ++i)
        for (int64_t k = 0; k < K; ++k)
          A[i * K + k] = static_cast<uint32_t>(bits_[aIndex(i, k)]);
      if (call.bRows || tb) { // N x K already: row by row
        const uint64_t *from = call.bRows ? call.bBits.data() : bitsB_.data();
        for (int64_t i = 0; i < N * K; ++i)
          Bt[i] = static_cast<uint32_t>(from[i]);
      } else {
        for (int64_t k = 0; k < K; ++k)
          for (int64_t j = 0; j < N; ++j)
            Bt[j * K + k] = static_cast<uint32_t>(bitsB_[bIndex(k, j)]);
      }
      if (accumulate && db.dtype == Dtype::f32) // the common accumulator: a plain copy
        for (int64_t i = 0; i < M * N; ++i)
          C[i] = static_cast<uint32_t>(bitsC_[i]);
      else if (accumulate)
        for (int64_t i = 0; i < M * N; ++i)
          C[i] = toF32(bitsC_[i]);
      countAccess(*a, false);
      if (!call.bRows)
        countAccess(*b, false);
      if (accumulate)
        countAccess(*dst, false);
    } else {
      for (int64_t i = 0; i < M; ++i)
        for (int64_t k = 0; k < K; ++k) {
          auto bits = read(*a, aIndex(i, k));
          if (!bits)
            return false;
          A[i * K + k] = static_cast<uint32_t>(*bits);
        }
      for (int64_t k = 0; k < K; ++k)
        for (int64_t j = 0; j < N; ++j) {
          auto bits = call.bRows ? std::optional<uint64_t>(pairB(k, j)) : read(*b, bIndex(k, j));
          if (!bits)
            return false;
          Bt[j * K + k] = static_cast<uint32_t>(*bits);
        }
      for (int64_t i = 0; accumulate && i < M * N; ++i) {
        auto bits = read(*dst, i);
        if (!bits)
          return false;
        C[i] = toF32(*bits);
      }
    }
    if (call.keywords.count("scale_a") || call.keywords.count("scale_b")) {
      if (id != IntrinsicId::Tcgen05Mma)
        return fail(loc, fmt::format("'{}' takes no block scales (tcgen05.mma does)", op));
      if (!blockScaledMma(call, {M, N, K, db.dtype, ad_t, bd_t, A, Bt}, C))
        return false;
    } else if (ad_t == Dtype::f32 && bd_t == Dtype::f32) {
      // CUDA-core GEMM: one fma per product, in k order.
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          float acc = numerics::floatOf(C[i * N + j]);
          for (int64_t k = 0; k < K; ++k)
            acc = std::fmaf(numerics::floatOf(A[i * K + k]), numerics::floatOf(Bt[j * K + k]), acc);
          C[i * N + j] = numerics::bitsOf(acc);
        }
    } else {
      const mma::MmaInstructionRow *row = pickMma(
          p_.target, call.warpgroupScope || id == IntrinsicId::WgmmaMmaAsync, db.dtype, ad_t, bd_t);
      if (!row)
        return fail(loc, fmt::format("no tensor-core instruction of {} computes {} += {} x {}",
                                     targetInfo(p_.target).name, dtypeName(db.dtype),
                                     dtypeName(ad_t), dtypeName(bd_t)));
      if (row->status == mma::ModelStatus::Unknown)
        return fail(loc, fmt::format("the numerics of {} on {} are unknown ({}); the simulator "
                                     "does not guess",
                                     mma::instructionPattern(*row), targetInfo(p_.target).name,
                                     row->note));
      if (row->scaleBlock)
        return fail(loc, "a block-scaled instruction needs its scales: tcgen05.mma(..., scale_a "
                         "= SFA, scale_b = SFB) with the factors in tensor memory");
      // The instruction's K chunks, in order: one fused sum each.
      stats_.mmaInstructions += mma::instructionsCovering(*row, M, N, K);
      stats_.mmaSums += mma::fusedSumTile(*row, M, N, K, A, Bt, C);
    }
    bits_.resize(static_cast<size_t>(M * N));
    if (db.dtype == Dtype::f32)
      std::copy(C.begin(), C.begin() + M * N, bits_.begin());
    else
      for (int64_t i = 0; i < M * N; ++i)
        bits_[i] = encodeFloat(db.dtype, numerics::floatOf(C[i]));
    if (scatterBits(*dst, threads, bits_)) {
      countAccess(*dst, true);
      return true;
    }
    for (int64_t i = 0; i < M * N; ++i)
      if (!write(*dst, i, bits_[i]))
        return false;
    return true;
  }
  return fail(loc, fmt::format("tile primitive '{}' is not simulated yet", op));
}

} // namespace tilescope::sim
