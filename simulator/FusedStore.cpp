// Fused store statements (ExprCode.h, FusedStore): `T[...] = X[...]`,
// `T[...] = X[...] op Y[...]` and `T[...] = Z[...] + X[...] * Y[...]` over f32
// elements of global tensors and private registers run as one pass over the
// lanes, instead of a pass per operation with a dispatch per operation
// (Expressions.cpp). Each access's warp-uniform subscripts are read from one
// lane and checked once; its varying subscripts become per-lane byte offsets
// that the warp keeps while the slots they read are unchanged
// (LaneAccess.h), so `acc[0] = acc[0] + A[i, k] * B[k, j]` in a loop over k
// computes the offsets of A and B once per loop, not once per iteration.
//
// The general path stays the reference: whenever this one could differ from
// it — race detection on, a subscript out of range (whose report names the
// first bad dimension and lane in evaluation order) — it declines before
// changing anything and the general path runs the statement.
#include "simulator/CtaExecutor.h"
#include "simulator/Lanes.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace tilescope::sim {

namespace {

using Bits32 = uint32_t __attribute__((may_alias));
using Bits64 = uint64_t __attribute__((may_alias));

// The varying subscripts of one access, for the offset pass.
struct Varying {
  int count = 0;
  std::array<const int64_t *, 3> index{};
  std::array<int64_t, 3> extent{};
  std::array<uint64_t, 3> stride{};
};

// Byte offsets of every lane (inactive lanes get offsets that are never used)
// and whether any lane's varying subscript is out of range. Written over named
// restrict pointers, signed compares and 32-bit products (a lane in range has
// an index below 2^30, and the compiler fuses only accesses whose strides are
// below 2^32) so that the loop becomes vector code.
template <int Count>
[[gnu::always_inline]] inline bool
laneOffsets(const int64_t *__restrict i0, const int64_t *__restrict i1,
            const int64_t *__restrict i2, int64_t *__restrict offset, const Varying &v, int shift,
            int64_t laneStride) {
  const int64_t e0 = v.extent[0], e1 = v.extent[1], e2 = v.extent[2];
  const uint32_t s0 = static_cast<uint32_t>(v.stride[0]), s1 = static_cast<uint32_t>(v.stride[1]),
                 s2 = static_cast<uint32_t>(v.stride[2]);
  int64_t bad = 0;
  for (int l = 0; l < kWarpSize; ++l) {
    uint64_t flat = 0;
    int64_t out = 0;
    if constexpr (Count >= 1) {
      out |= (i0[l] < 0) | (i0[l] >= e0);
      flat += uint64_t{static_cast<uint32_t>(i0[l])} * s0;
    }
    if constexpr (Count >= 2) {
      out |= (i1[l] < 0) | (i1[l] >= e1);
      flat += uint64_t{static_cast<uint32_t>(i1[l])} * s1;
    }
    if constexpr (Count >= 3) {
      out |= (i2[l] < 0) | (i2[l] >= e2);
      flat += uint64_t{static_cast<uint32_t>(i2[l])} * s2;
    }
    offset[l] = static_cast<int64_t>(flat << shift) + l * laneStride;
    bad |= out;
  }
  return bad != 0;
}

TILESCOPE_FUSED_CLONES
bool offsetsOf(const Varying &v, int shift, int64_t laneStride, int64_t *offset) {
  const int64_t *i0 = v.index[0], *i1 = v.index[1], *i2 = v.index[2];
  switch (v.count) {
  case 0:
    return laneOffsets<0>(i0, i1, i2, offset, v, shift, laneStride);
  case 1:
    return laneOffsets<1>(i0, i1, i2, offset, v, shift, laneStride);
  case 2:
    return laneOffsets<2>(i0, i1, i2, offset, v, shift, laneStride);
  default:
    return laneOffsets<3>(i0, i1, i2, offset, v, shift, laneStride);
  }
}

// The offsets of a constant operand: every lane reads the one value.
alignas(32) constexpr std::array<int64_t, kWarpSize> kSameElement{};

// The offsets of an evaluated operand: lane l's f32 at byte 4 l.
constexpr std::array<int64_t, kWarpSize> laneFloats() {
  std::array<int64_t, kWarpSize> o{};
  for (int l = 0; l < kWarpSize; ++l)
    o[l] = 4 * l;
  return o;
}
alignas(32) constexpr std::array<int64_t, kWarpSize> kLaneFloats = laneFloats();

// sink(l, op(operands of lane l)) for the active lanes. The offsets are
// restrict locals, so nothing is reloaded per lane; the bases are not (a
// register target may be one of the operands).
template <int N, typename Op, typename Sink>
[[gnu::always_inline]] inline void combine(uint32_t mask, const LaneElements *in, Op op,
                                           Sink sink) {
  const uint8_t *b0 = in[0].base, *b1 = in[N > 1 ? 1 : 0].base, *b2 = in[N > 2 ? 2 : 0].base;
  const int64_t *__restrict o0 = in[0].offset, *__restrict o1 = in[N > 1 ? 1 : 0].offset,
                            *__restrict o2 = in[N > 2 ? 2 : 0].offset;
  auto at = [](const uint8_t *base, int64_t offset) {
    return std::bit_cast<float>(*reinterpret_cast<const Bits32 *>(base + offset));
  };
  auto lane = [&](int l) {
    if constexpr (N == 1)
      sink(l, op(at(b0, o0[l])));
    else if constexpr (N == 2)
      sink(l, op(at(b0, o0[l]), at(b1, o1[l])));
    else
      sink(l, op(at(b0, o0[l]), at(b1, o1[l]), at(b2, o2[l])));
  };
  if (mask == ~0u) {
    for (int l = 0; l < kWarpSize; ++l)
      lane(l);
  } else {
    forLanes(mask, lane);
  }
}

// The values of the statement's right side with the rounding of
// Expressions.cpp (f32Binary, fmaLanes), each operator and multiply-add form
// in its own loop.
template <typename Sink>
[[gnu::always_inline]] inline void computeLanes(const FusedStore &f, uint32_t mask,
                                                const LaneElements *in, Sink sink) {
  // Direct calls, not helper lambdas: a lambda would not be inlined into the
  // processor-specific clone, and fmaf would become a library call.
  switch (f.shape) {
  case FusedStore::Shape::Copy:
    // The general path carries the value as a double, and the conversions
    // quiet a signalling NaN (the quiet bit set, the payload kept); so does this.
    return combine<1>(
        mask, in, [](float x) { return std::isnan(x) ? quietNaN(x) : x; }, sink);
  case FusedStore::Shape::Binary:
    switch (f.binary) {
    case BinaryOp::Add:
      return combine<2>(
          mask, in, [](float x, float y) { return f32Arith(BinaryOp::Add, x, y); }, sink);
    case BinaryOp::Sub:
      return combine<2>(
          mask, in, [](float x, float y) { return f32Arith(BinaryOp::Sub, x, y); }, sink);
    case BinaryOp::Mul:
      return combine<2>(
          mask, in, [](float x, float y) { return f32Arith(BinaryOp::Mul, x, y); }, sink);
    default:
      return combine<2>(
          mask, in, [](float x, float y) { return f32Arith(BinaryOp::Div, x, y); }, sink);
    }
  case FusedStore::Shape::Fma:
    switch (f.fmaVariant) {
    case 0:
      return combine<3>(
          mask, in, [](float p, float q, float r) { return f32Fma(0, p, q, r); }, sink);
    case 1:
      return combine<3>(
          mask, in, [](float p, float q, float r) { return f32Fma(1, p, q, r); }, sink);
    default:
      return combine<3>(
          mask, in, [](float p, float q, float r) { return f32Fma(-1, p, q, r); }, sink);
    }
  case FusedStore::Shape::None:
    return;
  }
}

// Into an array: the stores of a global target come after every read, since
// another lane may read the element this one writes.
TILESCOPE_FUSED_CLONES
void computeValues(const FusedStore &f, uint32_t mask, const LaneElements *in, float *values) {
  float *__restrict out = values;
  computeLanes(f, mask, in, [out](int l, float v) { out[l] = v; });
}

// Straight into a register target: lane l's registers are read and written by
// lane l only (its value is computed from its reads first), so each lane may
// store at once. A register holds the f32 bits with the upper half zero, as
// writeBits keeps it.
TILESCOPE_FUSED_CLONES
void computeIntoRegisters(const FusedStore &f, uint32_t mask, const LaneElements *in, uint8_t *base,
                          const int64_t *offsets) {
  const int64_t *__restrict offset = offsets;
  computeLanes(f, mask, in, [base, offset](int l, float v) {
    *reinterpret_cast<Bits64 *>(base + offset[l]) = std::bit_cast<uint32_t>(v);
  });
}

} // namespace

bool CtaExecutor::laneOffsetsOf(const FusedAccess &a, Warp &w, uint32_t mask, FusedOffsets &out) {
  Varying v;
  for (int d = 0; d < a.dims; ++d) {
    if (a.uniform[d])
      continue;
    const LaneValues *sub = evalOp(a.subscript[d], w, mask);
    if (!sub)
      return false;
    v.index[v.count] = &sub->lane[0].i;
    v.extent[v.count] = a.extent[d];
    v.stride[v.count] = static_cast<uint64_t>(a.stride[d]);
    ++v.count;
  }
  const int shift = a.owned ? 0 : a.global ? 2 : 3;
  const int64_t laneStride = a.global || a.owned ? 0 : p_.regsPerThread * 8;
  bool bad = offsetsOf(v, shift, laneStride, out.offset.data());
  if (bad && mask != ~0u) {
    // Only the active lanes' subscripts count.
    bad = false;
    forLanes(mask, [&](int l) {
      for (int d = 0; d < v.count; ++d)
        bad |= v.index[d][l] < 0 || v.index[d][l] >= v.extent[d];
    });
  }
  if (!bad && a.owned)
    bad = !ownedOffsets(a, w, mask, out.offset);
  out.valid = !bad && a.cacheable;
  out.mask = mask;
  for (int i = 0; i < a.slotCount; ++i)
    out.versions[i] = w.slotVersion[a.slots[i]];
  return !bad;
}

// Element offsets (flat, every lane) to the byte offsets of the registers
// that hold them in each active lane's own thread, from the warp's first
// register. An element the thread holds in none of its registers, or in two
// (writeBits would write both), is left to the general path, which reports
// or writes it.
bool CtaExecutor::ownedOffsets(const FusedAccess &a, const Warp &w, uint32_t mask,
                               std::array<int64_t, kWarpSize> &offset) const {
  const BufferPlan &b = p_.buffers[a.buffer];
  const int64_t perThread = p_.regsPerThread;
  bool ok = true;
  for (int l = 0; l < kWarpSize; ++l) {
    const int64_t flat = offset[l];
    offset[l] = (l * perThread + b.regBase) * 8; // inactive lanes: never read
    if (!(mask >> l & 1u))
      continue;
    const int32_t t = w.id * 32 + l;
    int found = 0;
    for (int32_t k = b.ownerStart[flat]; k < b.ownerStart[flat + 1]; ++k) {
      if (b.owners[k].first != t)
        continue;
      offset[l] = (l * perThread + b.regBase + b.owners[k].second) * 8;
      ++found;
    }
    ok &= found == 1;
  }
  return ok;
}

bool CtaExecutor::resolveAccess(const FusedAccess &a, Warp &w, uint32_t mask, uint8_t *&base,
                                const int64_t *&offsets) {
  if (a.owned) {
    base = reinterpret_cast<uint8_t *>(regs_.data() + w.id * 32 * p_.regsPerThread);
    if (!a.byValue || !a.cacheable)
      return cachedOffsets(a, w, mask, offsets);
    // The offsets by the values of the (uniform) slots the subscripts read.
    const int first = std::countr_zero(mask);
    OwnedOffsetsKey key{a.cache, mask, {}};
    for (int i = 0; i < a.slotCount; ++i)
      key.values[i] = w.slots[a.slots[i]].lane[first].i;
    auto it = w.ownedOffsets.find(key);
    if (it == w.ownedOffsets.end()) {
      FusedOffsets computed;
      if (!laneOffsetsOf(a, w, mask, computed))
        return false;
      it = w.ownedOffsets.emplace(key, computed.offset).first;
    }
    offsets = it->second.data();
    return true;
  }
  if (a.global)
    base = tensors_[a.tensor].bytes.data();
  else
    base = reinterpret_cast<uint8_t *>(regs_.data() + (w.id * 32 * p_.regsPerThread + a.regBase));
  const int first = std::countr_zero(mask);
  int64_t constant = a.constantOffset;
  for (int u = 0; u < a.uniformSlotCount; ++u) {
    const auto [slot, d] = a.uniformSlots[u];
    const int64_t i = w.slots[slot].lane[first].i;
    if (i < 0 || i >= a.extent[d])
      return false;
    constant += i * a.stride[d];
  }
  for (int u = 0; u < a.uniformEvaluatedCount; ++u) {
    const int d = a.uniformEvaluated[u];
    const LaneValues *sub = evalOp(a.subscript[d], w, mask);
    if (!sub)
      return false;
    const int64_t i = sub->lane[first].i;
    if (i < 0 || i >= a.extent[d])
      return false;
    constant += i * a.stride[d];
  }
  base += constant * (a.global ? 4 : 8);
  return cachedOffsets(a, w, mask, offsets);
}

// The access's lane offsets as the warp last computed them while the slots
// they read kept their versions, else computed afresh.
bool CtaExecutor::cachedOffsets(const FusedAccess &a, Warp &w, uint32_t mask,
                                const int64_t *&offsets) {
  FusedOffsets &cached = w.fusedOffsets[a.cache];
  bool fresh = cached.valid && cached.mask == mask;
  for (int i = 0; i < a.slotCount && fresh; ++i)
    fresh = cached.versions[i] == w.slotVersion[a.slots[i]];
  if (!fresh && !laneOffsetsOf(a, w, mask, cached))
    return false;
  offsets = cached.offset.data();
  return true;
}

bool CtaExecutor::resolveFusedStore(const FusedStore &f, Warp &w, uint32_t mask,
                                    ResolvedStore &out) {
  for (int i = 0; i < f.operands; ++i) {
    if (f.isConstant[i]) {
      out.in[i] = {reinterpret_cast<const uint8_t *>(&f.constant[i]), kSameElement.data()};
      continue;
    }
    if (f.evaluated[i] >= 0)
      continue;
    uint8_t *base = nullptr;
    if (!resolveAccess(f.access[i], w, mask, base, out.in[i].offset))
      return false;
    out.in[i].base = base;
  }
  if (!resolveAccess(f.access[3], w, mask, out.target, out.targetOffset))
    return false;
  // Every access is in range, so the general path would evaluate each operand
  // without an error of its own before this one: an error here is the
  // statement's (failure_ is set; the caller does not repeat it).
  for (int i = 0; i < f.operands; ++i) {
    if (f.evaluated[i] < 0)
      continue;
    const LaneValues *v = evalOp(f.evaluated[i], w, mask);
    // Not f32 (the general path would not contract): declined, nothing read
    // that a second evaluation would count again.
    if (!v || v->kind != ValueKind::Float || v->dtype != Dtype::f32)
      return false;
    std::array<float, kWarpSize> &lanes = evaluatedLanes_[i];
    forLanes(mask, [&](int l) { lanes[l] = static_cast<float>(v->lane[l].f); });
    out.in[i] = {reinterpret_cast<const uint8_t *>(lanes.data()), kLaneFloats.data()};
  }
  return true;
}

void CtaExecutor::applyFusedStore(const FusedStore &f, uint32_t mask, const ResolvedStore &r) {
  const int active = mask == ~0u ? kWarpSize : std::popcount(mask);
  for (int i = 0; i < f.operands; ++i)
    if (!f.isConstant[i] && f.access[i].global)
      stats_.globalBytesRead += 4 * active;
  const FusedAccess &target = f.access[3];
  if (!target.global) {
    computeIntoRegisters(f, mask, r.in.data(), r.target, r.targetOffset);
    return;
  }
  alignas(32) std::array<float, kWarpSize> values;
  computeValues(f, mask, r.in.data(), values.data());
  HostTensor &t = tensors_[target.tensor];
  const int64_t first = (r.target - t.bytes.data()) / 4;
  uint8_t *targetBase = r.target;
  const int64_t *targetOffset = r.targetOffset;
  forLanes(mask, [&](int l) {
    *reinterpret_cast<Bits32 *>(targetBase + targetOffset[l]) = std::bit_cast<uint32_t>(values[l]);
    t.written[first + targetOffset[l] / 4] = 1;
  });
  stats_.globalBytesWritten += 4 * active;
}

bool CtaExecutor::execFusedStore(Warp &w, uint32_t mask, const FusedStore &f) {
  if (everyAccessTraced() || !options_.scalarFastPaths)
    return false;
  ResolvedStore r;
  if (!resolveFusedStore(f, w, mask, r))
    return false;
  applyFusedStore(f, mask, r);
  return true;
}

} // namespace tilescope::sim
