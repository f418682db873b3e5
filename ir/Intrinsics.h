// The one table of calls the IR knows: tile primitives (copy, gemm, fill, ...,
// which take an execution scope) and native intrinsics (mbarrier, TMA,
// ldmatrix, wgmma, tcgen05, fences, named barriers, ...). Each call has an
// IntrinsicId and one declarative record (IntrinsicInfo, in Intrinsics.cpp):
// its operands with their roles and effects, keyword arguments with their
// allowed values, who must execute it together, which targets have it, how it
// completes (synchronously, or through an mbarrier's transaction count, a
// commit group, a wait) and through which proxy it touches memory, its MMA
// shapes and dtypes (ir/MmaShapes.h), and its PTX spelling. The checker,
// dispatch, the barrier skeleton, the simulator, the race checks and the
// emitter switch on the id and read the record; no pass compares a call's
// name with a string (tests/lit/cli/intrinsic-names.test counts them).
// docs/architecture.md says how to add an instruction.
#pragma once

#include "ir/MmaShapes.h"
#include "ir/Stmt.h"

#include <climits>
#include <optional>
#include <string_view>
#include <vector>

namespace tilescope {

// Every call of the IR. The order is the table's (Intrinsics.cpp checks it).
enum class IntrinsicId : uint8_t {
  // tile primitives
  Copy,
  CopyAsync,
  Gemm,
  GemmAsync,
  Fill,
  Cast,
  Sync,
  Add,
  Sub,
  Mul,
  Div,
  Max,
  Min,
  Exp,
  Exp2,
  Log,
  Sqrt,
  Rsqrt,
  Neg,
  Abs,
  ReduceSum,
  ReduceMax,
  ReduceMin,
  // mbarrier
  MbarrierInit,
  MbarrierArrive,
  MbarrierArriveExpectTx,
  MbarrierExpectTx,
  MbarrierCompleteTx,
  MbarrierWait,
  MbarrierInval,
  // TMA and cp.async
  TmaLoad,
  TmaStore,
  TmaStoreCommit,
  TmaStoreWait,
  CpAsync,
  CpAsyncCommit,
  CpAsyncWait,
  CpAsyncWaitAll,
  // warp-level data movement
  Ldmatrix,
  Stmatrix,
  // wgmma
  WgmmaMmaAsync,
  WgmmaFence,
  WgmmaCommitGroup,
  WgmmaWaitGroup,
  // tcgen05
  Tcgen05Alloc,
  Tcgen05Dealloc,
  Tcgen05RelinquishAllocPermit,
  Tcgen05Mma,
  Tcgen05Commit,
  Tcgen05Ld,
  Tcgen05St,
  Tcgen05WaitLd,
  Tcgen05WaitSt,
  Tcgen05FenceBeforeThreadSync,
  Tcgen05FenceAfterThreadSync,
  // fences, clusters, named barriers, registers
  FenceProxyAsync,
  FenceMbarrierInit,
  BarrierClusterArrive,
  BarrierClusterWait,
  DsmemLoad,
  DsmemStore,
  BarrierSync,
  BarrierArrive,
  SetmaxnregInc,
  SetmaxnregDec,
  // the device scale (docs/scales.md): peers' global memory over NVLink
  DevicePut,
  DeviceGet,
  DeviceSignal,
  DeviceWait,
  DeviceFence,
  DeviceBarrier,
  DeviceAllreduce,
  DeviceAllGather,
  DeviceReduceScatter,
  Unknown, // not a call of the table
};

// How many threads must reach a call together. Ordered: a condition that is
// uniform at level L admits calls that need at most L.
enum class Convergence : uint8_t { Thread, Warp, Warpgroup, Cta, Cluster, Grid };
std::string_view convergenceName(Convergence c);
Convergence convergenceOf(ExecScope s);

enum class ArgKind : uint8_t {
  Buffer,  // a buffer or a region of one
  Barrier, // one mbarrier (an element of a barrier array)
  Int,
  Bool,
  Number, // an integer or float scalar
  String,
  Operand, // a buffer region or a scalar (elementwise operands)
};

// The values an integer operand may take, checked where the operand is a
// constant (verifier/Resources.h): [min, max], a multiple of `multipleOf`,
// a power of two; `immediate` operands must be constants (PTX takes them as
// immediates or instruction suffixes). Launch-dependent ranges: a CTA rank
// in the cluster, [0, cluster size), or a CTA mask, [1, 2^cluster size).
struct IntRange {
  enum Launch : uint8_t { None, ClusterRank, ClusterMask };
  int64_t min = INT64_MIN, max = INT64_MAX;
  int64_t multipleOf = 1;
  bool powerOfTwo = false;
  bool immediate = false;
  Launch launch = None;
  bool constrained() const {
    return min != INT64_MIN || max != INT64_MAX || multipleOf != 1 || powerOfTwo || immediate ||
           launch != None;
  }
};

// What a call does to the memory an operand names.
enum class Access : uint8_t { None, Read, Write, ReadWrite };

struct ParamSpec {
  std::string_view name;
  ArgKind kind;
  bool required;
  IntRange range = {};
  Access access = Access::None;
  // String operands: the values it may take (empty: any).
  std::vector<std::string_view> allowed = {};
};

enum class CallClass : uint8_t { TilePrimitive, Native };

enum class TargetFeature : uint8_t { None, Sm90Plus, Wgmma, Tcgen05 };

// How a native's memory effects complete, as the barrier proofs, the
// simulator and the race checks model them (docs/semantics.md).
enum class Completion : uint8_t {
  Immediate,     // done when the issuing thread moves on
  MbarrierTx,    // complete_tx on the `mbar` keyword's barrier (TMA loads)
  BulkGroup,     // a tma.store_commit group, retired by tma.store_wait
  CpAsyncGroup,  // a cp_async.commit group, retired by cp_async.wait(_all)
  WgmmaGroup,    // a wgmma.commit_group group, retired by wgmma.wait_group
  Tcgen05Commit, // observed through tcgen05.commit on an mbarrier
  WaitLd,        // tcgen05.wait_ld
  WaitSt,        // tcgen05.wait_st
};

// Which proxy the call's memory accesses go through (docs/semantics.md,
// "Proxies"): generic-proxy writes need fence.proxy.async before the async
// proxy reads them.
enum class Proxy : uint8_t { None, Generic, Async };

struct IntrinsicInfo {
  IntrinsicId id;
  std::string_view name;
  CallClass cls;
  std::vector<ParamSpec> positional;
  std::vector<ParamSpec> keywords;
  Convergence convergence; // natives: who must execute it together
  TargetFeature feature;
  std::string_view summary;
  Completion completion = Completion::Immediate;
  Proxy proxy = Proxy::None;
  // The PTX instruction the emitter writes (natives). Empty for the device
  // scale's CTA-level calls, which lower onto the device runtime
  // (codegen/runtime/ts_devices.cuh), not onto one instruction.
  std::string_view ptx = {};
  // Tensor-core calls: the family of ir/MmaShapes.h whose rows (shape and
  // dtypes per target) the call may issue.
  std::optional<MmaFamily> mma = {};
  bool async() const { return completion != Completion::Immediate; }
};

const std::vector<IntrinsicInfo> &intrinsics();
const IntrinsicInfo *findIntrinsic(std::string_view name);
// The record of `id` (not Unknown).
const IntrinsicInfo &intrinsic(IntrinsicId id);
std::string_view intrinsicName(IntrinsicId id);
// The id of a call name; Unknown when the table has none.
IntrinsicId intrinsicIdOf(std::string_view name);
// The id of a call statement (its callee, without the scope prefix).
inline IntrinsicId idOf(const CallStmt &c) {
  return intrinsicIdOf(c.callee);
}
// The hardware unit (or group of instructions) a call belongs to, as the
// simulator and the emitter route calls.
enum class IntrinsicUnit : uint8_t {
  TilePrimitive,
  Mbarrier,
  Tma,
  CpAsync,
  Matrix,
  Wgmma,
  Tcgen05,
  Fence,
  Cluster,
  Dsmem,
  NamedBarrier,
  Registers,
  Device,
  Unknown,
};
IntrinsicUnit unitOf(IntrinsicId id);
// Elementwise tile primitives (add ... abs) and reductions.
bool isElementwise(IntrinsicId id);
bool isUnaryElementwise(IntrinsicId id);
bool isReduction(IntrinsicId id);
bool targetHas(TargetKind target, TargetFeature feature);
std::string_view featureDescription(TargetFeature feature);

// Expression-level functions (math, warp collectives, conversions).
struct ExprFunctionInfo {
  std::string_view name;
  size_t arity;
  Convergence result; // how uniform the result is across threads
  bool needsConvergedWarp;
};
const ExprFunctionInfo *findExprFunction(std::string_view name);
// Every name findIntrinsic / findExprFunction knows (for "did you mean").
std::vector<std::string_view> intrinsicNames();
std::vector<std::string_view> exprFunctionNames();

} // namespace tilescope
