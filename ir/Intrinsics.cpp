#include "ir/Intrinsics.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <utility>

namespace tilescope {

std::string_view convergenceName(Convergence c) {
  switch (c) {
  case Convergence::Thread:
    return "thread";
  case Convergence::Warp:
    return "warp";
  case Convergence::Warpgroup:
    return "warpgroup";
  case Convergence::Cta:
    return "CTA";
  case Convergence::Cluster:
    return "cluster";
  case Convergence::Grid:
    return "grid";
  }
  return "?";
}

Convergence convergenceOf(ExecScope s) {
  switch (s) {
  case ExecScope::Thread:
    return Convergence::Thread;
  case ExecScope::Warp:
    return Convergence::Warp;
  case ExecScope::Warpgroup:
    return Convergence::Warpgroup;
  case ExecScope::Cta:
    return Convergence::Cta;
  case ExecScope::Cluster:
    return Convergence::Cluster;
  }
  return Convergence::Thread;
}

namespace {
using K = ArgKind;
using I = IntrinsicId;
constexpr auto TP = CallClass::TilePrimitive;
constexpr auto NT = CallClass::Native;
// Operand ranges (PTX ISA): arrival and transaction counts below 2^20,
// parities 0 or 1, named barrier ids below 16 (their thread counts are the
// named-barrier check's: a multiple of 32 up to the CTA's threads),
// setmaxnreg counts multiples of 8 in [24, 256], wgmma.wait_group 0 to 7.
constexpr int64_t kCountMax = (int64_t{1} << 20) - 1;
constexpr IntRange kArrivals{1, kCountMax};
constexpr IntRange kTxBytes{0, kCountMax};
constexpr IntRange kGroupsPending{0, INT64_MAX, 1, false, true};
constexpr IntRange kCtaGroup{1, 2, 1, false, true};
constexpr IntRange kMatrices{1, 4, 1, true, true};
constexpr IntRange kRank{0, INT64_MAX, 1, false, false, IntRange::ClusterRank};
constexpr IntRange kMask{1, INT64_MAX, 1, false, false, IntRange::ClusterMask};
// tcgen05.ld / tcgen05.st shapes (PTX ISA): lanes x bits per repetition.
const std::vector<std::string_view> kTmemShapes = {"32x32b", "16x64b", "16x128b", "16x256b",
                                                   "16x32bx2"};
constexpr auto Rd = Access::Read, Wr = Access::Write, RdWr = Access::ReadWrite;
constexpr auto T = Convergence::Thread, W = Convergence::Warp, WG = Convergence::Warpgroup,
               CTA = Convergence::Cta;

std::vector<IntrinsicInfo> buildTable() {
  std::vector<IntrinsicInfo> t = {
      // --- tile primitives: the scope prefix says who executes them ---
      {I::Copy,
       "copy",
       TP,
       {{"dst", K::Buffer, true, {}, Wr}, {"src", K::Buffer, true, {}, Rd}},
       {},
       T,
       TargetFeature::None,
       "copy a tile between memory scopes"},
      {I::CopyAsync,
       "copy_async",
       TP,
       {{"dst", K::Buffer, true, {}, Wr}, {"src", K::Buffer, true, {}, Rd}},
       {{"mbar", K::Barrier, false}},
       T,
       TargetFeature::None,
       "asynchronous copy; completion signalled on `mbar` (TMA) or a group"},
      {I::Gemm,
       "gemm",
       TP,
       {{"c", K::Buffer, true, {}, RdWr},
        {"a", K::Buffer, true, {}, Rd},
        {"b", K::Buffer, true, {}, Rd}},
       {{"transpose_a", K::Bool, false},
        {"transpose_b", K::Bool, false},
        {"accumulate", K::Bool, false}},
       T,
       TargetFeature::None,
       "C += A * B on a tile"},
      {I::GemmAsync,
       "gemm_async",
       TP,
       {{"c", K::Buffer, true, {}, RdWr},
        {"a", K::Buffer, true, {}, Rd},
        {"b", K::Buffer, true, {}, Rd}},
       {{"transpose_a", K::Bool, false},
        {"transpose_b", K::Bool, false},
        {"accumulate", K::Bool, false},
        {"mbar", K::Barrier, false}},
       T,
       TargetFeature::None,
       "asynchronous gemm; completion on `mbar` or a wait"},
      {I::Fill,
       "fill",
       TP,
       {{"dst", K::Buffer, true, {}, Wr}, {"value", K::Number, true}},
       {},
       T,
       TargetFeature::None,
       "set every element of a tile"},
      {I::Cast,
       "cast",
       TP,
       {{"dst", K::Buffer, true, {}, Wr}, {"src", K::Buffer, true, {}, Rd}},
       {},
       T,
       TargetFeature::None,
       "convert a tile to the destination dtype (round to nearest even)"},
      {I::Sync,
       "sync",
       TP,
       {},
       {},
       T,
       TargetFeature::None,
       "barrier for the scope: warp.sync, cta.sync, cluster.sync"},
  };
  for (auto [id, op] : {std::pair{I::Add, "add"},
                        {I::Sub, "sub"},
                        {I::Mul, "mul"},
                        {I::Div, "div"},
                        {I::Max, "max"},
                        {I::Min, "min"}})
    t.push_back({id,
                 op,
                 TP,
                 {{"dst", K::Buffer, true, {}, Wr},
                  {"a", K::Operand, true, {}, Rd},
                  {"b", K::Operand, true, {}, Rd}},
                 {},
                 T,
                 TargetFeature::None,
                 "elementwise binary operation"});
  for (auto [id, op] : {std::pair{I::Exp, "exp"},
                        {I::Exp2, "exp2"},
                        {I::Log, "log"},
                        {I::Sqrt, "sqrt"},
                        {I::Rsqrt, "rsqrt"},
                        {I::Neg, "neg"},
                        {I::Abs, "abs"}})
    t.push_back({id,
                 op,
                 TP,
                 {{"dst", K::Buffer, true, {}, Wr}, {"a", K::Operand, true, {}, Rd}},
                 {},
                 T,
                 TargetFeature::None,
                 "elementwise unary operation"});
  for (auto [id, op] : {std::pair{I::ReduceSum, "reduce_sum"},
                        {I::ReduceMax, "reduce_max"},
                        {I::ReduceMin, "reduce_min"}})
    t.push_back({id,
                 op,
                 TP,
                 {{"dst", K::Buffer, true, {}, RdWr}, {"src", K::Buffer, true, {}, Rd}},
                 {{"axis", K::Int, false}, {"accumulate", K::Bool, false}},
                 T,
                 TargetFeature::None,
                 "reduction over one axis, or over everything"});

  // Every tile primitive may force one of dispatch's implementations by name.
  for (IntrinsicInfo &primitive : t)
    primitive.keywords.push_back({"dispatch", K::String, false});

  std::vector<IntrinsicInfo> natives = {
      // --- mbarrier ---
      {I::MbarrierInit,
       "mbarrier.init",
       NT,
       {{"bar", K::Barrier, true, {}, RdWr}},
       {{"count", K::Int, true, kArrivals}},
       T,
       TargetFeature::Sm90Plus,
       "initialise an mbarrier with an arrival count",
       Completion::Immediate,
       Proxy::Generic,
       "mbarrier.init.shared::cta.b64"},
      {I::MbarrierArrive,
       "mbarrier.arrive",
       NT,
       {{"bar", K::Barrier, true, {}, RdWr}},
       {{"count", K::Int, false, kArrivals}, {"cta", K::Int, false, kRank}},
       T,
       TargetFeature::Sm90Plus,
       "arrive on the current phase (cta = r: on CTA r of the cluster)",
       Completion::Immediate,
       Proxy::Generic,
       "mbarrier.arrive.shared::cta.b64"},
      {I::MbarrierArriveExpectTx,
       "mbarrier.arrive_expect_tx",
       NT,
       {{"bar", K::Barrier, true, {}, RdWr}},
       {{"bytes", K::Int, true, kTxBytes}},
       T,
       TargetFeature::Sm90Plus,
       "arrive and raise the transaction count",
       Completion::Immediate,
       Proxy::Generic,
       "mbarrier.arrive.expect_tx.shared::cta.b64"},
      {I::MbarrierExpectTx,
       "mbarrier.expect_tx",
       NT,
       {{"bar", K::Barrier, true, {}, RdWr}},
       {{"bytes", K::Int, true, kTxBytes}},
       T,
       TargetFeature::Sm90Plus,
       "raise the transaction count",
       Completion::Immediate,
       Proxy::Generic,
       "mbarrier.expect_tx.shared::cta.b64"},
      {I::MbarrierCompleteTx,
       "mbarrier.complete_tx",
       NT,
       {{"bar", K::Barrier, true, {}, RdWr}},
       {{"bytes", K::Int, true, kTxBytes}},
       T,
       TargetFeature::Sm90Plus,
       "lower the transaction count",
       Completion::Immediate,
       Proxy::Generic,
       "mbarrier.complete_tx.shared::cta.b64"},
      {I::MbarrierWait,
       "mbarrier.wait",
       NT,
       {{"bar", K::Barrier, true, {}, Rd}},
       {{"parity", K::Int, true, {0, 1}}},
       T,
       TargetFeature::Sm90Plus,
       "wait until the phase with this parity completed",
       Completion::Immediate,
       Proxy::Generic,
       "mbarrier.try_wait.parity.shared::cta.b64"},
      {I::MbarrierInval,
       "mbarrier.inval",
       NT,
       {{"bar", K::Barrier, true, {}, Wr}},
       {},
       T,
       TargetFeature::Sm90Plus,
       "invalidate before reusing the barrier's memory",
       Completion::Immediate,
       Proxy::Generic,
       "mbarrier.inval.shared::cta.b64"},
      // --- TMA and cp.async ---
      {I::TmaLoad,
       "tma.load",
       NT,
       {{"dst", K::Buffer, true, {}, Wr}, {"src", K::Buffer, true, {}, Rd}},
       {{"mbar", K::Barrier, true}, {"multicast", K::Int, false, kMask}},
       T,
       TargetFeature::Sm90Plus,
       "cp.async.bulk.tensor global -> shared, complete_tx on mbar (multicast = CTA mask)",
       Completion::MbarrierTx,
       Proxy::Async,
       "cp.async.bulk.tensor"},
      {I::TmaStore,
       "tma.store",
       NT,
       {{"dst", K::Buffer, true, {}, Wr}, {"src", K::Buffer, true, {}, Rd}},
       {},
       T,
       TargetFeature::Sm90Plus,
       "cp.async.bulk.tensor shared -> global",
       Completion::BulkGroup,
       Proxy::Async,
       "cp.async.bulk.tensor"},
      {I::TmaStoreCommit,
       "tma.store_commit",
       NT,
       {},
       {},
       T,
       TargetFeature::Sm90Plus,
       "commit bulk stores",
       Completion::Immediate,
       Proxy::None,
       "cp.async.bulk.commit_group"},
      {I::TmaStoreWait,
       "tma.store_wait",
       NT,
       {{"n", K::Int, true, kGroupsPending}},
       {{"read", K::Bool, false}},
       T,
       TargetFeature::Sm90Plus,
       "wait until at most n bulk store groups are pending (read = true: have read their "
       "source)",
       Completion::Immediate,
       Proxy::None,
       "cp.async.bulk.wait_group"},
      {I::CpAsync,
       "cp_async",
       NT,
       {{"dst", K::Buffer, true, {}, Wr}, {"src", K::Buffer, true, {}, Rd}},
       {},
       T,
       TargetFeature::None,
       "cp.async global -> shared (4, 8 or 16 bytes)",
       Completion::CpAsyncGroup,
       Proxy::Generic,
       "cp.async.cg.shared.global"},
      {I::CpAsyncCommit,
       "cp_async.commit",
       NT,
       {},
       {},
       T,
       TargetFeature::None,
       "commit a cp.async group",
       Completion::Immediate,
       Proxy::None,
       "cp.async.commit_group"},
      {I::CpAsyncWait,
       "cp_async.wait",
       NT,
       {{"n", K::Int, true, kGroupsPending}},
       {},
       T,
       TargetFeature::None,
       "wait until at most n cp.async groups are pending",
       Completion::Immediate,
       Proxy::None,
       "cp.async.wait_group"},
      {I::CpAsyncWaitAll,
       "cp_async.wait_all",
       NT,
       {},
       {},
       T,
       TargetFeature::None,
       "commit the open cp.async group and wait for every group",
       Completion::Immediate,
       Proxy::None,
       "cp.async.wait_all"},
      // --- warp-level data movement ---
      {I::Ldmatrix,
       "ldmatrix",
       NT,
       {{"dst", K::Buffer, true, {}, Wr}, {"src", K::Buffer, true, {}, Rd}},
       {{"num", K::Int, false, kMatrices}, {"trans", K::Bool, false}},
       W,
       TargetFeature::None,
       "load 8x8 b16 matrices from shared memory into a warp's registers",
       Completion::Immediate,
       Proxy::Generic,
       "ldmatrix.sync.aligned.m8n8"},
      {I::Stmatrix,
       "stmatrix",
       NT,
       {{"dst", K::Buffer, true, {}, Wr}, {"src", K::Buffer, true, {}, Rd}},
       {{"num", K::Int, false, kMatrices}, {"trans", K::Bool, false}},
       W,
       TargetFeature::Sm90Plus,
       "store 8x8 b16 matrices from a warp's registers to shared memory",
       Completion::Immediate,
       Proxy::Generic,
       "stmatrix.sync.aligned.m8n8"},
      // --- wgmma ---
      {I::WgmmaMmaAsync,
       "wgmma.mma_async",
       NT,
       {{"acc", K::Buffer, true, {}, RdWr},
        {"a", K::Buffer, true, {}, Rd},
        {"b", K::Buffer, true, {}, Rd}},
       {{"transpose_a", K::Bool, false},
        {"transpose_b", K::Bool, false},
        {"accumulate", K::Bool, false}},
       WG,
       TargetFeature::Wgmma,
       "warpgroup MMA, operands from shared memory or registers",
       Completion::WgmmaGroup,
       Proxy::Async,
       "wgmma.mma_async.sync.aligned",
       MmaFamily::Wgmma},
      {I::WgmmaFence,
       "wgmma.fence",
       NT,
       {},
       {},
       WG,
       TargetFeature::Wgmma,
       "order register accesses before wgmma",
       Completion::Immediate,
       Proxy::None,
       "wgmma.fence.sync.aligned"},
      {I::WgmmaCommitGroup,
       "wgmma.commit_group",
       NT,
       {},
       {},
       WG,
       TargetFeature::Wgmma,
       "commit in-flight wgmmas",
       Completion::Immediate,
       Proxy::None,
       "wgmma.commit_group.sync.aligned"},
      {I::WgmmaWaitGroup,
       "wgmma.wait_group",
       NT,
       {{"n", K::Int, true, {0, 7, 1, false, true}}},
       {},
       WG,
       TargetFeature::Wgmma,
       "wait until at most n wgmma groups are pending",
       Completion::Immediate,
       Proxy::None,
       "wgmma.wait_group.sync.aligned"},
      // --- tcgen05 ---
      {I::Tcgen05Alloc,
       "tcgen05.alloc",
       NT,
       {{"buf", K::Buffer, true, {}, Wr}},
       {{"cols", K::Int, false, {32, 512, 1, true}}, {"cta_group", K::Int, false, kCtaGroup}},
       W,
       TargetFeature::Tcgen05,
       "allocate tensor memory columns (power of two >= 32)",
       Completion::Immediate,
       Proxy::None,
       "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"},
      {I::Tcgen05Dealloc,
       "tcgen05.dealloc",
       NT,
       {{"buf", K::Buffer, true, {}, Wr}},
       {{"cta_group", K::Int, false, kCtaGroup}},
       W,
       TargetFeature::Tcgen05,
       "free tensor memory (by the allocating warp)",
       Completion::Immediate,
       Proxy::None,
       "tcgen05.dealloc.cta_group::1.sync.aligned.b32"},
      {I::Tcgen05RelinquishAllocPermit,
       "tcgen05.relinquish_alloc_permit",
       NT,
       {},
       {},
       W,
       TargetFeature::Tcgen05,
       "give up the right to allocate",
       Completion::Immediate,
       Proxy::None,
       "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned"},
      {I::Tcgen05Mma,
       "tcgen05.mma",
       NT,
       {{"d", K::Buffer, true, {}, RdWr},
        {"a", K::Buffer, true, {}, Rd},
        {"b", K::Buffer, true, {}, Rd}},
       {{"accumulate", K::Bool, false},
        {"cta_group", K::Int, false, kCtaGroup},
        {"scale_a", K::Buffer, false, {}, Rd},
        {"scale_b", K::Buffer, false, {}, Rd}},
       T,
       TargetFeature::Tcgen05,
       "tensor-memory MMA issued by one thread",
       Completion::Tcgen05Commit,
       Proxy::Async,
       "tcgen05.mma",
       MmaFamily::Tcgen05},
      {I::Tcgen05Commit,
       "tcgen05.commit",
       NT,
       {{"bar", K::Barrier, true, {}, RdWr}},
       {{"multicast", K::Int, false, kMask}},
       T,
       TargetFeature::Tcgen05,
       "arrive on bar when prior tcgen05 ops complete",
       Completion::Immediate,
       Proxy::None,
       "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"},
      {I::Tcgen05Ld,
       "tcgen05.ld",
       NT,
       {{"dst", K::Buffer, true, {}, Wr}, {"src", K::Buffer, true, {}, Rd}},
       {{"shape", K::String, true, {}, Access::None, kTmemShapes}},
       W,
       TargetFeature::Tcgen05,
       "tensor memory -> registers (32x32b, 16x64b, 16x128b, 16x256b, 16x32bx2)",
       Completion::WaitLd,
       Proxy::None,
       "tcgen05.ld.sync.aligned"},
      {I::Tcgen05St,
       "tcgen05.st",
       NT,
       {{"dst", K::Buffer, true, {}, Wr}, {"src", K::Buffer, true, {}, Rd}},
       {{"shape", K::String, true, {}, Access::None, kTmemShapes}},
       W,
       TargetFeature::Tcgen05,
       "registers -> tensor memory",
       Completion::WaitSt,
       Proxy::None,
       "tcgen05.st.sync.aligned"},
      {I::Tcgen05WaitLd,
       "tcgen05.wait_ld",
       NT,
       {},
       {},
       T,
       TargetFeature::Tcgen05,
       "wait for tcgen05.ld",
       Completion::Immediate,
       Proxy::None,
       "tcgen05.wait::ld.sync.aligned"},
      {I::Tcgen05WaitSt,
       "tcgen05.wait_st",
       NT,
       {},
       {},
       T,
       TargetFeature::Tcgen05,
       "wait for tcgen05.st",
       Completion::Immediate,
       Proxy::None,
       "tcgen05.wait::st.sync.aligned"},
      {I::Tcgen05FenceBeforeThreadSync,
       "tcgen05.fence_before_thread_sync",
       NT,
       {},
       {},
       T,
       TargetFeature::Tcgen05,
       "fence",
       Completion::Immediate,
       Proxy::None,
       "tcgen05.fence::before_thread_sync"},
      {I::Tcgen05FenceAfterThreadSync,
       "tcgen05.fence_after_thread_sync",
       NT,
       {},
       {},
       T,
       TargetFeature::Tcgen05,
       "fence",
       Completion::Immediate,
       Proxy::None,
       "tcgen05.fence::after_thread_sync"},
      // --- fences, named barriers, registers ---
      {I::FenceProxyAsync,
       "fence.proxy.async",
       NT,
       {},
       {},
       T,
       TargetFeature::Sm90Plus,
       "order generic-proxy shared writes before async-proxy reads",
       Completion::Immediate,
       Proxy::None,
       "fence.proxy.async.shared::cta"},
      {I::FenceMbarrierInit,
       "fence.mbarrier_init",
       NT,
       {},
       {},
       T,
       TargetFeature::Sm90Plus,
       "make mbarrier inits visible to the cluster",
       Completion::Immediate,
       Proxy::None,
       "fence.mbarrier_init.release.cluster"},
      // --- clusters ---
      {I::BarrierClusterArrive,
       "barrier.cluster.arrive",
       NT,
       {},
       {},
       W,
       TargetFeature::Sm90Plus,
       "arrive on the cluster barrier (whole warps)",
       Completion::Immediate,
       Proxy::None,
       "barrier.cluster.arrive.aligned"},
      {I::BarrierClusterWait,
       "barrier.cluster.wait",
       NT,
       {},
       {},
       W,
       TargetFeature::Sm90Plus,
       "wait until every warp of the cluster arrived",
       Completion::Immediate,
       Proxy::None,
       "barrier.cluster.wait.aligned"},
      {I::DsmemLoad,
       "dsmem.load",
       NT,
       {{"dst", K::Buffer, true, {}, Wr}, {"src", K::Buffer, true, {}, Rd}},
       {{"cta", K::Int, true, kRank}},
       T,
       TargetFeature::Sm90Plus,
       "read a region of CTA cta's shared memory (mapa + ld.shared::cluster)",
       Completion::Immediate,
       Proxy::Generic,
       "ld.shared::cluster"},
      {I::DsmemStore,
       "dsmem.store",
       NT,
       {{"dst", K::Buffer, true, {}, Wr}, {"src", K::Buffer, true, {}, Rd}},
       {{"cta", K::Int, true, kRank}},
       T,
       TargetFeature::Sm90Plus,
       "write a region of CTA cta's shared memory (mapa + st.shared::cluster)",
       Completion::Immediate,
       Proxy::Generic,
       "st.shared::cluster"},
      {I::BarrierSync,
       "barrier.sync",
       NT,
       {{"id", K::Int, true, {0, 15}}},
       {{"threads", K::Int, true}},
       W,
       TargetFeature::None,
       "named barrier: arrive and wait",
       Completion::Immediate,
       Proxy::None,
       "bar.sync"},
      {I::BarrierArrive,
       "barrier.arrive",
       NT,
       {{"id", K::Int, true, {0, 15}}},
       {{"threads", K::Int, true}},
       W,
       TargetFeature::None,
       "named barrier: arrive without waiting",
       Completion::Immediate,
       Proxy::None,
       "bar.arrive"},
      {I::SetmaxnregInc,
       "setmaxnreg.inc",
       NT,
       {{"n", K::Int, true, {24, 256, 8, false, true}}},
       {},
       WG,
       TargetFeature::Wgmma,
       "raise the warpgroup's register budget",
       Completion::Immediate,
       Proxy::None,
       "setmaxnreg.inc.sync.aligned.u32"},
      {I::SetmaxnregDec,
       "setmaxnreg.dec",
       NT,
       {{"n", K::Int, true, {24, 256, 8, false, true}}},
       {},
       WG,
       TargetFeature::Wgmma,
       "lower the warpgroup's register budget",
       Completion::Immediate,
       Proxy::None,
       "setmaxnreg.dec.sync.aligned.u32"},
  };
  t.insert(t.end(), natives.begin(), natives.end());
  return t;
}

constexpr std::array<ExprFunctionInfo, 18> kExprFunctions = {{
    {"elect_sync", 0, Convergence::Thread, true},
    {"shfl_xor", 2, Convergence::Thread, true},
    {"shfl_idx", 2, Convergence::Thread, true},
    {"shfl_up", 2, Convergence::Thread, true},
    {"shfl_down", 2, Convergence::Thread, true},
    {"vote_any", 1, Convergence::Warp, true},
    {"vote_all", 1, Convergence::Warp, true},
    {"ballot", 1, Convergence::Warp, true},
    {"min", 2, Convergence::Grid, false},
    {"max", 2, Convergence::Grid, false},
    {"abs", 1, Convergence::Grid, false},
    {"exp", 1, Convergence::Grid, false},
    {"exp2", 1, Convergence::Grid, false},
    {"log", 1, Convergence::Grid, false},
    {"sqrt", 1, Convergence::Grid, false},
    {"rsqrt", 1, Convergence::Grid, false},
    {"fma", 3, Convergence::Grid, false},
    {"select", 3, Convergence::Grid, false},
}};
} // namespace

const std::vector<IntrinsicInfo> &intrinsics() {
  static const std::vector<IntrinsicInfo> table = [] {
    std::vector<IntrinsicInfo> t = buildTable();
    // The records are in IntrinsicId order: intrinsic(id) indexes the table.
    for (size_t i = 0; i < t.size(); ++i)
      if (static_cast<size_t>(t[i].id) != i)
        std::abort();
    if (t.size() != static_cast<size_t>(IntrinsicId::Unknown))
      std::abort();
    return t;
  }();
  return table;
}

const IntrinsicInfo *findIntrinsic(std::string_view name) {
  IntrinsicId id = intrinsicIdOf(name);
  return id == IntrinsicId::Unknown ? nullptr : &intrinsic(id);
}

const IntrinsicInfo &intrinsic(IntrinsicId id) {
  return intrinsics()[static_cast<size_t>(id)];
}

std::string_view intrinsicName(IntrinsicId id) {
  return id == IntrinsicId::Unknown ? std::string_view("?") : intrinsic(id).name;
}

IntrinsicId intrinsicIdOf(std::string_view name) {
  // Names are short and the table small: a sorted array and a binary search.
  static const std::vector<std::pair<std::string_view, IntrinsicId>> byName = [] {
    std::vector<std::pair<std::string_view, IntrinsicId>> v;
    for (const IntrinsicInfo &i : intrinsics())
      v.push_back({i.name, i.id});
    std::sort(v.begin(), v.end());
    return v;
  }();
  auto it = std::lower_bound(byName.begin(), byName.end(), name,
                             [](const auto &e, std::string_view n) { return e.first < n; });
  return it != byName.end() && it->first == name ? it->second : IntrinsicId::Unknown;
}

IntrinsicUnit unitOf(IntrinsicId id) {
  using U = IntrinsicUnit;
  auto in = [&](IntrinsicId first, IntrinsicId last) { return id >= first && id <= last; };
  if (in(I::Copy, I::ReduceMin))
    return U::TilePrimitive;
  if (in(I::MbarrierInit, I::MbarrierInval))
    return U::Mbarrier;
  if (in(I::TmaLoad, I::TmaStoreWait))
    return U::Tma;
  if (in(I::CpAsync, I::CpAsyncWaitAll))
    return U::CpAsync;
  if (in(I::Ldmatrix, I::Stmatrix))
    return U::Matrix;
  if (in(I::WgmmaMmaAsync, I::WgmmaWaitGroup))
    return U::Wgmma;
  if (in(I::Tcgen05Alloc, I::Tcgen05FenceAfterThreadSync))
    return U::Tcgen05;
  if (in(I::FenceProxyAsync, I::FenceMbarrierInit))
    return U::Fence;
  if (in(I::BarrierClusterArrive, I::BarrierClusterWait))
    return U::Cluster;
  if (in(I::DsmemLoad, I::DsmemStore))
    return U::Dsmem;
  if (in(I::BarrierSync, I::BarrierArrive))
    return U::NamedBarrier;
  if (in(I::SetmaxnregInc, I::SetmaxnregDec))
    return U::Registers;
  return U::Unknown;
}

bool isElementwise(IntrinsicId id) {
  return id >= IntrinsicId::Add && id <= IntrinsicId::Abs;
}

bool isUnaryElementwise(IntrinsicId id) {
  return id >= IntrinsicId::Exp && id <= IntrinsicId::Abs;
}

bool isReduction(IntrinsicId id) {
  return id >= IntrinsicId::ReduceSum && id <= IntrinsicId::ReduceMin;
}

bool targetHas(TargetKind target, TargetFeature feature) {
  const TargetInfo &t = targetInfo(target);
  switch (feature) {
  case TargetFeature::None:
    return true;
  case TargetFeature::Sm90Plus:
    return t.smVersion >= 90;
  case TargetFeature::Wgmma:
    return t.hasWgmma;
  case TargetFeature::Tcgen05:
    return t.hasTensorMemory;
  }
  return false;
}

std::string_view featureDescription(TargetFeature feature) {
  switch (feature) {
  case TargetFeature::None:
    return "any target";
  case TargetFeature::Sm90Plus:
    return "sm_90a or newer";
  case TargetFeature::Wgmma:
    return "sm_90a";
  case TargetFeature::Tcgen05:
    return "sm_100a";
  }
  return "?";
}

const ExprFunctionInfo *findExprFunction(std::string_view name) {
  for (const ExprFunctionInfo &f : kExprFunctions)
    if (f.name == name)
      return &f;
  return nullptr;
}

std::vector<std::string_view> intrinsicNames() {
  std::vector<std::string_view> out;
  for (const IntrinsicInfo &i : intrinsics())
    out.push_back(i.name);
  return out;
}

std::vector<std::string_view> exprFunctionNames() {
  std::vector<std::string_view> out;
  for (const ExprFunctionInfo &f : kExprFunctions)
    out.push_back(f.name);
  return out;
}

} // namespace tilescope
