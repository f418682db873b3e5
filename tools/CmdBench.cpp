// `tilescope bench FILE --kernel K --args M=4096,N=4096,K=4096 --ref gemm_abt
//  [--set P=V,... | --auto [--table T.json] [--target h100|h200]] [--scalars eps=1e-6] [--reps 50]
//  [--keep DIR] [--harness bench.py]` (GPU machine): lower, build a
// shared library with nvcc, and run the harness codegen/bench.py, which checks
// the result against a float64 reference, times the kernel with CUDA events
// next to cuBLAS, cuBLASLt's FP8 GEMM, torch SDPA (cuDNN and flash backends,
// for attention) or Triton in the same process, and prints one JSON object.
// A kernel with parameters runs at the point of --set, or with --auto at the
// point the tuning table picks for --args (tools/ModelInputs.h).
//
// A devices(N) kernel: `tilescope bench FILE --kernel K --args E=... --devices N
//  [--package DIR | --keep DIR] [--reps R] [--json]` checks its output
// against the float64 reference of its `// problem:` on N processes, one per
// GPU (or sharing the GPUs there are), and times it next to NCCL: tilescope
// writes a package (tools/BenchDevices.h) and runs its harness
// (codegen/devbench.py); with --package it only writes it, for a GPU machine
// without tilescope.
//
// Exit 0 when the result is right, 1 when it is wrong, 2 on input errors
// (and on a machine without a GPU, said so before anything is built).
// Like `lower`, it first runs the proofs of `tilescope check` (tools/LowerGate.h):
// a kernel with findings is not built (exit 1), nor one left unknown (exit 3)
// unless --allow-unknown is given.
#include "codegen/CudaEmitter.h"
#include "codegen/DeviceEmitter.h"
#include "codegen/Toolchain.h"
#include "ir/Checker.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "tools/BenchDevices.h"
#include "tools/Command.h"
#include "tools/InputFile.h"
#include "tools/LowerGate.h"
#include "tools/ModelInputs.h"
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
                                     "fp8_gemm_blockscaled, attention or attention_causal "
                                     "(one-device kernels; a devices kernel's is its problem)"),
                            cl::init(""), cl::sub(benchCommand));
IntOption<int> reps("reps", cl::desc("Timed runs (median reported)"), cl::init(50),
                  cl::sub(benchCommand));
cl::opt<std::string> keep("keep",
                          cl::desc("Keep the .cu and .so in DIR (a devices kernel: its package)"),
                          cl::init(""), cl::sub(benchCommand));
cl::opt<std::string> python("python", cl::desc("Python with torch and triton"),
                            cl::init("python3"), cl::sub(benchCommand));
cl::opt<std::string> dump("dump", cl::desc("Save inputs/outputs as .npy with this prefix"),
                          cl::init(""), cl::sub(benchCommand));

IntOption<int64_t> devicesOpt("devices",
                              cl::desc("devices(N) kernels: N, the processes to run (one per GPU; "
                                       "sharing the GPUs through CUDA IPC where there are fewer)"),
                              cl::init(0), cl::sub(benchCommand));
cl::opt<std::string> packageOpt("package",
                                cl::desc("devices(N) kernels: write the package a GPU machine runs "
                                         "(python3 DIR/devbench.py DIR/K.nN.json) into DIR and "
                                         "stop; needs no GPU"),
                                cl::init(""), cl::sub(benchCommand));
cl::opt<bool> jsonOpt("json",
                      cl::desc("devices(N) kernels: one JSON object instead of the table (the "
                               "one-device harness always prints JSON)"),
                      cl::sub(benchCommand));

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

// The one answer of both benches on a machine without a GPU, before
// anything is built for it.
int noGpu(const std::string &why, llvm::StringRef hint) {
  llvm::errs() << "tilescope bench: error: no GPU on this machine (" << why
               << "): bench runs the kernel on a GPU\n"
               << "note: " << hint << "\n";
  return kInputError;
}

// Runs `python harness args...` and maps its status: 0 right, 1 wrong, else an input error.
int runHarness(const std::string &harness, std::vector<std::string> args) {
  auto py = llvm::sys::findProgramByName(python);
  if (!py) {
    llvm::errs() << "tilescope: error: no '" << python << "'\n";
    return kInputError;
  }
  args.insert(args.begin(), {*py, harness});
  std::vector<llvm::StringRef> argv(args.begin(), args.end());
  int rc = llvm::sys::ExecuteAndWait(*py, argv);
  return rc == 0 ? kClean : (rc == 1 ? kFindings : kInputError);
}

std::string benchDir() {
  llvm::SmallString<128> dir;
  if (keep.empty())
    llvm::sys::fs::createUniqueDirectory("tilescope-bench", dir);
  else {
    dir = keep;
    llvm::sys::fs::create_directories(dir);
  }
  return dir.str().str();
}

// A devices(N) kernel (tools/BenchDevices.h): plan, proofs, lowering, the
// package; then, unless --package, its harness on this machine's GPUs.
int runDevicesBench(CommandInput &in, const Kernel &k) {
  Diagnostics &diag = in.diag;
  if (!devicesOpt.getNumOccurrences()) {
    diag.error(k.loc, fmt::format("bench: kernel '{}' runs on devices({}): give --devices N, the "
                                  "number of processes (one per GPU, or sharing the GPUs there "
                                  "are through CUDA IPC)",
                                  k.name, print(k.launch.devices.front())));
    return kInputError;
  }
  auto refuse = [](llvm::StringRef what) {
    llvm::errs() << "tilescope bench: error: " << what << "\n";
    return kInputError;
  };
  if (!dump.empty())
    return refuse("--dump is for one-device kernels");
  if (!harnessOpt.empty())
    return refuse("--harness names the one-device harness; a devices kernel's is written into "
                  "its package");
  if (!packageOpt.empty() && !keep.empty())
    return refuse("--package and --keep both name the package's folder: give one");
  if (reps < 1)
    return refuse(fmt::format("--reps takes at least 1 timed call, not {}", reps.getValue()));
  DevicesBenchRequest request;
  request.file = input;
  request.kernel = &k;
  request.devices = devicesOpt;
  request.argsText = argsOpt;
  request.scalarsText = scalarsOpt;
  request.ref = refOpt;
  request.reps = reps;
  request.source = in.sourceMgr.getMemoryBuffer(in.sourceMgr.getMainFileID())->getBuffer().str();
  auto plan = planDevicesBench(request, diag);
  if (!plan)
    return kInputError;
  if (int gate = gateLowering(in, kernelName, point.allowUnknown, "bench"); gate != kClean)
    return gate;
  std::string source;
  std::vector<codegen::LauncherParam> launcher;
  if (codegen::collectivesOnly(k)) {
    auto lowered = codegen::lowerDeviceKernels(*in.module, diag, kernelName);
    if (!lowered)
      return kInputError;
    source = lowered->source;
    launcher = lowered->kernels.at(0).launcher;
  } else {
    auto lowered = codegen::lowerModule(*in.module, diag, kernelName);
    if (!lowered)
      return kInputError;
    source = lowered->source;
    launcher = lowered->kernels.at(0).launcher;
  }
  std::string dir = packageOpt.empty() ? benchDir() : packageOpt.getValue();
  auto manifest = writeDevicesPackage(std::move(*plan), source, launcher, k.launch.target, dir);
  if (!manifest)
    return kInputError;
  llvm::SmallString<256> harness(dir);
  llvm::sys::path::append(harness, "devbench.py");
  if (!packageOpt.empty()) {
    llvm::outs() << "tilescope bench: wrote " << *manifest << "\n"
                 << "on a GPU machine: python3 " << harness << " " << *manifest << "\n";
    return kClean;
  }
  std::string why;
  if (codegen::gpuCount(&why) == 0)
    return noGpu(why, "`--package DIR` writes what a GPU machine runs without tilescope: "
                      "python3 DIR/devbench.py DIR/<kernel>.n<N>.json (docs/scales.md)");
  std::vector<std::string> args = {*manifest, "--reps", std::to_string(reps)};
  if (jsonOpt)
    args.push_back("--json");
  if (auto nvcc = codegen::findNvcc())
    args.insert(args.end(), {"--nvcc", *nvcc});
  return runHarness(harness.str().str(), args);
}

int runBench() {
  CommandInput in;
  if (!point.load(in, input, kernelName, argsOpt))
    return kInputError;
  const Module &module = *in.module;
  Diagnostics &diag = in.diag;
  const Kernel *k = module.find(kernelName);
  if (k && !k->launch.devices.empty())
    return runDevicesBench(in, *k);
  if (k && devicesOpt.getNumOccurrences()) {
    diag.error(k->loc, fmt::format("bench: --devices is for devices(N) kernels; '{}' runs on one "
                                   "device",
                                   k->name));
    return kInputError;
  }
  if (!packageOpt.empty()) {
    llvm::errs()
        << "tilescope bench: error: --package is for devices(N) kernels (a GPU machine "
           "without LLVM runs a one-device bench from a portable build: scripts/portable)\n";
    return kInputError;
  }
  if (refOpt.empty()) {
    llvm::errs() << "tilescope bench: error: --ref is required for a one-device kernel (gemm_abt, "
                    "gemm_ab, rmsnorm, fp8_gemm, fp8_gemm_blockscaled, attention, "
                    "attention_causal)\n";
    return kInputError;
  }
  if (int gate = gateLowering(in, kernelName, point.allowUnknown, "bench"); gate != kClean)
    return gate;
  // With --auto, the cache hint the table's entry was measured with.
  auto lowered = codegen::lowerModule(module, diag, kernelName, false, point.evictFirst);
  if (!lowered)
    return kInputError;
  std::string why;
  if (codegen::gpuCount(&why) == 0)
    return noGpu(why, "a GPU machine without LLVM runs bench from a portable build "
                      "(scripts/portable, docs/codegen.md)");
  auto nvcc = codegen::findNvcc();
  if (!nvcc) {
    llvm::errs() << "tilescope: error: nvcc not found (set TILESCOPE_NVCC)\n";
    return kInputError;
  }
  std::string dir = benchDir();
  std::string cu = dir + "/" + kernelName + ".cu", so = dir + "/" + kernelName + ".so";
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
  std::vector<std::string> args = {
      "--lib", so,     "--kernel", kernelName,           "--args",    argsOpt,
      "--ref", refOpt, "--reps",   std::to_string(reps), "--scalars", scalarsOpt};
  if (!dump.empty()) {
    args.push_back("--dump");
    args.push_back(dump);
  }
  return runHarness(findHarness(), args);
}

CommandRegistration registration(benchCommand, runBench);
} // namespace
} // namespace tilescope::tool
