// The device scale (docs/scales.md): what a kernel launched with
// `devices(N)` may call to reach the other devices, and the facts the launch
// declares. The device natives' records are in the one intrinsic table
// (ir/Intrinsics.cpp, IntrinsicId::DevicePut ... DeviceReduceScatter).
//
// Must not depend on anything above ir/.
#pragma once

#include "ir/Intrinsics.h"
#include "ir/Stmt.h"

#include <string_view>
#include <vector>

namespace tilescope {

// The `device.*` natives (IntrinsicUnit::Device, records in ir/Intrinsics.cpp):
// put / get of a tile to / from a peer's global memory, signal / wait on a
// flag in a peer's global memory, the system-scope fence, the device barrier
// and the collectives (allreduce, warp_allreduce, all_gather, reduce_scatter, with an
// `impl =` the dispatch table chooses). True for every one of them: the
// checker admits them only in kernels launched with devices(N).
bool isDeviceCall(IntrinsicId id);
bool isDeviceCall(const CallStmt &c);
// The collective a device.allreduce / all_gather / reduce_scatter call
// performs, as collectiveImpls() names it; empty for other calls (and for
// device.warp_allreduce, one warp's collective, which the kernel emitter
// lowers inside a kernel, not the device emitter's collective path).
std::string_view collectiveOf(IntrinsicId id);

// Adds the launch's facts to a devices(N) kernel's `where` constraints, for
// the proofs: 0 <= devid, devid < ndev, ndev == N, 1 <= ndev <= kMaxDevices.
// (The parsed kernel does not hold them: the printer prints what was
// written.)
void appendDeviceFacts(Kernel &kernel);

// The least value the proofs give a scalar of the kernel. Shape symbols and
// scalar parameters are sizes (at least 1); `devid`, the device's rank, is 0
// on the first device: assuming it at least 1, as the sizes, would leave
// device 0 out of every proof (a race under `if devid == 0` went unseen).
inline int64_t leastValueOf(std::string_view symbol) {
  return symbol == "devid" ? 0 : 1;
}

// The largest device count the lowering supports (the peer pointer table of
// codegen/runtime/ts_devices.cuh).
constexpr int64_t kMaxDevices = 8;

// The implementations of each collective, in the dispatch table's order of
// preference, and why one refuses a call (empty: it accepts). `elements` is
// the tile's element count per device, `devices` the device count when it is
// known (0: symbolic), `ctas` the grid size when known (0: symbolic).
struct CollectiveImpl {
  std::string_view collective; // "allreduce", "all_gather", "reduce_scatter"
  std::string_view name;       // "one_shot", "two_shot", "push"
  std::string_view summary;
};
const std::vector<CollectiveImpl> &collectiveImpls();
std::string collectiveRefusal(std::string_view collective, std::string_view impl, int64_t elements,
                              int64_t elementBytes, int64_t devices);

// The allreduce a call without `impl =` runs, chosen by the device count and
// the call's bytes per device (every tile of the call together), which are
// known at run time only: the lowered launcher reads oneShotMaxBytes() for
// the communicator's size (codegen/DeviceEmitter.h emits this table). One
// shot reads every peer's whole input, (N - 1) x the bytes per device; two
// shot reads and writes 2 (N - 1) / N x: equal at N = 2, where one shot also
// writes only locally and wins at small sizes, and two shot moves less from
// N = 3 on. Measured on 2x and 4x H200 (docs/perf.md, "Device scale").
int64_t oneShotMaxBytes(int64_t devices);
std::string_view allreduceChoice(int64_t devices, int64_t bytesPerDevice);

} // namespace tilescope
