// Hardware axes and targets: the names a layout may place data on, and how far
// each axis reaches on a given target and launch. One table for every pass.
// Depends on nothing but the standard library.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tilescope {

// Thread axes come first so owners print in the order people read them
// (who holds it, then where it sits).
enum class Axis : uint8_t {
  laneid,
  warpid,
  wgid,
  tid_in_wg,
  wid_in_wg,
  tx,
  cbx,
  cby,
  cbz,
  bx,
  by,
  bz,
  pid,
  m,
  TLane,
  TCol,
  P,
  F,
  Bank,
};
constexpr size_t kNumAxes = 19;

enum class AxisKind : uint8_t { Thread, Block, Device, Memory };

struct AxisInfo {
  Axis axis;
  std::string_view name;
  AxisKind kind;
};

const AxisInfo &axisInfo(Axis a);
std::optional<Axis> axisFromName(std::string_view name);
inline std::string_view axisName(Axis a) {
  return axisInfo(a).name;
}
inline bool isMemoryAxis(Axis a) {
  return axisInfo(a).kind == AxisKind::Memory;
}
inline bool isThreadAxis(Axis a) {
  return axisInfo(a).kind == AxisKind::Thread;
}

enum class TargetKind : uint8_t { sm_80, sm_90a, sm_100a };

struct TargetInfo {
  TargetKind kind;
  std::string_view name;
  int smVersion;
  int64_t sharedBytesPerCta; // opt-in maximum of dynamic shared memory
  int64_t registersPerThread;
  int64_t maxThreadsPerCta;
  int64_t maxClusterSize; // 1 where clusters do not exist
  bool hasWgmma;
  bool hasTma;
  bool hasTensorMemory;
  int64_t tmemLanes;
  int64_t tmemColumns;
};

const TargetInfo &targetInfo(TargetKind t);
std::optional<TargetKind> targetFromName(std::string_view name);

// What a launch fixes about the axes: threads per CTA, grid and cluster shape,
// devices. Unknown grid extents (symbolic) are left at 0 = unbounded.
struct LaunchShape {
  int64_t threads = 128;
  std::array<int64_t, 3> grid = {0, 0, 0};
  std::array<int64_t, 3> cluster = {1, 1, 1};
  int64_t devices = 1;
};

// Extent of an axis on a target and launch; `memoryElements` bounds `m` (the
// buffer's element count) and is ignored for other axes. 0 means unbounded.
int64_t axisExtent(Axis a, const TargetInfo &target, const LaunchShape &launch,
                   int64_t memoryElements);

} // namespace tilescope
