// Lowering of dispatched native IR to one CUDA C++ translation unit: a
// __global__ function per kernel with inline PTX where CUDA C++ has no
// spelling (TMA, mbarrier, wgmma, elect, setmaxnreg, fence.proxy.async,
// cp.async), and a host launcher that builds the TMA tensor maps through the
// driver API (cuTensorMapEncodeTiled reached with
// cudaGetDriverEntryPointByVersion), raises the dynamic shared memory limit
// and launches.
//
// Launcher ABI (what tools/CmdBench.cpp and codegen/bench.py call), per kernel K:
//   extern "C" int tilescope_launch_K(void *const *tensors, const int64_t *symbols,
//                                     const double *scalars, cudaStream_t stream);
//   extern "C" const char *tilescope_abi_K(); // JSON: tensors, symbols, scalars in order
// The return value is a cudaError_t (0: launched).
//
// Register tiles become per-thread arrays indexed by the register slot their
// layout gives; the slot of each access is decided here, at compile time,
// by evaluating the index for every thread of the CTA (accesses whose slot
// depends on run-time values are diagnosed). Unrolled loops are unrolled
// here so that those slots are constants. Runs of consecutive elements moved
// between registers and memory by an unrolled loop become 32/64/128-bit
// accesses when their alignment follows from the `where` constraints.
//
// Depends on ir/ (and dispatch); never on Z3 or the simulator.
#pragma once

#include "codegen/Launcher.h"
#include "ir/Diagnostics.h"
#include "ir/Stmt.h"

#include <optional>
#include <string>
#include <vector>

namespace tilescope::codegen {

struct LoweredKernel {
  std::string name;
  TargetKind target;
  std::vector<std::string> dispatchChoices; // "wg.gemm -> wgmma", in program order
  std::vector<std::string> notes;           // what lowering chose to leave slow, and why
  std::vector<std::string> natives;         // native intrinsics lowered, first use order
  std::vector<LauncherParam> launcher;      // a devices(N) kernel's launcher parameters
};

struct LoweredModule {
  std::string source; // the .cu text
  std::vector<LoweredKernel> kernels;
};

// Dispatches (when the kernel still has tile primitives) and lowers every
// kernel of `module` (or only `kernelName`). Errors go to `diag`. With `pdl`
// every kernel is launched with programmatic dependent launch
// (cudaLaunchAttributeProgrammaticStreamSerialization): its CTAs may be
// placed while the previous kernel of the stream drains; each thread runs
// `griddepcontrol.wait` (the previous grid complete, its writes visible)
// before anything else, then `griddepcontrol.launch_dependents`. What one
// kernel does is unchanged; sm_90a and later. The global tensor parameters
// named in `evictFirst` are read and written with an L2 evict_first cache
// policy (createpolicy.fractional.L2::evict_first, then ld.global.nc /
// st.global with .L2::cache_hint) wherever codegen forms 4-, 8- or 16-byte
// accesses; single elements stay plain. A cache hint only: what the kernel
// computes, and so its proofs and the simulator, are unchanged; sm_80 and
// later. A name that is no global tensor parameter of a lowered kernel is an
// error.
std::optional<LoweredModule> lowerModule(const Module &module, Diagnostics &diag,
                                         const std::string &kernelName = "", bool pdl = false,
                                         const std::vector<std::string> &evictFirst = {});

// The nvcc -gencode argument for a target: compute_90a/sm_90a etc.
std::string gencodeFor(TargetKind target);

} // namespace tilescope::codegen
