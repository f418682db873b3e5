// The stages of the reward (Reward.h), each a function of one kernel that
// returns its StageResult (status, diagnostics with codes; the driver times
// them). Internal to reward/.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Stmt.h"
#include "reward/Reward.h"

#include <llvm/Support/SourceMgr.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::reward_detail {

// A diagnostic at `loc` of `sm` (file, line and column filled in).
RewardDiagnostic diagnosticAt(llvm::SourceMgr &sm, llvm::SMLoc loc, const std::string &kernel,
                              const std::string &code, const std::string &message,
                              const std::string &witness = "",
                              const std::string &severity = "error");

// The diagnostics of `diag` from index `from` on, with the kernel's name and
// a code derived from the stage and the message (docs/reward.md).
std::vector<RewardDiagnostic> convertDiagnostics(const Diagnostics &diag, size_t from,
                                                 const std::string &kernel,
                                                 const std::string &stage);

// The stable code of a parse, types or dispatch diagnostic.
std::string codeOfMessage(const std::string &stage, const std::string &message);

// PTX candidates (reward/PtxReward.cpp): whether the text is PTX (a `.ptx`
// file name, or a first directive `.version`), and the stages of each of its
// kernels, unscored.
bool isPtxSource(const std::string &source, const std::string &fileName);
// CUDA candidates (a `.cu` file name) are compiled to PTX by nvcc (`-ptx`,
// sm_100a when the text names tcgen05, else sm_90a) and rewarded as that
// PTX: the PTX, or nothing with the reason (nvcc missing, or its first error).
bool isCudaSource(const std::string &fileName);
// nvcc -ptx of a CUDA candidate; on failure `why` is nvcc's first error and
// `line` its line in the source (0 when nvcc names none).
std::optional<std::string> cudaToPtx(const std::string &source, std::string &why,
                                     unsigned &line);
std::vector<KernelReward> ptxKernelRewards(const std::string &source,
                                           const RewardOptions &options,
                                           std::vector<RewardDiagnostic> &fileDiagnostics);

StageResult typesStage(const Kernel &kernel, llvm::SourceMgr &sm);
StageResult dispatchStage(const Kernel &kernel, llvm::SourceMgr &sm);
StageResult resourcesStage(const Kernel &kernel, llvm::SourceMgr &sm);
// --ptxas: lowers and compiles the kernel with nvcc and checks ptxas's
// registers and spills against the launch's budget (PtxasCheck.cpp); adds
// to the resources stage `r` (fail on spills or too many registers, unknown
// when it cannot be made).
void addPtxasReport(const Kernel &kernel, llvm::SourceMgr &sm, StageResult &r);
StageResult layoutsStage(const Kernel &kernel, llvm::SourceMgr &sm);
StageResult barriersStage(const Kernel &kernel, llvm::SourceMgr &sm);
StageResult racesStage(const Kernel &kernel, llvm::SourceMgr &sm);
// `check`'s write-coverage proof with the global bounds (and, on devices(N)
// kernels, its device-protocol proof), run through check/KernelProofs.h.
StageResult coverageStage(const Kernel &kernel, llvm::SourceMgr &sm);

// What the simulate stage needs besides the kernel.
struct SimulateRequest {
  std::string problem; // the task's; empty: unknown
  std::string sizes;   // "auto" or "M=..;M=.."
  uint64_t seed = 0;
  double timeoutMs = 10000;
  uint64_t maxSteps = 0;
  uint64_t maxMemoryMb = 512;
  std::map<std::string, RewardTolerance> tolerances;
  std::map<std::string, std::string> dtypes; // RewardOptions::dtypes
};
StageResult simulateStage(const Kernel &kernel, llvm::SourceMgr &sm, const SimulateRequest &request,
                          std::vector<SimulatedSize> &ran);

// What the performance stage needs besides the kernel (PerformanceStage.cpp).
struct PerformanceRequest {
  std::string problem; // the task's: a GEMM's flops are the baseline's work
  std::string sizes;   // "auto" (kPerformanceAutoSize each) or "M=..,N=..,K=.."
  std::string machine; // a bundled machine; empty: h100
};
constexpr int64_t kPerformanceAutoSize = 4096;
StageResult performanceStage(const Kernel &kernel, llvm::SourceMgr &sm,
                             const PerformanceRequest &request,
                             std::optional<PerformanceEstimate> &estimate);

} // namespace tilescope::reward_detail
