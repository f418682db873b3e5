// `tilescope lower FILE [--kernel K] [--set P=V,... | --auto --args
// M=..,N=..,K=.. [--table T.json] [--target h100|h200]] -o out.cu
// [--verify-ptx]`: dispatch and lower to CUDA C++. A kernel with parameters
// is lowered at the point of --set, or with --auto at the point a tuning
// table (tools/ModelInputs.h; the one shipped for --target unless --table)
// picks for the sizes of --args, said on stderr. --evict-first X,... gives the
// named global tensors' vector accesses an L2 evict_first policy (a cache
// hint; codegen/CudaEmitter.h). With --verify-ptx it also
// compiles with nvcc for each kernel's target (in a fresh folder, devices(N)
// kernels with the embedded runtime header beside them), checks that the PTX
// holds the instructions dispatch chose (for devices kernels: the entry and
// system-scope flag operations, and none of .gpu scope) and that ptxas
// reports no slow path (wgmma serialization, spills), and prints one line per
// check; a failed check exits 1.
//
// A kernel that `tilescope check` rejects is not lowered: the same proofs
// run first (check/KernelProofs.h: layouts and resources, barrier
// protocols, static races, write coverage; tools/LowerGate.h), and any
// finding is printed and exits 1 (input errors, as everywhere, exit 2). A
// kernel left `unknown` (an obligation neither proved nor checked) is refused
// too, with exit 3, unless --allow-unknown is given: then the "not proved"
// warnings are printed and the lowering goes on.
#include "check/KernelProofs.h"
#include "codegen/CudaEmitter.h"
#include "codegen/DeviceEmitter.h"
#include "codegen/RuntimeHeader.h"
#include "codegen/Toolchain.h"
#include "ir/Checker.h"
#include "ir/Parser.h"
#include "tools/Command.h"
#include "tools/InputFile.h"
#include "tools/ModelInputs.h"
#include "tools/ProblemSizes.h"
#include "tools/LowerGate.h"

#include <fmt/format.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>

namespace tilescope::tool {
namespace {
namespace cl = llvm::cl;

cl::SubCommand lowerCommand("lower", "Lower a kernel file to CUDA C++ with inline PTX");
cl::opt<std::string> input(cl::Positional, cl::desc("FILE"), cl::Required, cl::sub(lowerCommand));
cl::opt<std::string> kernelName("kernel", cl::desc("Lower only kernel K"), cl::value_desc("K"),
                                cl::sub(lowerCommand));
cl::opt<std::string> output("o", cl::desc("Output .cu file ('-' for stdout)"),
                            cl::value_desc("out.cu"), cl::init("-"), cl::sub(lowerCommand));
cl::opt<std::string> argsText("args", cl::desc("Sizes for --auto, e.g. M=4096,N=4096,K=4096"),
                              cl::value_desc("NAME=VALUE,..."), cl::sub(lowerCommand));
PointFlags point(lowerCommand, "Pick the point from the tuning table for the sizes of --args",
                 "Lower");
cl::opt<bool> pdl("pdl",
                  cl::desc("Launch with programmatic dependent launch (griddepcontrol.wait "
                           "first in every thread; sm_90a and later)"),
                  cl::sub(lowerCommand));
cl::list<std::string> evictFirst(
    "evict-first",
    cl::desc("Read and write these global tensors with an L2 evict_first cache policy (a hint: "
             "the kernel's results and proofs are unchanged)"),
    cl::value_desc("TENSOR,..."), cl::CommaSeparated, cl::sub(lowerCommand));
cl::opt<bool> verifyPtx("verify-ptx",
                        cl::desc("Compile with nvcc; check the PTX and ptxas's report"),
                        cl::sub(lowerCommand));

int runLower() {
  CommandInput in;
  if (!point.load(in, input, kernelName, argsText))
    return kInputError;
  const Module &module = *in.module;
  Diagnostics &diag = in.diag;
  // Three lowerings: one-device kernels and devices(N) kernels with other
  // statements than collectives (a TP GEMM's communication warp) through
  // lowerModule; collectives-only devices kernels on the runtime's tile
  // functions (lowerDeviceKernels). A file mixing them is lowered one kernel
  // at a time.
  size_t deviceKernels = 0, collectiveKernels = 0, selected = 0;
  for (const Kernel &k : module.kernels)
    if (kernelName.empty() || k.name == kernelName) {
      ++selected;
      deviceKernels += !k.launch.devices.empty();
      collectiveKernels += !k.launch.devices.empty() && codegen::collectivesOnly(k);
    }
  if ((deviceKernels && deviceKernels != selected) ||
      (collectiveKernels && collectiveKernels != selected)) {
    diag.error(llvm::SMLoc(), "the file mixes devices(N) kernels with one-device kernels, or "
                              "collectives-only devices kernels with others: lower them one at "
                              "a time with --kernel");
    return kInputError;
  }
  if (int gate = gateLowering(in, kernelName, point.allowUnknown, "lower"); gate != kClean)
    return gate;
  // What --verify-ptx compiles: the lowered source, and per kernel its
  // name, target and the PTX it must hold.
  struct Compiled {
    std::string name;
    TargetKind target;
    std::vector<std::string> dispatch, notes, expected;
  };
  std::vector<Compiled> kernels;
  std::string source;
  if (collectiveKernels) { // docs/scales.md: on the runtime codegen/runtime/ts_devices.cuh
    auto lowered = codegen::lowerDeviceKernels(module, diag, kernelName);
    if (!lowered)
      return kInputError;
    for (const codegen::LoweredDeviceKernel &k : lowered->kernels) {
      for (const std::string &c : k.dispatchChoices)
        llvm::errs() << k.name << ": dispatch " << c << "\n";
      const Kernel *ir = module.find(k.name);
      kernels.push_back({k.name, ir ? ir->launch.target : TargetKind::sm_90a, {}, {},
                         {".entry " + k.name + "("}});
    }
    source = lowered->source;
  } else {
    // --evict-first, and with --auto the tensors the table's entry names.
    std::vector<std::string> ef(evictFirst.begin(), evictFirst.end());
    for (const std::string &n : point.evictFirst)
      if (std::find(ef.begin(), ef.end(), n) == ef.end())
        ef.push_back(n);
    auto lowered = codegen::lowerModule(module, diag, kernelName, pdl, ef);
    if (!lowered)
      return kInputError;
    for (const codegen::LoweredKernel &k : lowered->kernels)
      kernels.push_back({k.name, k.target, k.dispatchChoices, k.notes, codegen::expectedPtx(k)});
    source = lowered->source;
  }
  // A devices kernel's flags must be system-scope operations (docs/scales.md,
  // "Memory model of peer accesses").
  if (deviceKernels)
    for (Compiled &k : kernels)
      k.expected.insert(k.expected.end(), {"fence.acq_rel.sys;", "st.relaxed.sys.global.u32",
                                           "ld.acquire.sys.global.u32"});
  // --evict-first: the policy and a hinted access must reach the PTX (none
  // when the named tensors have no 4- to 16-byte access).
  if (!evictFirst.empty() || !point.evictFirst.empty())
    for (Compiled &k : kernels)
      k.expected.insert(k.expected.end(),
                        {"createpolicy.fractional.L2::evict_first", ".L2::cache_hint"});
  std::string cuPath = output;
  if (output != "-" || !verifyPtx) {
    if (output == "-") {
      llvm::outs() << source;
      return kClean;
    }
    std::error_code ec;
    llvm::raw_fd_ostream os(output, ec);
    if (ec) {
      llvm::errs() << "tilescope: error: cannot write '" << output << "': " << ec.message() << "\n";
      return kInputError;
    }
    os << source;
  }
  if (!verifyPtx)
    return kClean;
  auto nvcc = codegen::findNvcc();
  if (!nvcc) {
    llvm::errs() << "tilescope: error: nvcc not found (set TILESCOPE_NVCC)\n";
    return kInputError;
  }
  // Compiled in a fresh folder: the source, and for devices kernels the
  // runtime header it includes (embedded in tilescope).
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("tilescope-lower", dir)) {
    llvm::errs() << "tilescope: error: cannot create a temporary folder\n";
    return kInputError;
  }
  auto writeFile = [&](const std::string &path, llvm::StringRef text) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    os << text;
    return !ec;
  };
  cuPath = std::string(dir) + "/lowered.cu";
  std::string header = std::string(dir) + "/ts_devices.cuh";
  if (!writeFile(cuPath, source) ||
      (deviceKernels && !writeFile(header, codegen::deviceRuntimeHeader()))) {
    llvm::errs() << "tilescope: error: cannot write into '" << dir << "'\n";
    return kInputError;
  }
  int status = kClean;
  auto cleanUp = [&] {
    llvm::sys::fs::remove(cuPath);
    llvm::sys::fs::remove(header);
    llvm::sys::fs::remove(std::string(dir));
  };
  for (const Compiled &k : kernels) {
    for (const std::string &c : k.dispatch)
      llvm::outs() << k.name << ": dispatch " << c << "\n";
    for (const std::string &n : k.notes)
      llvm::outs() << k.name << ": note: " << n << "\n";
    std::string ptx = cuPath + "." + k.name + ".ptx", cubin = cuPath + "." + k.name + ".cubin";
    auto p = codegen::build(*nvcc, cuPath, ptx, k.target, codegen::BuildKind::Ptx);
    if (p.exitCode != 0) {
      llvm::errs() << p.log;
      llvm::outs() << k.name << ": FAIL nvcc -ptx exited " << p.exitCode << "\n";
      cleanUp();
      return kFindings;
    }
    auto text = llvm::MemoryBuffer::getFile(ptx);
    std::string ptxText = text ? (*text)->getBuffer().str() : "";
    for (const std::string &want : k.expected) {
      bool ok = ptxText.find(want) != std::string::npos;
      llvm::outs() << k.name << ": " << (ok ? "ok" : "FAIL") << " ptx has " << want << "\n";
      if (!ok)
        status = kFindings;
    }
    if (deviceKernels) {
      // A weaker scope on a flag would not order a peer GPU's accesses.
      bool weak = ptxText.find("st.relaxed.gpu") != std::string::npos ||
                  ptxText.find("st.release.gpu") != std::string::npos ||
                  ptxText.find("ld.acquire.gpu") != std::string::npos;
      llvm::outs() << k.name << ": " << (weak ? "FAIL" : "ok")
                   << " no flag operation of .gpu scope\n";
      if (weak)
        status = kFindings;
    }
    auto c = codegen::build(*nvcc, cuPath, cubin, k.target, codegen::BuildKind::Cubin);
    if (c.exitCode != 0) {
      llvm::errs() << c.log;
      llvm::outs() << k.name << ": FAIL nvcc -cubin exited " << c.exitCode << "\n";
      cleanUp();
      return kFindings;
    }
    // Resource lines of this kernel.
    std::string line;
    for (char ch : c.log) {
      if (ch != '\n') {
        line += ch;
        continue;
      }
      if (line.find("Used") != std::string::npos || line.find("spill") != std::string::npos)
        llvm::outs() << k.name << ": ptxas"
                     << line.substr(line.find(':') == std::string::npos ? 0 : line.find(':') + 1)
                     << "\n";
      line.clear();
    }
    auto findings = codegen::slowPathFindings(c.log);
    for (const auto &f : findings)
      llvm::outs() << k.name << ": FAIL slow path (" << f.kind << "): " << f.line << "\n";
    if (!findings.empty())
      status = kFindings;
    else
      llvm::outs() << k.name << ": ok ptxas reports no slow path\n";
    llvm::sys::fs::remove(ptx);
    llvm::sys::fs::remove(cubin);
  }
  cleanUp();
  return status;
}

CommandRegistration registration(lowerCommand, runLower);
} // namespace
} // namespace tilescope::tool
