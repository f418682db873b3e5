// Declared sizes against the target's limits, checked by the type checker
// (Checker.h) before any later pass runs. Every command (check, sim, race,
// lower, reward) runs the checker first and stops at its errors, so no pass
// ever allocates by a size that no GPU can have: a register tile of 2^63
// floats or an array of 2^63 mbarriers is a `file:line:col` input error
// (exit 2), not an out-of-memory abort.
//
// What is checked, each alone (the sums over a kernel, which depend on how the
// buffers share a CTA, are the resource check's: verifier/Resources.h):
//  - a buffer's shape: rank at most kMaxRank, positive dimensions whose
//    product (and byte count) fits int64;
//  - a shared buffer's bytes (its layout's reach on the memory axis) within
//    the target's shared memory per CTA;
//  - a register buffer's 32-bit registers per thread within the target's
//    registers per thread;
//  - a tensor-memory buffer's lanes and columns within the target's;
//  - an mbarrier array's length (8 bytes each) within shared memory, and its
//    arrival count in [1, 2^20 - 1];
//  - a tensor parameter's rank and, for constant dimensions, its element and
//    byte counts;
//  - constant grid extents (x < 2^31, y and z at most 65535), cluster
//    extents and cluster size.
//
// Depends on ir/ only.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Layout.h"
#include "ir/Stmt.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tilescope {

namespace limits {
inline constexpr int64_t kMaxRank = 8;
inline constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;
inline constexpr int64_t kMaxGridYZ = 65535;
inline constexpr int64_t kMaxArrivalCount = (int64_t{1} << 20) - 1; // also the tx-count
inline constexpr int64_t kMbarrierBytes = 8;
} // namespace limits

// The product of `dims`, or nothing when it overflows int64.
std::optional<int64_t> checkedProduct(const std::vector<int64_t> &dims);

// One past the largest coordinate a layout can place on `axis` (0 when it
// places nothing there), saturating at INT64_MAX. A swizzle on the memory
// axis permutes within aligned blocks of 2^(M + B) elements.
int64_t layoutAxisReach(const Layout &layout, Axis axis);

// What one buffer of constant shape takes from the CTA's resources.
struct BufferFootprint {
  int64_t elements = 0;
  int64_t sharedBytes = 0;        // shared: bytes its layout reaches
  int64_t registersPerThread = 0; // reg: 32-bit registers each thread holds
  int64_t tmemLanes = 0, tmemColumns = 0;
};

// Nothing when the element count overflows. Saturates at INT64_MAX otherwise.
std::optional<BufferFootprint> bufferFootprint(MemScope scope, Dtype dtype,
                                               const std::vector<int64_t> &shape,
                                               const Layout *layout);

// Each reports errors at the declaration and returns whether it fits.
bool checkBufferLimits(const BufferDecl &b, const std::vector<int64_t> &shape,
                       const TargetInfo &target, Diagnostics &diag);
bool checkBarrierArrayLimits(const BarrierDecl &b, int64_t size, const TargetInfo &target,
                             Diagnostics &diag);
bool checkTensorParamLimits(const Param &p, Diagnostics &diag);
bool checkLaunchLimits(const Launch &launch, Diagnostics &diag);

} // namespace tilescope
