#include "codegen/Toolchain.h"

#include "ir/Intrinsics.h"

#include <fmt/format.h>

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Program.h>

#include <cstdlib>
#include <set>
#include <sstream>

namespace tilescope::codegen {

std::optional<std::string> findNvcc() {
  if (const char *env = std::getenv("TILESCOPE_NVCC"); env && *env)
    return std::string(env);
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/nvcc"))
    return std::string("/usr/local/cuda/bin/nvcc");
  if (auto p = llvm::sys::findProgramByName("nvcc"))
    return *p;
  return std::nullopt;
}

std::vector<std::string> nvccArgs(TargetKind target, BuildKind kind) {
  std::vector<std::string> args = {"-std=c++17", "-O3", gencodeFor(target)};
  switch (kind) {
  case BuildKind::Ptx: args.push_back("-ptx"); break;
  case BuildKind::Cubin:
    args.push_back("-cubin");
    args.push_back("-Xptxas=-v,-warn-spills,-warn-lmem-usage");
    break;
  case BuildKind::SharedLibrary:
    args.insert(args.end(), {"-shared", "-Xcompiler", "-fPIC"});
    break;
  }
  return args;
}

BuildResult build(const std::string &nvcc, const std::string &cuFile, const std::string &outFile,
                  TargetKind target, BuildKind kind) {
  std::vector<std::string> args = nvccArgs(target, kind);
  args.insert(args.begin(), nvcc);
  args.insert(args.end(), {cuFile, "-o", outFile});
  llvm::SmallString<128> logPath;
  llvm::sys::fs::createTemporaryFile("tilescope-nvcc", "log", logPath);
  std::vector<llvm::StringRef> argv(args.begin(), args.end());
  llvm::Optional<llvm::StringRef> redirects[] = {llvm::None, llvm::StringRef(logPath),
                                                llvm::StringRef(logPath)};
  BuildResult r;
  std::string err;
  r.exitCode = llvm::sys::ExecuteAndWait(nvcc, argv, llvm::None, redirects, 0, 0, &err);
  if (auto buf = llvm::MemoryBuffer::getFile(logPath))
    r.log = (*buf)->getBuffer().str();
  r.log += err;
  llvm::sys::fs::remove(logPath);
  return r;
}

int gpuCount(std::string *why) {
  std::string smi;
  if (const char *env = std::getenv("TILESCOPE_NVIDIA_SMI"); env && *env)
    smi = env;
  else if (auto p = llvm::sys::findProgramByName("nvidia-smi"))
    smi = *p;
  if (smi.empty() || !llvm::sys::fs::can_execute(smi)) {
    *why = "no nvidia-smi" + (smi.empty() ? std::string(" on PATH") : " at " + smi);
    return 0;
  }
  llvm::SmallString<128> listing;
  llvm::sys::fs::createTemporaryFile("tilescope-gpus", "txt", listing);
  llvm::Optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(listing),
                                                 llvm::StringRef(listing)};
  std::vector<llvm::StringRef> argv = {smi, "-L"};
  int rc = llvm::sys::ExecuteAndWait(smi, argv, llvm::None, redirects, 20);
  int gpus = 0;
  if (auto buf = llvm::MemoryBuffer::getFile(listing)) {
    std::istringstream in((*buf)->getBuffer().str());
    std::string line;
    while (std::getline(in, line))
      gpus += line.rfind("GPU ", 0) == 0;
  }
  llvm::sys::fs::remove(listing);
  if (gpus == 0)
    *why = fmt::format("`{} -L` lists none, exit status {}", smi, rc);
  return gpus;
}

std::vector<PtxasFinding> slowPathFindings(const std::string &log) {
  std::vector<PtxasFinding> out;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    auto has = [&](const char *s) { return line.find(s) != std::string::npos; };
    if (has("wgmma") && (has("serializ") || has("Performance Loss")))
      out.push_back({"wgmma-serialized", line});
    else if (has("warpgroup.arrive is injected"))
      // ptxas fences a wgmma whose register operands were defined after the
      // previous one (C7519): the wgmmas of one group no longer overlap.
      out.push_back({"wgmma-fence-injected", line});
    else if (has("setmaxnreg") && has("ignor"))
      out.push_back({"setmaxnreg-ignored", line});
    else if (has("bytes spill stores") && !has(" 0 bytes spill stores"))
      out.push_back({"spill", line});
    else if (has("warning") && has("spill"))
      out.push_back({"spill", line});
    else if (has("warning") && has("Local memory"))
      out.push_back({"local-memory", line});
  }
  return out;
}

std::vector<std::string> expectedPtx(const LoweredKernel &k) {
  std::set<std::string> want;
  const std::string tmaPtx(intrinsic(IntrinsicId::TmaLoad).ptx);
  // Dispatch's implementation names (dispatch/DispatchTable.cpp).
  for (const std::string &c : k.dispatchChoices) {
    std::string impl = c.substr(c.find("-> ") + 3);
    if (impl == "wgmma")
      want.insert(std::string(intrinsicName(IntrinsicId::WgmmaMmaAsync)));
    else if (impl == "tma")
      want.insert(tmaPtx);
    else if (intrinsicIdOf(impl) == IntrinsicId::Tcgen05Mma)
      want.insert(impl);
    else if (intrinsicIdOf(impl) == IntrinsicId::CpAsync)
      want.insert("cp.async.cg");
    else if (intrinsicIdOf(impl) == IntrinsicId::Ldmatrix)
      want.insert(impl);
  }
  // Natives written in the kernel itself (or produced by dispatch): the
  // tensor-core and TMA ones must reach the PTX.
  for (const std::string &n : k.natives) {
    switch (intrinsicIdOf(n)) {
    case IntrinsicId::Tcgen05Mma:
    case IntrinsicId::Tcgen05Ld:
    case IntrinsicId::WgmmaMmaAsync:
      want.insert(n);
      break;
    case IntrinsicId::TmaLoad:
      want.insert(tmaPtx);
      break;
    default:
      break;
    }
  }
  return {want.begin(), want.end()};
}

} // namespace tilescope::codegen
