// `tilescope bench FILE --kernel K --args M=4096,N=4096,K=4096 --ref gemm_abt
//  [--set P=V,... | --auto [--table T.json] [--target h100|h200]] [--scalars eps=1e-6] [--reps 50]
//  [--keep DIR] [--harness bench.py]` (GPU machine): lower, build a
// shared library with nvcc, and run the harness codegen/bench.py, which checks
// the result against a float64 reference, times the kernel with CUDA events
// next to cuBLAS, cuBLASLt's FP8 GEMM, torch SDPA (cuDNN and flash backends,
// for attention) or Triton in the same process, and prints one JSON object.
// A kernel with parameters runs at the point of --set, or with --auto at the
// point the tuning table picks for --args (tools/ModelInputs.h).
// Exit 0 when the result is right, 1 when it is wrong, 2 on input errors.
// Like `lower`, it first runs the proofs of `tilescope check` (tools/LowerGate.h):
// a kernel with findings is not built (exit 1), nor one left unknown (exit 3)
// unless --allow-unknown is given.
#include "codegen/CudaEmitter.h"
#include "codegen/Toolchain.h"
#include "ir/Checker.h"
#include "ir/Parser.h"
#include "tools/Command.h"
#include "tools/InputFile.h"
#include "tools/ModelInputs.h"
#include "tools/LowerGate.h"
#include "tools/OptionValues.h"

#include <fmt/format.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/raw_ostream.h>

namespace tilescope::tool {
namespace {
namespace cl = llvm::cl;

cl::SubCommand benchCommand("bench", "Compile, check and time a kernel on the GPU");
cl::opt<std::string> input(cl::Positional, cl::desc("FILE"), cl::Required, cl::sub(benchCommand));
cl::opt<std::string> kernelName("kernel", cl::desc("Kernel to run"), cl::Required,
                                cl::sub(benchCommand));
cl::opt<std::string> argsOpt("args", cl::desc("Shape symbols, e.g. M=4096,N=4096,K=4096"),
                             cl::Required, cl::sub(benchCommand));
cl::opt<std::string> scalarsOpt("scalars", cl::desc("Scalar parameters, e.g. eps=1e-6"),
                                cl::init(""), cl::sub(benchCommand));
cl::opt<std::string> refOpt("ref",
                            cl::desc("Reference: gemm_abt, gemm_ab, rmsnorm, fp8_gemm, "
                                     "fp8_gemm_blockscaled, attention or attention_causal"),
                            cl::Required, cl::sub(benchCommand));
IntOption<int> reps("reps", cl::desc("Timed runs (median reported)"), cl::init(50),
                  cl::sub(benchCommand));
cl::opt<std::string> keep("keep", cl::desc("Keep the .cu and .so in DIR"), cl::init(""),
                          cl::sub(benchCommand));
cl::opt<std::string> python("python", cl::desc("Python with torch and triton"),
                            cl::init("python3"), cl::sub(benchCommand));
cl::opt<std::string> dump("dump", cl::desc("Save inputs/outputs as .npy with this prefix"),
                          cl::init(""), cl::sub(benchCommand));

PointFlags point(benchCommand, "Pick the point from the tuning table for --args",
                 "Build and time");
cl::opt<std::string> harnessOpt("harness", cl::desc("The harness bench.py (default: beside the "
                                                    "binary, else the source tree's codegen/)"),
                                cl::init(""), cl::sub(benchCommand));

// A portable build (TILESCOPE_PORTABLE, scripts/portable) travels without its
// source tree, with bench.py beside the binary.
std::string findHarness() {
  if (!harnessOpt.empty())
    return harnessOpt;
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, (void *)&findHarness);
  llvm::SmallString<256> beside(llvm::sys::path::parent_path(exe));
  llvm::sys::path::append(beside, "bench.py");
  if (llvm::sys::fs::exists(beside))
    return beside.str().str();
  return std::string(TILESCOPE_SOURCE_DIR) + "/codegen/bench.py";
}

int runBench() {
  CommandInput in;
  if (!point.load(in, input, kernelName, argsOpt))
    return kInputError;
  const Module &module = *in.module;
  Diagnostics &diag = in.diag;
  // The harness runs one process on one GPU; a devices(N) kernel needs one
  // process per GPU with the peer table (docs/scales.md).
  if (const Kernel *k = module.find(kernelName); k && !k->launch.devices.empty()) {
    diag.error(k->loc, fmt::format("bench: kernel '{}' runs on devices(N); `tilescope bench` runs "
                                   "one process on one GPU. Devices kernels are timed by "
                                   "bench/devscale (devscale_bench.cu forks a process per GPU and "
                                   "calls their lowered launchers; docs/scales.md)",
                                   k->name));
    return kInputError;
  }
  if (int gate = gateLowering(in, kernelName, point.allowUnknown, "bench"); gate != kClean)
    return gate;
  auto lowered = codegen::lowerModule(module, diag, kernelName);
  if (!lowered)
    return kInputError;
  auto nvcc = codegen::findNvcc();
  if (!nvcc) {
    llvm::errs() << "tilescope: error: nvcc not found (set TILESCOPE_NVCC)\n";
    return kInputError;
  }
  llvm::SmallString<128> dir;
  if (keep.empty())
    llvm::sys::fs::createUniqueDirectory("tilescope-bench", dir);
  else {
    dir = keep;
    llvm::sys::fs::create_directories(dir);
  }
  std::string cu = (dir + "/" + kernelName + ".cu").str(), so = (dir + "/" + kernelName + ".so").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(cu, ec);
    os << lowered->source;
  }
  auto b = codegen::build(*nvcc, cu, so, lowered->kernels[0].target,
                          codegen::BuildKind::SharedLibrary);
  if (b.exitCode != 0) {
    llvm::errs() << b.log << "tilescope: error: nvcc failed\n";
    return kInputError;
  }
  auto py = llvm::sys::findProgramByName(python);
  if (!py) {
    llvm::errs() << "tilescope: error: no '" << python << "'\n";
    return kInputError;
  }
  std::string harness = findHarness();
  std::vector<std::string> args = {*py,       harness,         "--lib",   so,
                                   "--kernel", kernelName,      "--args",  argsOpt,
                                   "--ref",    refOpt,          "--reps",  std::to_string(reps),
                                   "--scalars", scalarsOpt};
  if (!dump.empty()) {
    args.push_back("--dump");
    args.push_back(dump);
  }
  std::vector<llvm::StringRef> argv(args.begin(), args.end());
  int rc = llvm::sys::ExecuteAndWait(*py, argv);
  return rc == 0 ? kClean : (rc == 1 ? kFindings : kInputError);
}

CommandRegistration registration(benchCommand, runBench);
} // namespace
} // namespace tilescope::tool
