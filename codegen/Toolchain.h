// Running nvcc on lowered CUDA: finding the compiler, building PTX, cubins
// with the ptxas resource report, or a shared library for the benchmark
// harness, and reading what ptxas says about slow paths. Depends on
// llvm::sys (processes, files) only.
#pragma once

#include "codegen/CudaEmitter.h"

#include <optional>
#include <string>
#include <vector>

namespace tilescope::codegen {

// $TILESCOPE_NVCC, then /usr/local/cuda/bin/nvcc, then nvcc on PATH.
std::optional<std::string> findNvcc();

enum class BuildKind { Ptx, Cubin, SharedLibrary };

struct BuildResult {
  int exitCode = -1;
  std::string log; // nvcc / ptxas output (stderr and stdout)
};

// nvcc's arguments before the input and output files: -std=c++17 -O3 for
// the target; Cubin adds -Xptxas -v (resource report), SharedLibrary -shared
// -fPIC. `build` runs them; `tilescope bench --devices` writes them into its
// package, whose harness runs nvcc on the GPU machine (tools/BenchDevices.h).
std::vector<std::string> nvccArgs(TargetKind target, BuildKind kind);

// nvcc with nvccArgs on cuFile, writing outFile.
BuildResult build(const std::string &nvcc, const std::string &cuFile, const std::string &outFile,
                  TargetKind target, BuildKind kind);

// The GPUs this machine has, as `nvidia-smi -L` lists them
// ($TILESCOPE_NVIDIA_SMI, else nvidia-smi on PATH): 0, with the reason in
// `why`, when there is no nvidia-smi or it lists none. `tilescope bench`
// asks before it builds anything for a GPU.
int gpuCount(std::string *why);

// What ptxas reported that signals a slow path: wgmma serialization
// (C7510-style "Potential Performance Loss"), ignored setmaxnreg, spills.
struct PtxasFinding {
  std::string kind; // "wgmma-serialized", "spill", "setmaxnreg-ignored"
  std::string line;
};
std::vector<PtxasFinding> slowPathFindings(const std::string &log);

// The PTX mnemonics that the dispatch choices of a kernel must produce
// ("wgmma" -> "wgmma.mma_async", "tma" -> "cp.async.bulk.tensor", ...).
std::vector<std::string> expectedPtx(const LoweredKernel &k);

} // namespace tilescope::codegen
