// The CUDA sources tilescope writes, as text embedded at build time
// (codegen/EmbedText.cmake): the device-scale runtime
// (codegen/runtime/ts_devices.cuh), which `tilescope lower --verify-ptx`
// writes beside the lowered devices kernels it compiles, and the preludes of
// every lowered module (codegen/prelude/*.cuh).
#pragma once

namespace tilescope::codegen {

const char *deviceRuntimeHeader();
// codegen/prelude/device.cuh: includes and helpers before the kernels.
const char *devicePrelude();
// codegen/prelude/tcgen05.cuh: the tcgen05 helpers (sm_100a modules).
const char *tcgen05Prelude();
// codegen/prelude/host.cuh: the host side's helpers after the kernels.
const char *hostPrelude();

} // namespace tilescope::codegen
