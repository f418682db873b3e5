// What a PTX instruction is, for the condensed form and the lifting: one
// table from mnemonic (and the modifiers that change its meaning) to an
// instruction class and a short key naming its variant. Every analysis asks
// this table, never the spelling.
//
// Depends on Ptx.h only.
#pragma once

#include "ptx/Ptx.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace tilescope::ptx {

enum class InstrClass : uint8_t {
  TensorCore,     // mma.sync, wgmma.mma_async, tcgen05.mma
  TensorCoreSync, // wgmma.fence / commit_group / wait_group, tcgen05.commit / wait
  Tensor05Memory, // tcgen05.alloc / dealloc / ld / st / cp / relinquish
  Tma,            // cp.async.bulk(.tensor) loads, stores, reductions, prefetches
  BulkGroup,      // cp.async.bulk.commit_group / wait_group
  CpAsync,        // cp.async (non-bulk) and its commit / wait groups
  GlobalLoad,
  GlobalStore,
  SharedLoad,
  SharedStore,
  GenericLoad, // ld / st without a state space
  GenericStore,
  LocalMemory, // ld.local / st.local (spills, stack arrays)
  ParamLoad,
  Ldmatrix,
  Stmatrix,
  Shuffle,         // shfl, vote, redux, match, elect
  SpecialFunction, // ex2, lg2, rsqrt, rcp, sqrt, sin, cos, tanh
  Conversion,      // cvt, cvt.pack
  CtaBarrier,      // bar / barrier (CTA and named), barrier.cluster
  Mbarrier,
  Fence, // fence.*, membar
  Setmaxnreg,
  Atomic,    // atom, red
  Prefetch,  // prefetch, prefetch.tensormap, applypriority
  Branch,    // bra, brx, call, ret, exit, trap
  FloatMath, // fma, add.f32, mul.f32, max.f32, ...
  IntegerMath,
  Move,  // mov, selp, setp, cvta
  Other, // anything this table does not know: kept, counted
};
inline constexpr int kInstrClassCount = int(InstrClass::Other) + 1;
std::string_view className(InstrClass c);

struct Classification {
  InstrClass cls = InstrClass::Other;
  // The variant, short: "m64n64k16.f32.bf16.bf16", "global.v4.b32.L2::cache_hint",
  // "try_wait.parity", "bar.sync".
  std::string key;
};

Classification classify(const Instruction &in);

// Floating-point types among an instruction's modifiers decide FloatMath
// versus IntegerMath for arithmetic.
bool hasFloatType(const Instruction &in);

} // namespace tilescope::ptx
