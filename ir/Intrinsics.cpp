#include "ir/Intrinsics.h"

#include "ir/DeviceScale.h"

#include <array>

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
constexpr auto T = Convergence::Thread, W = Convergence::Warp, WG = Convergence::Warpgroup,
               CTA = Convergence::Cta;

std::vector<IntrinsicInfo> buildTable() {
  std::vector<IntrinsicInfo> t = {
      // --- tile primitives: the scope prefix says who executes them ---
      {"copy",
       TP,
       {{"dst", K::Buffer, true}, {"src", K::Buffer, true}},
       {},
       T,
       TargetFeature::None,
       "copy a tile between memory scopes"},
      {"copy_async",
       TP,
       {{"dst", K::Buffer, true}, {"src", K::Buffer, true}},
       {{"mbar", K::Barrier, false}},
       T,
       TargetFeature::None,
       "asynchronous copy; completion signalled on `mbar` (TMA) or a group"},
      {"gemm",
       TP,
       {{"c", K::Buffer, true}, {"a", K::Buffer, true}, {"b", K::Buffer, true}},
       {{"transpose_a", K::Bool, false},
        {"transpose_b", K::Bool, false},
        {"accumulate", K::Bool, false}},
       T,
       TargetFeature::None,
       "C += A * B on a tile"},
      {"gemm_async",
       TP,
       {{"c", K::Buffer, true}, {"a", K::Buffer, true}, {"b", K::Buffer, true}},
       {{"transpose_a", K::Bool, false},
        {"transpose_b", K::Bool, false},
        {"accumulate", K::Bool, false},
        {"mbar", K::Barrier, false}},
       T,
       TargetFeature::None,
       "asynchronous gemm; completion on `mbar` or a wait"},
      {"fill",
       TP,
       {{"dst", K::Buffer, true}, {"value", K::Number, true}},
       {},
       T,
       TargetFeature::None,
       "set every element of a tile"},
      {"cast",
       TP,
       {{"dst", K::Buffer, true}, {"src", K::Buffer, true}},
       {},
       T,
       TargetFeature::None,
       "convert a tile to the destination dtype (round to nearest even)"},
      {"sync",
       TP,
       {},
       {},
       T,
       TargetFeature::None,
       "barrier for the scope: warp.sync, cta.sync, cluster.sync"},
  };
  for (std::string_view op : {"add", "sub", "mul", "div", "max", "min"})
    t.push_back({op,
                 TP,
                 {{"dst", K::Buffer, true}, {"a", K::Operand, true}, {"b", K::Operand, true}},
                 {},
                 T,
                 TargetFeature::None,
                 "elementwise binary operation"});
  for (std::string_view op : {"exp", "exp2", "log", "sqrt", "rsqrt", "neg", "abs"})
    t.push_back({op,
                 TP,
                 {{"dst", K::Buffer, true}, {"a", K::Operand, true}},
                 {},
                 T,
                 TargetFeature::None,
                 "elementwise unary operation"});
  for (std::string_view op : {"reduce_sum", "reduce_max", "reduce_min"})
    t.push_back({op,
                 TP,
                 {{"dst", K::Buffer, true}, {"src", K::Buffer, true}},
                 {{"axis", K::Int, false}, {"accumulate", K::Bool, false}},
                 T,
                 TargetFeature::None,
                 "reduction over one axis, or over everything"});

  // Every tile primitive may force one of dispatch's implementations by name.
  for (IntrinsicInfo &primitive : t)
    primitive.keywords.push_back({"dispatch", K::String, false});

  std::vector<IntrinsicInfo> natives = {
      // --- mbarrier ---
      {"mbarrier.init",
       NT,
       {{"bar", K::Barrier, true}},
       {{"count", K::Int, true, kArrivals}},
       T,
       TargetFeature::Sm90Plus,
       "initialise an mbarrier with an arrival count"},
      {"mbarrier.arrive",
       NT,
       {{"bar", K::Barrier, true}},
       {{"count", K::Int, false, kArrivals}, {"cta", K::Int, false, kRank}},
       T,
       TargetFeature::Sm90Plus,
       "arrive on the current phase (cta = r: on CTA r of the cluster)"},
      {"mbarrier.arrive_expect_tx",
       NT,
       {{"bar", K::Barrier, true}},
       {{"bytes", K::Int, true, kTxBytes}},
       T,
       TargetFeature::Sm90Plus,
       "arrive and raise the transaction count"},
      {"mbarrier.expect_tx",
       NT,
       {{"bar", K::Barrier, true}},
       {{"bytes", K::Int, true, kTxBytes}},
       T,
       TargetFeature::Sm90Plus,
       "raise the transaction count"},
      {"mbarrier.complete_tx",
       NT,
       {{"bar", K::Barrier, true}},
       {{"bytes", K::Int, true, kTxBytes}},
       T,
       TargetFeature::Sm90Plus,
       "lower the transaction count"},
      {"mbarrier.wait",
       NT,
       {{"bar", K::Barrier, true}},
       {{"parity", K::Int, true, {0, 1}}},
       T,
       TargetFeature::Sm90Plus,
       "wait until the phase with this parity completed"},
      {"mbarrier.inval",
       NT,
       {{"bar", K::Barrier, true}},
       {},
       T,
       TargetFeature::Sm90Plus,
       "invalidate before reusing the barrier's memory"},
      // --- TMA and cp.async ---
      {"tma.load",
       NT,
       {{"dst", K::Buffer, true}, {"src", K::Buffer, true}},
       {{"mbar", K::Barrier, true}, {"multicast", K::Int, false, kMask}},
       T,
       TargetFeature::Sm90Plus,
       "cp.async.bulk.tensor global -> shared, complete_tx on mbar (multicast = CTA mask)"},
      {"tma.store",
       NT,
       {{"dst", K::Buffer, true}, {"src", K::Buffer, true}},
       {},
       T,
       TargetFeature::Sm90Plus,
       "cp.async.bulk.tensor shared -> global"},
      {"tma.store_commit", NT, {}, {}, T, TargetFeature::Sm90Plus, "commit bulk stores"},
      {"tma.store_wait",
       NT,
       {{"n", K::Int, true, kGroupsPending}},
       {{"read", K::Bool, false}},
       T,
       TargetFeature::Sm90Plus,
       "wait until at most n bulk store groups are pending (read = true: have read their "
       "source)"},
      {"cp_async",
       NT,
       {{"dst", K::Buffer, true}, {"src", K::Buffer, true}},
       {},
       T,
       TargetFeature::None,
       "cp.async global -> shared (4, 8 or 16 bytes)"},
      {"cp_async.commit", NT, {}, {}, T, TargetFeature::None, "commit a cp.async group"},
      {"cp_async.wait",
       NT,
       {{"n", K::Int, true, kGroupsPending}},
       {},
       T,
       TargetFeature::None,
       "wait until at most n cp.async groups are pending"},
      {"cp_async.wait_all",
       NT,
       {},
       {},
       T,
       TargetFeature::None,
       "commit the open cp.async group and wait for every group"},
      // --- warp-level data movement ---
      {"ldmatrix",
       NT,
       {{"dst", K::Buffer, true}, {"src", K::Buffer, true}},
       {{"num", K::Int, false, kMatrices}, {"trans", K::Bool, false}},
       W,
       TargetFeature::None,
       "load 8x8 b16 matrices from shared memory into a warp's registers"},
      {"stmatrix",
       NT,
       {{"dst", K::Buffer, true}, {"src", K::Buffer, true}},
       {{"num", K::Int, false, kMatrices}, {"trans", K::Bool, false}},
       W,
       TargetFeature::Sm90Plus,
       "store 8x8 b16 matrices from a warp's registers to shared memory"},
      // --- wgmma ---
      {"wgmma.mma_async",
       NT,
       {{"acc", K::Buffer, true}, {"a", K::Buffer, true}, {"b", K::Buffer, true}},
       {{"transpose_a", K::Bool, false},
        {"transpose_b", K::Bool, false},
        {"accumulate", K::Bool, false}},
       WG,
       TargetFeature::Wgmma,
       "warpgroup MMA, operands from shared memory or registers"},
      {"wgmma.fence", NT, {}, {}, WG, TargetFeature::Wgmma, "order register accesses before wgmma"},
      {"wgmma.commit_group", NT, {}, {}, WG, TargetFeature::Wgmma, "commit in-flight wgmmas"},
      {"wgmma.wait_group",
       NT,
       {{"n", K::Int, true, {0, 7, 1, false, true}}},
       {},
       WG,
       TargetFeature::Wgmma,
       "wait until at most n wgmma groups are pending"},
      // --- tcgen05 ---
      {"tcgen05.alloc",
       NT,
       {{"buf", K::Buffer, true}},
       {{"cols", K::Int, false, {32, 512, 1, true}}, {"cta_group", K::Int, false, kCtaGroup}},
       W,
       TargetFeature::Tcgen05,
       "allocate tensor memory columns (power of two >= 32)"},
      {"tcgen05.dealloc",
       NT,
       {{"buf", K::Buffer, true}},
       {{"cta_group", K::Int, false, kCtaGroup}},
       W,
       TargetFeature::Tcgen05,
       "free tensor memory (by the allocating warp)"},
      {"tcgen05.relinquish_alloc_permit",
       NT,
       {},
       {},
       W,
       TargetFeature::Tcgen05,
       "give up the right to allocate"},
      {"tcgen05.mma",
       NT,
       {{"d", K::Buffer, true}, {"a", K::Buffer, true}, {"b", K::Buffer, true}},
       {{"accumulate", K::Bool, false},
        {"cta_group", K::Int, false, kCtaGroup},
        {"scale_a", K::Buffer, false},
        {"scale_b", K::Buffer, false}},
       T,
       TargetFeature::Tcgen05,
       "tensor-memory MMA issued by one thread"},
      {"tcgen05.commit",
       NT,
       {{"bar", K::Barrier, true}},
       {{"multicast", K::Int, false, kMask}},
       T,
       TargetFeature::Tcgen05,
       "arrive on bar when prior tcgen05 ops complete"},
      {"tcgen05.ld",
       NT,
       {{"dst", K::Buffer, true}, {"src", K::Buffer, true}},
       {{"shape", K::String, true}},
       W,
       TargetFeature::Tcgen05,
       "tensor memory -> registers (32x32b, 16x64b, 16x128b, 16x256b, 16x32bx2)"},
      {"tcgen05.st",
       NT,
       {{"dst", K::Buffer, true}, {"src", K::Buffer, true}},
       {{"shape", K::String, true}},
       W,
       TargetFeature::Tcgen05,
       "registers -> tensor memory"},
      {"tcgen05.wait_ld", NT, {}, {}, T, TargetFeature::Tcgen05, "wait for tcgen05.ld"},
      {"tcgen05.wait_st", NT, {}, {}, T, TargetFeature::Tcgen05, "wait for tcgen05.st"},
      {"tcgen05.fence_before_thread_sync", NT, {}, {}, T, TargetFeature::Tcgen05, "fence"},
      {"tcgen05.fence_after_thread_sync", NT, {}, {}, T, TargetFeature::Tcgen05, "fence"},
      // --- fences, named barriers, registers ---
      {"fence.proxy.async",
       NT,
       {},
       {{"space", K::String, false}},
       T,
       TargetFeature::Sm90Plus,
       "order generic-proxy shared writes before async-proxy reads (space = \"global\": "
       "the async proxy's global writes, e.g. a completed TMA store, before generic reads)"},
      {"fence.mbarrier_init",
       NT,
       {},
       {},
       T,
       TargetFeature::Sm90Plus,
       "make mbarrier inits visible to the cluster"},
      // --- clusters ---
      {"barrier.cluster.arrive",
       NT,
       {},
       {},
       W,
       TargetFeature::Sm90Plus,
       "arrive on the cluster barrier (whole warps)"},
      {"barrier.cluster.wait",
       NT,
       {},
       {},
       W,
       TargetFeature::Sm90Plus,
       "wait until every warp of the cluster arrived"},
      {"dsmem.load",
       NT,
       {{"dst", K::Buffer, true}, {"src", K::Buffer, true}},
       {{"cta", K::Int, true, kRank}},
       T,
       TargetFeature::Sm90Plus,
       "read a region of CTA cta's shared memory (mapa + ld.shared::cluster)"},
      {"dsmem.store",
       NT,
       {{"dst", K::Buffer, true}, {"src", K::Buffer, true}},
       {{"cta", K::Int, true, kRank}},
       T,
       TargetFeature::Sm90Plus,
       "write a region of CTA cta's shared memory (mapa + st.shared::cluster)"},
      {"barrier.sync",
       NT,
       {{"id", K::Int, true, {0, 15}}},
       {{"threads", K::Int, true}},
       W,
       TargetFeature::None,
       "named barrier: arrive and wait"},
      {"barrier.arrive",
       NT,
       {{"id", K::Int, true, {0, 15}}},
       {{"threads", K::Int, true}},
       W,
       TargetFeature::None,
       "named barrier: arrive without waiting"},
      {"setmaxnreg.inc",
       NT,
       {{"n", K::Int, true, {24, 256, 8, false, true}}},
       {},
       WG,
       TargetFeature::Wgmma,
       "raise the warpgroup's register budget"},
      {"setmaxnreg.dec",
       NT,
       {{"n", K::Int, true, {24, 256, 8, false, true}}},
       {},
       WG,
       TargetFeature::Wgmma,
       "lower the warpgroup's register budget"},
  };
  t.insert(t.end(), natives.begin(), natives.end());
  std::vector<IntrinsicInfo> devices = deviceIntrinsics(); // ir/DeviceScale.cpp
  t.insert(t.end(), devices.begin(), devices.end());
  return t;
}

constexpr std::array<ExprFunctionInfo, 17> kExprFunctions = {{
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
    {"select", 3, Convergence::Grid, false},
}};
} // namespace

const std::vector<IntrinsicInfo> &intrinsics() {
  static const std::vector<IntrinsicInfo> table = buildTable();
  return table;
}

const IntrinsicInfo *findIntrinsic(std::string_view name) {
  for (const IntrinsicInfo &i : intrinsics())
    if (i.name == name)
      return &i;
  return nullptr;
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
