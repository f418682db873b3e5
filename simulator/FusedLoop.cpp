// Fused loops (ExprCode.h, StmtCode::fusedBody): a loop with warp-uniform
// bounds whose body is nothing but fused stores, such as
// `for k in 0 .. K { acc[0] = acc[0] + A[i, k] * B[k, j] }`, runs whole
// iterations at once within the steps the scheduler gave the warp, instead
// of a scheduler step, a statement dispatch and the access resolutions per
// statement.
//
// It is the general stepping with the work that cannot change inside the loop
// done once. The body writes no slot, so only the counter changes between
// iterations; the compiler admits a body only when every access reads the
// counter, if at all, as a whole uniform subscript, so each access is resolved
// once (lane offsets included) and then moves by a fixed number of bytes per
// counter unit. The iterations are counted first, exactly as the steps would
// step the counter (wrapping add, `k < end`), stopping before an iteration
// whose subscripts would leave their range (the general path then reports it)
// and at the end of the steps the scheduler gave. They run statement by
// statement, in the steps' order; or, for an accumulation into registers,
// lane by lane (below). The statistics, the counter, its slot version and the
// frame end as the steps would leave them. Race detection turns it off.
#include "simulator/CtaExecutor.h"
#include "simulator/Lanes.h"

#include <algorithm>
#include <bit>

namespace tilescope::sim {

namespace {

// How an access moves with the loop counter: bytes per counter unit, and the
// counter values that keep it in range ([0, limit) for the subscripts that are
// the counter; no limit when none is).
struct CounterMove {
  int64_t bytes = 0;
  int64_t limit = INT64_MAX;
};

CounterMove counterMove(const FusedAccess &a, int counter) {
  CounterMove m;
  const int64_t elementBytes = a.global ? 4 : 8;
  for (int u = 0; u < a.uniformSlotCount; ++u) {
    const auto [slot, d] = a.uniformSlots[u];
    if (slot != counter)
      continue;
    m.bytes += a.stride[d] * elementBytes;
    m.limit = std::min(m.limit, a.extent[d]);
  }
  return m;
}

// A body store resolved at the first iteration's counter, with how far its
// accesses move per counter unit.
struct MovingStore {
  ResolvedStore at;
  std::array<int64_t, 3> inBytes{};
  int64_t targetBytes = 0;
};

// An accumulation: a one-store body whose target is a private register that
// the counter does not move and that is also exactly one of its operands,
// every other operand a global element or a constant, as in
// `acc[0] = acc[0] + A[i, k] * B[k, j]`. Lane l then reads and writes only
// its own register and reads global memory that nothing writes during the
// loop, so the lanes are independent: each lane's iterations may run one
// after the other with the register in a local, in the same order and with
// the same operations as statement by statement, hence the same bits.
struct Accumulation {
  int carried = -1; // the operand that is the target
  std::array<const uint8_t *, 3> base{};
  std::array<const int64_t *, 3> offset{};
  std::array<int64_t, 3> bytes{}; // per counter unit
  int64_t step = 0;
  uint8_t *target = nullptr;
  const int64_t *targetOffset = nullptr;
  std::array<int, kWarpSize> lanes{};
  int laneCount = 0;
  int64_t iterations = 0;
};

using Bits32 = uint32_t __attribute__((may_alias));
using Bits64 = uint64_t __attribute__((may_alias));

inline float f32At(const uint8_t *p) {
  return std::bit_cast<float>(*reinterpret_cast<const Bits32 *>(p));
}

// Lanes in groups of eight, the iterations inner: eight independent chains of
// operations per group keep the processor busy (one lane's chain waits on its
// previous result). A short last group repeats its last lane and stores only
// its own lanes. A register holds the f32 bits with the upper half zero, as
// writeBits keeps it.
//
// The chains run with `fast`, the operation without the NaN operand check of
// `exact` (Lanes.h, firstNaN), which gives the same bits whenever no operand
// is a NaN. A NaN operand makes the result a NaN, and every later result of
// the chain too (the register is an operand of each), so a lane that ends
// without a NaN met none; a lane that ends with one runs its chain again with
// `exact` from its first value.
template <int N, int Carried, typename Fast, typename Exact>
[[gnu::always_inline]] inline void accumulateLanes(const Accumulation &a, Fast fast, Exact exact) {
  constexpr int kGroup = 8;
  auto apply = [](auto op, const float *v) {
    if constexpr (N == 2)
      return op(v[0], v[1]);
    else
      return op(v[0], v[1], v[2]);
  };
  for (int g = 0; g < a.laneCount; g += kGroup) {
    float acc[kGroup], first[kGroup];
    const uint8_t *at[N][kGroup];
    for (int j = 0; j < kGroup; ++j) {
      const int l = a.lanes[std::min(g + j, a.laneCount - 1)];
      acc[j] = first[j] = f32At(a.target + a.targetOffset[l]);
      for (int i = 0; i < N; ++i)
        at[i][j] = a.base[i] + a.offset[i][l];
    }
    // Unrolled, so that the eight chains live in processor registers.
    for (int64_t it = 0; it < a.iterations; ++it) {
      int64_t move[N];
#pragma GCC unroll 3
      for (int i = 0; i < N; ++i)
        move[i] = it * a.step * a.bytes[i];
#pragma GCC unroll 8
      for (int j = 0; j < kGroup; ++j) {
        float v[N];
#pragma GCC unroll 3
        for (int i = 0; i < N; ++i)
          v[i] = i == Carried ? acc[j] : f32At(at[i][j] + move[i]);
        acc[j] = apply(fast, v);
      }
    }
    for (int j = 0; j < kGroup && g + j < a.laneCount; ++j) {
      if (std::isnan(acc[j])) [[unlikely]] {
        acc[j] = first[j];
        for (int64_t it = 0; it < a.iterations; ++it) {
          float v[N];
          for (int i = 0; i < N; ++i)
            v[i] = i == Carried ? acc[j] : f32At(at[i][j] + it * a.step * a.bytes[i]);
          acc[j] = apply(exact, v);
        }
      }
      const int l = a.lanes[g + j];
      *reinterpret_cast<Bits64 *>(a.target + a.targetOffset[l]) = std::bit_cast<uint32_t>(acc[j]);
    }
  }
}

template <int N, typename Fast, typename Exact>
[[gnu::always_inline]] inline void accumulateCarrying(const Accumulation &a, Fast fast,
                                                      Exact exact) {
  switch (a.carried) {
  case 0:
    return accumulateLanes<N, 0>(a, fast, exact);
  case 1:
    return accumulateLanes<N, 1>(a, fast, exact);
  default:
    if constexpr (N == 3)
      return accumulateLanes<N, 2>(a, fast, exact);
  }
}

// Each operator (with the rounding of Expressions.cpp, as computeLanes in
// FusedStore.cpp) in its own loop. Direct lambdas, so that fmaf is inlined
// into the processor-specific clone.
TILESCOPE_FUSED_CLONES
void accumulate(const FusedStore &f, const Accumulation &a) {
  if (f.shape == FusedStore::Shape::Binary) {
    switch (f.binary) {
    case BinaryOp::Add:
      return accumulateCarrying<2>(
          a, [](float x, float y) { return x + y; },
          [](float x, float y) { return f32Arith(BinaryOp::Add, x, y); });
    case BinaryOp::Sub:
      return accumulateCarrying<2>(
          a, [](float x, float y) { return x - y; },
          [](float x, float y) { return f32Arith(BinaryOp::Sub, x, y); });
    case BinaryOp::Mul:
      return accumulateCarrying<2>(
          a, [](float x, float y) { return x * y; },
          [](float x, float y) { return f32Arith(BinaryOp::Mul, x, y); });
    default:
      return accumulateCarrying<2>(
          a, [](float x, float y) { return x / y; },
          [](float x, float y) { return f32Arith(BinaryOp::Div, x, y); });
    }
  }
  switch (f.fmaVariant) {
  case 0:
    return accumulateCarrying<3>(
        a, [](float p, float q, float r) { return std::fmaf(p, q, r); },
        [](float p, float q, float r) { return f32Fma(0, p, q, r); });
  case 1:
    return accumulateCarrying<3>(
        a, [](float p, float q, float r) { return std::fmaf(p, q, -r); },
        [](float p, float q, float r) { return f32Fma(1, p, q, r); });
  default:
    return accumulateCarrying<3>(
        a, [](float p, float q, float r) { return std::fmaf(-p, q, r); },
        [](float p, float q, float r) { return f32Fma(-1, p, q, r); });
  }
}

// The accumulation a one-store body makes, if it is one (carried >= 0).
Accumulation accumulationOf(const FusedStore &f, const MovingStore &m, uint32_t mask) {
  Accumulation a;
  if (f.access[3].global || m.targetBytes != 0 ||
      (f.shape != FusedStore::Shape::Binary && f.shape != FusedStore::Shape::Fma))
    return a;
  int carried = -1;
  for (int i = 0; i < f.operands; ++i) {
    if (f.isConstant[i] || f.access[i].global)
      continue;
    // A register operand: it must be the target itself, read by every lane
    // where it writes.
    bool same = carried < 0 && m.at.in[i].base == m.at.target && m.inBytes[i] == 0;
    forLanes(mask, [&](int l) { same &= m.at.in[i].offset[l] == m.at.targetOffset[l]; });
    if (!same)
      return a;
    carried = i;
  }
  if (carried < 0)
    return a;
  a.carried = carried;
  for (int i = 0; i < f.operands; ++i) {
    a.base[i] = m.at.in[i].base;
    a.offset[i] = m.at.in[i].offset;
  }
  a.target = m.at.target;
  a.targetOffset = m.at.targetOffset;
  int count = 0; // a local: a.laneCount could alias the lanes as they are written
  forLanes(mask, [&](int l) { a.lanes[count++] = l; });
  a.laneCount = count;
  return a;
}

} // namespace

int CtaExecutor::runFusedLoop(Warp &w, int budget) {
  Frame &f = w.stack.back();
  if (!f.fusedBody || f.pc != 0 || everyAccessTraced() || !options_.scalarFastPaths)
    return 0;
  const int stores = static_cast<int>(f.block->size());
  const int perIteration = stores + 1; // the body's statements and the loop's end
  if (budget < perIteration)
    return 0;
  const uint32_t mask = f.mask;
  const int first = std::countr_zero(mask);
  const int64_t start = w.slots[f.slot].lane[first].i;
  const int64_t end = f.end[first], step = f.step[first];

  std::array<MovingStore, kMaxFusedLoopStores> body;
  int64_t limit = INT64_MAX; // the counter values every access admits: [0, limit)
  for (int s = 0; s < stores; ++s) {
    const FusedStore &fs = f.code[s].fused;
    MovingStore &m = body[s];
    if (!resolveFusedStore(fs, w, mask, m.at))
      return 0; // out of range now: the general path reports it
    for (int i = 0; i < fs.operands; ++i)
      if (!fs.isConstant[i]) {
        CounterMove c = counterMove(fs.access[i], f.slot);
        m.inBytes[i] = c.bytes;
        limit = std::min(limit, c.limit);
      }
    CounterMove c = counterMove(fs.access[3], f.slot);
    m.targetBytes = c.bytes;
    limit = std::min(limit, c.limit);
  }

  // The iterations the steps would run, and the counter after them.
  int64_t k = start, iterations = 0;
  bool loopOver = false;
  while (budget >= perIteration && k >= 0 && k < limit) {
    ++iterations;
    budget -= perIteration;
    k = static_cast<int64_t>(static_cast<uint64_t>(k) + static_cast<uint64_t>(step));
    if (!(k < end)) {
      loopOver = true;
      break;
    }
  }
  if (iterations == 0)
    return 0;

  const int active = mask == ~0u ? kWarpSize : std::popcount(mask);
  const FusedStore &only = f.code[0].fused;
  Accumulation acc = stores == 1 ? accumulationOf(only, body[0], mask) : Accumulation{};
  if (acc.carried >= 0) {
    acc.iterations = iterations;
    acc.step = step;
    acc.bytes = body[0].inBytes;
    accumulate(only, acc);
    for (int i = 0; i < only.operands; ++i)
      if (!only.isConstant[i] && only.access[i].global)
        stats_.globalBytesRead += 4 * active * iterations;
  } else {
    for (int64_t it = 0; it < iterations; ++it) {
      const int64_t moved = it * step;
      for (int s = 0; s < stores; ++s) {
        const MovingStore &m = body[s];
        ResolvedStore r = m.at;
        for (int i = 0; i < 3; ++i)
          r.in[i].base += moved * m.inBytes[i];
        r.target += moved * m.targetBytes;
        applyFusedStore(f.code[s].fused, mask, r);
      }
    }
  }

  const int64_t steps = iterations * perIteration;
  w.steps += steps;
  stats_.steps += steps;
  stats_.laneOps += iterations * stores * active;
  LaneValues &counter = w.slots[f.slot];
  forLanes(mask, [&](int l) { counter.lane[l].i = k; });
  // Each loop end writes the counter once: the same versions as the steps.
  w.slotWrites += static_cast<uint64_t>(iterations);
  w.slotVersion[f.slot] = w.slotWrites;
  if (loopOver)
    leaveBlock(w); // f is gone from here on
  return static_cast<int>(steps);
}

} // namespace tilescope::sim
