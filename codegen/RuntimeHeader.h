// The device-scale runtime (codegen/runtime/ts_devices.cuh) as text, embedded
// at build time (codegen/EmbedRuntime.cmake): `tilescope lower --verify-ptx`
// writes it beside the lowered devices kernels it compiles.
#pragma once

namespace tilescope::codegen {

const char *deviceRuntimeHeader();

} // namespace tilescope::codegen
