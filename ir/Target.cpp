#include "ir/Target.h"
#include "ir/WarpShape.h"

namespace tilescope {

namespace {
constexpr std::array<AxisInfo, kNumAxes> kAxes = {{
    {Axis::laneid, "laneid", AxisKind::Thread},
    {Axis::warpid, "warpid", AxisKind::Thread},
    {Axis::wgid, "wgid", AxisKind::Thread},
    {Axis::tid_in_wg, "tid_in_wg", AxisKind::Thread},
    {Axis::wid_in_wg, "wid_in_wg", AxisKind::Thread},
    {Axis::tx, "tx", AxisKind::Thread},
    {Axis::cbx, "cbx", AxisKind::Block},
    {Axis::cby, "cby", AxisKind::Block},
    {Axis::cbz, "cbz", AxisKind::Block},
    {Axis::bx, "bx", AxisKind::Block},
    {Axis::by, "by", AxisKind::Block},
    {Axis::bz, "bz", AxisKind::Block},
    {Axis::pid, "pid", AxisKind::Device},
    {Axis::m, "m", AxisKind::Memory},
    {Axis::TLane, "TLane", AxisKind::Memory},
    {Axis::TCol, "TCol", AxisKind::Memory},
    {Axis::P, "P", AxisKind::Memory},
    {Axis::F, "F", AxisKind::Memory},
    {Axis::Bank, "Bank", AxisKind::Memory},
}};

// Shared memory: the opt-in per-CTA maximum of each architecture (CUDA
// programming guide, compute capability tables). Registers: 255 per thread.
constexpr std::array<TargetInfo, 3> kTargets = {{
    {TargetKind::sm_80, "sm_80", 80, 163 * 1024, 255, 1024, 1, false, false, false, 0, 0},
    {TargetKind::sm_90a, "sm_90a", 90, 227 * 1024, 255, 1024, 16, true, true, false, 0, 0},
    {TargetKind::sm_100a, "sm_100a", 100, 227 * 1024, 255, 1024, 16, false, true, true, 128, 512},
}};
} // namespace

const AxisInfo &axisInfo(Axis a) {
  return kAxes[static_cast<size_t>(a)];
}

std::optional<Axis> axisFromName(std::string_view name) {
  for (const AxisInfo &info : kAxes)
    if (info.name == name)
      return info.axis;
  return std::nullopt;
}

const TargetInfo &targetInfo(TargetKind t) {
  return kTargets[static_cast<size_t>(t)];
}

std::optional<TargetKind> targetFromName(std::string_view name) {
  for (const TargetInfo &info : kTargets)
    if (info.name == name)
      return info.kind;
  return std::nullopt;
}

int64_t axisExtent(Axis a, const TargetInfo &target, const LaunchShape &launch,
                   int64_t memoryElements) {
  switch (a) {
  case Axis::laneid:
    return kThreadsPerWarp;
  case Axis::warpid:
    return warpsIn(launch.threads);
  case Axis::wgid:
    return warpgroupsIn(launch.threads);
  case Axis::tid_in_wg:
    return launch.threads < kThreadsPerWarpgroup ? launch.threads : kThreadsPerWarpgroup;
  case Axis::wid_in_wg:
    return launch.threads < kThreadsPerWarpgroup ? warpsIn(launch.threads)
                                                 : kThreadsPerWarpgroup / kThreadsPerWarp;
  case Axis::tx:
    return launch.threads;
  case Axis::cbx:
    return launch.cluster[0];
  case Axis::cby:
    return launch.cluster[1];
  case Axis::cbz:
    return launch.cluster[2];
  case Axis::bx:
    return launch.grid[0];
  case Axis::by:
    return launch.grid[1];
  case Axis::bz:
    return launch.grid[2];
  case Axis::pid:
    return launch.devices;
  case Axis::m:
    return memoryElements;
  case Axis::TLane:
    return target.tmemLanes;
  case Axis::TCol:
    return target.tmemColumns;
  case Axis::P:
    return 128;
  case Axis::F:
    return 0;
  case Axis::Bank:
    return 32;
  }
  return 0;
}

} // namespace tilescope
