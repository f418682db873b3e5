// Lowering of devices(N) kernels (docs/scales.md) to CUDA on the device-scale
// runtime (codegen/runtime/ts_devices.cuh): one process per GPU, tensors in
// the symmetric regions every rank maps through CUDA IPC.
//
// A kernel whose body is lets and device collectives (device.allreduce,
// all_gather, reduce_scatter) becomes a __global__ kernel that takes the peer
// table (ts_dev::CallArgs), the byte offset of every tensor parameter in the
// regions and the shape symbols, and runs the IR's grid persistently: CTA j
// takes the tiles j, j + gridDim.x / split, ... (a tile split over `split`
// CTAs when the grid is smaller than the launch), between one device
// barrier before its first tile and one after its last (every device's CTA j
// takes the same tiles: the chunking agrees). Each collective is the
// runtime's tile function of the implementation the dispatch table picks
// (ir/DeviceScale.h; `impl =` forces one, whose refusal is an error); an
// allreduce without `impl =` whose tile both implementations take is both,
// and the launcher picks one per call by the device count and the call's
// bytes per device (allreduceChoice), recorded in comm->lastImpl. A host
// launcher `tilescope_launch_<kernel>(comm, tensor offsets..., symbols...,
// stream)` checks the `where` clause with N = the communicator's size and
// launches it. Other statements are refused with the reason.
//
// Depends on ir/ only.
#pragma once

#include "codegen/Launcher.h"
#include "ir/Diagnostics.h"
#include "ir/Stmt.h"

#include <optional>
#include <string>
#include <vector>

namespace tilescope::codegen {

struct LoweredDeviceKernel {
  std::string name;
  std::vector<std::string> dispatchChoices; // "device.allreduce at L: two_shot"
  std::vector<LauncherParam> launcher;      // tensor offsets then symbols, in order
};

struct LoweredDevices {
  std::string source;
  std::vector<LoweredDeviceKernel> kernels;
};

// Whether a devices(N) kernel is one of lets and CTA-scope device collectives
// (allreduce, all_gather, reduce_scatter), which lowerDeviceKernels takes;
// other devices kernels (a GEMM whose communication warp calls
// device.warp_allreduce) lower through lowerModule (codegen/CudaEmitter.h).
bool collectivesOnly(const Kernel &kernel);

std::optional<LoweredDevices> lowerDeviceKernels(const Module &module, Diagnostics &diag,
                                                 const std::string &kernelName = "");

} // namespace tilescope::codegen
