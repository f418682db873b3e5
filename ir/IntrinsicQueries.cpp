// The questions passes ask of an IntrinsicId beside its record
// (ir/Intrinsics.h): its hardware unit, its class of tile primitive, whether
// a target has its feature. The records themselves are in ir/Intrinsics.cpp.
#include "ir/Intrinsics.h"

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
using I = IntrinsicId;
} // namespace

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
  if (in(I::DevicePut, I::DeviceReduceScatter))
    return U::Device;
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

} // namespace tilescope
