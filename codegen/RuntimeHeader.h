// The CUDA sources tilescope writes, as text embedded at build time
// (codegen/EmbedText.cmake): the device-scale runtime
// (codegen/runtime/ts_devices.cuh), which `tilescope lower --verify-ptx`
// writes beside the lowered devices kernels it compiles, and the preludes of
// every lowered module (codegen/prelude/*.cuh), and the package of
// `tilescope bench --devices`.
#pragma once

namespace tilescope::codegen {

const char *deviceRuntimeHeader();
// codegen/prelude/device.cuh: includes and helpers before the kernels.
const char *devicePrelude();
// codegen/prelude/tcgen05.cuh: the tcgen05 helpers (sm_100a modules).
const char *tcgen05Prelude();
// codegen/prelude/host.cuh: the host side's helpers after the kernels.
const char *hostPrelude();
// What `tilescope bench --devices` packs (tools/BenchDevices.h):
// codegen/runtime/ts_bench_entry.cuh (the bench library's C entry points),
// codegen/devbench.py and devbench_rank.py (the harness) and
// codegen/gpu_harness.py (the timing it shares with codegen/bench.py).
const char *benchEntryHeader();
const char *devicesBenchHarness();
const char *devicesBenchRank();
const char *gpuHarness();

} // namespace tilescope::codegen
