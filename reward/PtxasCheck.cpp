// The resources stage's `--ptxas` part: the candidate is lowered to CUDA
// (codegen/), compiled to a cubin by nvcc with ptxas's resource report, and
// ptxas's registers per thread and spills are checked against the launch's
// budget (verifier/Resources.h): spills or more registers than the launch
// allows fail the stage; without nvcc, or when the kernel does not lower or
// compile, the stage is unknown (the report was asked for and not made).
#include "codegen/Toolchain.h"
#include "reward/Stages.h"
#include "verifier/Resources.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <regex>

namespace tilescope::reward_detail {
namespace {

// What ptxas -v said about the kernel's entry functions (the largest
// register count and the spilled bytes over all of them).
struct PtxasUsage {
  bool seen = false;
  int64_t registers = 0;
  int64_t spillStores = 0, spillLoads = 0;
};

PtxasUsage readPtxasLog(const std::string &log) {
  PtxasUsage u;
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex spills(R"((\d+) bytes spill stores, (\d+) bytes spill loads)");
  for (std::sregex_iterator it(log.begin(), log.end(), used), end; it != end; ++it) {
    u.seen = true;
    u.registers = std::max<int64_t>(u.registers, std::stoll((*it)[1]));
  }
  for (std::sregex_iterator it(log.begin(), log.end(), spills), end; it != end; ++it) {
    u.spillStores += std::stoll((*it)[1]);
    u.spillLoads += std::stoll((*it)[2]);
  }
  return u;
}

void notChecked(StageResult &r, const std::string &why) {
  r.status = StageStatus::Unknown;
  r.reason += "; ptxas not checked: " + why;
}

} // namespace

void addPtxasReport(const Kernel &kernel, llvm::SourceMgr &sm, StageResult &r) {
  std::optional<std::string> nvcc = codegen::findNvcc();
  if (!nvcc)
    return notChecked(r, "nvcc not found (set TILESCOPE_NVCC)");
  Diagnostics diag(sm, false);
  Module one;
  one.kernels.push_back(kernel);
  std::optional<codegen::LoweredModule> lowered = codegen::lowerModule(one, diag);
  if (!lowered || lowered->kernels.empty())
    return notChecked(r, "the kernel does not lower to CUDA" +
                             (diag.all().empty() ? "" : ": " + diag.all().front().message));
  llvm::SmallString<128> cu, cubin;
  if (llvm::sys::fs::createTemporaryFile("tilescope-reward", "cu", cu) ||
      llvm::sys::fs::createTemporaryFile("tilescope-reward", "cubin", cubin))
    return notChecked(r, "cannot create a temporary file");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(cu, ec);
    if (!ec)
      os << lowered->source;
  }
  codegen::BuildResult built =
      codegen::build(*nvcc, std::string(cu), std::string(cubin), lowered->kernels.front().target,
                     codegen::BuildKind::Cubin);
  llvm::sys::fs::remove(cu);
  llvm::sys::fs::remove(cubin);
  PtxasUsage u = readPtxasLog(built.log);
  if (built.exitCode != 0 || !u.seen) {
    std::string first = built.log.substr(0, built.log.find('\n'));
    return notChecked(r, fmt::format("nvcc -cubin exited {}{}", built.exitCode,
                                     first.empty() ? "" : ": " + first));
  }
  const TargetInfo &target = targetInfo(kernel.launch.target);
  int64_t budget = launchRegisterBudget(kernel.launch.threads, target, kernel.launch.ctasPerSm);
  r.reason += fmt::format("; ptxas ({}): {} registers/thread (budget {}), {} bytes spill "
                          "stores, {} bytes spill loads",
                          target.name, u.registers, budget, u.spillStores, u.spillLoads);
  if (u.registers > budget) {
    r.diagnostics.push_back(
        diagnosticAt(sm, kernel.loc, kernel.name, "resources.ptxas-registers",
                     fmt::format("ptxas uses {} registers per thread; {} threads per CTA leave {}",
                                 u.registers, kernel.launch.threads, budget),
                     fmt::format("ptxas -v for {}", target.name)));
    r.status = StageStatus::Fail;
  }
  if (u.spillStores > 0 || u.spillLoads > 0) {
    r.diagnostics.push_back(diagnosticAt(
        sm, kernel.loc, kernel.name, "resources.ptxas-spills",
        fmt::format("ptxas spills registers to local memory: {} bytes stored, {} bytes loaded "
                    "({} registers per thread at most with {} threads per CTA)",
                    u.spillStores, u.spillLoads, budget, kernel.launch.threads),
        fmt::format("ptxas -v for {}", target.name)));
    r.status = StageStatus::Fail;
  }
}

} // namespace tilescope::reward_detail
