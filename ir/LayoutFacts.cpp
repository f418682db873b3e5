#include "ir/LayoutFacts.h"

#include <fmt/format.h>

namespace tilescope {

std::string_view scopeName(BufferScope s) {
  switch (s) {
  case BufferScope::Global:
    return "global";
  case BufferScope::Shared:
    return "shared";
  case BufferScope::Reg:
    return "reg";
  case BufferScope::Tmem:
    return "tmem";
  }
  return "?";
}

std::optional<BufferScope> scopeFromName(std::string_view name) {
  for (BufferScope s :
       {BufferScope::Global, BufferScope::Shared, BufferScope::Reg, BufferScope::Tmem})
    if (scopeName(s) == name)
      return s;
  return std::nullopt;
}

namespace {
bool isClusterAxis(Axis a) {
  return a == Axis::cbx || a == Axis::cby || a == Axis::cbz;
}
} // namespace

// Shared memory may be spread over the CTAs of a cluster (distributed shared
// memory) and replicated there (multicast); registers live on threads and the
// register index m; tensor memory on lanes and columns. Nothing holds the
// accelerator axes P / F or the bank axis on these targets.
bool scopeHoldsAxis(BufferScope s, Axis a) {
  switch (s) {
  case BufferScope::Global:
    return a == Axis::m || a == Axis::pid;
  case BufferScope::Shared:
    return a == Axis::m || isClusterAxis(a);
  case BufferScope::Reg:
    return a == Axis::m || isThreadAxis(a) || axisInfo(a).kind == AxisKind::Block;
  case BufferScope::Tmem:
    return a == Axis::TLane || a == Axis::TCol || isClusterAxis(a);
  }
  return false;
}

// A replica is another owner of the same value. Threads and CTAs may each hold
// a copy; a second copy at another address of one memory would have to be
// written twice, so no memory axis may carry a replica.
bool scopeReplicatesOver(BufferScope s, Axis a) {
  switch (s) {
  case BufferScope::Global:
    return a == Axis::pid;
  case BufferScope::Shared:
    return isClusterAxis(a);
  case BufferScope::Reg:
    return isThreadAxis(a) || axisInfo(a).kind == AxisKind::Block;
  case BufferScope::Tmem:
    return isClusterAxis(a);
  }
  return false;
}

std::string_view violationKindName(ViolationKind k) {
  switch (k) {
  case ViolationKind::Scope:
    return "scope";
  case ViolationKind::Bounds:
    return "bounds";
  case ViolationKind::Alias:
    return "alias";
  case ViolationKind::Replica:
    return "replica";
  case ViolationKind::Overlap:
    return "overlap";
  case ViolationKind::Instruction:
    return "instruction";
  case ViolationKind::Banks:
    return "banks";
  }
  return "?";
}

std::string formatLogical(const std::vector<int64_t> &coords) {
  std::string out = "(";
  for (size_t i = 0; i < coords.size(); ++i)
    out += fmt::format("{}{}", i ? ", " : "", coords[i]);
  return out + ")";
}

} // namespace tilescope
