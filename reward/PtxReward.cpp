// The reward of a PTX candidate (Stages.h): the stages that apply to PTX
// from any compiler. parse is the PTX reader; resources what PTX says (threads
// per CTA, static shared memory; registers are ptxas's to allocate);
// barriers the lifted synchronisation put through the barrier proofs
// (ptx/Lift.h, the protocol and the pipeline stages: pass when proved, fail on a trusted finding,
// unknown otherwise); races through the static race check on the
// shared-memory accesses lifted (ptx/LiftMemory.h);
// types, dispatch and layouts do not apply and simulate does not run on PTX
// (skipped, no credit); performance carries the condensed pipeline summary and
// is left out of the score. docs/ptx.md and docs/reward.md.
#include "codegen/Toolchain.h"
#include "ptx/Condense.h"
#include "ptx/Lift.h"
#include "ptx/Parser.h"
#include "racecheck/StaticRaces.h"
#include "reward/Stages.h"
#include "verifier/BarrierProofs.h"
#include "proof/ProofContext.h"

#include <cctype>
#include <fmt/format.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/xxhash.h>

namespace tilescope::reward_detail {

namespace {

StageResult stage(const std::string &name, StageStatus status, std::string reason) {
  StageResult r;
  r.name = name;
  r.status = status;
  r.reason = std::move(reason);
  return r;
}

// As the other stages spell codes: "parity aliasing" -> "parity-aliasing".
std::string slugOf(std::string_view s) {
  std::string out;
  for (char c : s)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '-';
  return out;
}

StageResult resources(const ptx::KernelSummary &s, const ptx::Function &f) {
  int64_t threads = 0;
  for (const auto &[name, value] : f.performanceDirectives)
    if (name == "reqntid" || name == "maxntid") {
      int64_t x = 1, y = 1, z = 1;
      std::sscanf(value.c_str(), "%ld, %ld, %ld", &x, &y, &z);
      threads = x * y * z;
    }
  constexpr int64_t kSharedLimit = 232448; // 227 KiB opt-in, sm_90 and sm_100
  std::string facts = fmt::format(
      "static shared {} bytes{}; {} virtual registers declared (ptxas allocates the real ones); "
      "{} threads per CTA",
      s.staticShared, s.dynamicShared ? " + dynamic (set at launch)" : "", s.registersDeclared,
      threads ? std::to_string(threads) : std::string("unknown (no .maxntid/.reqntid)"));
  if (threads > 1024 || s.staticShared > kSharedLimit)
    return stage("resources", StageStatus::Fail, "over a limit: " + facts);
  return stage("resources", StageStatus::Pass, facts);
}

StageResult barriers(const ptx::Lifted &lifted, const ptx::Function &f, llvm::SourceMgr &sm) {
  BarrierReport report = proveBarrierProtocols(lifted.skeleton);
  StageResult r;
  r.name = "barriers";
  if (lifted.complete && !report.findings.empty()) {
    for (const ProtocolFinding &pf : report.findings) {
      std::string_view kind = protocolViolationName(pf.kind);
      r.diagnostics.push_back(diagnosticAt(sm, pf.loc, f.name, "barriers." + slugOf(kind),
                                           fmt::format("{}: {}", kind, pf.message)));
    }
    r.status = StageStatus::Fail;
    r.reason = "the lifted synchronisation has findings";
    return r;
  }
  std::vector<std::pair<llvm::SMLoc, std::string>> open = lifted.notLifted;
  for (const auto &x : report.notProved)
    open.push_back(x);
  if (!lifted.complete)
    for (const ProtocolFinding &pf : report.findings)
      open.push_back(
          {pf.loc, "a possible finding not trusted, as operations were left out: " + pf.message});
  for (const auto &[loc, why] : open)
    r.diagnostics.push_back(
        diagnosticAt(sm, loc, f.name, "barriers.not-proved", "not proved: " + why, "", "warning"));
  r.status = open.empty() ? StageStatus::Pass : StageStatus::Unknown;
  r.reason = open.empty() ? "barrier protocol proved on the synchronisation lifted from PTX "
                            "(memory accesses are the races stage's)"
                          : "not proved: " + open.front().second;
  return r;
}

// The shared-memory accesses lifted from PTX through the static race check
// (global memory is not modelled: the grid is a launch argument).
StageResult races(const ptx::Lifted &lifted, const ptx::Function &f, llvm::SourceMgr &sm) {
  RaceOptions options;
  options.threadPairsListed = 4096;
  RaceReport report =
      lifted.accesses > 0 ? checkStaticRaces(lifted.skeleton, options) : RaceReport{};
  StageResult r;
  r.name = "races";
  if (lifted.complete && !report.findings.empty()) {
    for (const RaceFinding &rf : report.findings)
      r.diagnostics.push_back(diagnosticAt(sm, rf.first, f.name, "races.data-race", rf.message));
    r.status = StageStatus::Fail;
    r.reason = "a data race in shared memory";
    return r;
  }
  std::vector<std::pair<llvm::SMLoc, std::string>> open = lifted.memoryNotLifted;
  for (const auto &x : report.notChecked)
    open.push_back(x);
  if (!lifted.complete)
    open.push_back({f.loc, "synchronisation was left out of the lifting (the barriers stage "
                           "says what)"});
  for (const auto &[loc, why] : open)
    r.diagnostics.push_back(
        diagnosticAt(sm, loc, f.name, "races.not-proved", "not proved: " + why, "", "warning"));
  r.status = open.empty() ? StageStatus::Pass : StageStatus::Unknown;
  r.reason = open.empty() ? fmt::format("no race in shared memory within a CTA among the {} "
                                        "accesses lifted from PTX (global memory not modelled)",
                                        lifted.accesses)
                          : "not proved: " + open.front().second;
  return r;
}

} // namespace

bool isCudaSource(const std::string &fileName) {
  return fileName.size() > 3 && fileName.compare(fileName.size() - 3, 3, ".cu") == 0;
}

std::optional<std::string> cudaToPtx(const std::string &source, std::string &why,
                                     unsigned &line) {
  line = 0;
  std::optional<std::string> nvcc = codegen::findNvcc();
  if (!nvcc) {
    why = "a CUDA candidate is compiled to PTX by nvcc, which was not found (set TILESCOPE_NVCC)";
    return std::nullopt;
  }
  llvm::SmallString<128> cu, ptx;
  if (llvm::sys::fs::createTemporaryFile("tilescope-reward", "cu", cu) ||
      llvm::sys::fs::createTemporaryFile("tilescope-reward", "ptx", ptx)) {
    why = "cannot create a temporary file";
    return std::nullopt;
  }
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(cu, ec);
    if (!ec)
      os << source;
  }
  TargetKind target = source.find("tcgen05") != std::string::npos ? TargetKind::sm_100a
                                                                    : TargetKind::sm_90a;
  codegen::BuildResult built = codegen::build(*nvcc, std::string(cu), std::string(ptx), target,
                                              codegen::BuildKind::Ptx);
  auto text = llvm::MemoryBuffer::getFile(ptx);
  llvm::sys::fs::remove(cu);
  llvm::sys::fs::remove(ptx);
  if (built.exitCode != 0 || !text) {
    size_t err = built.log.find("error");
    std::string first = built.log.substr(err == std::string::npos ? 0 : err);
    // nvcc names the line as "FILE.cu(LINE): error: ...".
    size_t open = err == std::string::npos ? std::string::npos : built.log.rfind('(', err);
    if (open != std::string::npos) {
      unsigned n = 0;
      size_t i = open + 1;
      while (i < err && std::isdigit(static_cast<unsigned char>(built.log[i])) && n < 1u << 24)
        n = n * 10 + unsigned(built.log[i++] - '0');
      if (i > open + 1 && built.log.compare(i, 3, "): ") == 0 && i + 3 == err)
        line = n;
    }
    why = fmt::format("nvcc -ptx exited {}: {}", built.exitCode, first.substr(0, first.find('\n')));
    return std::nullopt;
  }
  return (*text)->getBuffer().str();
}

bool isPtxSource(const std::string &source, const std::string &fileName) {
  if (fileName.size() > 4 && fileName.compare(fileName.size() - 4, 4, ".ptx") == 0)
    return true;
  // The first directive, past comments and blank lines.
  size_t i = 0;
  while (i < source.size()) {
    if (std::isspace(static_cast<unsigned char>(source[i]))) {
      ++i;
    } else if (source.compare(i, 2, "//") == 0) {
      size_t nl = source.find('\n', i);
      i = nl == std::string::npos ? source.size() : nl + 1;
    } else {
      return source.compare(i, 8, ".version") == 0;
    }
  }
  return false;
}

std::vector<KernelReward> ptxKernelRewards(const std::string &source, const RewardOptions &options,
                                           std::vector<RewardDiagnostic> &fileDiagnostics) {
  std::vector<KernelReward> out;
  llvm::SourceMgr sm;
  Diagnostics diag(sm, false);
  unsigned id = sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, options.fileName), llvm::SMLoc());
  std::optional<ptx::Module> m = ptx::parseModule(id, diag);
  if (!m) {
    for (const Diagnostic &d : diag.all()) {
      RewardDiagnostic r;
      r.file = options.fileName;
      r.line = d.line;
      r.column = d.column;
      r.code = "parse.ptx-syntax";
      r.message = d.message;
      fileDiagnostics.push_back(std::move(r));
    }
    return out;
  }
  for (const ptx::Function *f : m->kernels()) {
    if (!options.kernel.empty() && f->name != options.kernel)
      continue;
    KernelReward kr;
    kr.kernel = f->name;
    std::string text;
    for (const ptx::Instruction &in : f->instructions) {
      text += in.fullName();
      for (const ptx::Operand &op : in.operands)
        text += " " + op.text;
      text += ";";
    }
    kr.candidate = fmt::format("{:016x}", llvm::xxHash64(text));
    ptx::KernelSummary s = ptx::condense(*m, *f);
    kr.stages.push_back(stage("parse", StageStatus::Pass, "PTX " + m->version + ", " + m->target));
    kr.stages.push_back(
        stage("types", StageStatus::Skipped, "not applicable: PTX carries no tile types"));
    kr.stages.push_back(stage("dispatch", StageStatus::Skipped,
                              "not applicable: PTX is native instructions already"));
    kr.stages.push_back(resources(s, *f));
    kr.stages.push_back(
        stage("layouts", StageStatus::Skipped, "not applicable: PTX has no layouts"));
    ptx::Lifted lifted = ptx::liftSynchronisation(*m, *f, {});
    // This kernel's queries in a Z3 context of their own (proof/ProofContext.h).
    ProofContextScope context;
    kr.stages.push_back(barriers(lifted, *f, sm));
    kr.stages.push_back(races(lifted, *f, sm));
    kr.stages.push_back(stage("coverage", StageStatus::Skipped,
                              "not applicable: global memory is not modelled on PTX (the grid "
                              "and the tensors are launch arguments)"));
    kr.stages.push_back(
        stage("simulate", StageStatus::Skipped, "not applicable: PTX is not simulated"));
    std::string pipeline = fmt::format(
        "pipeline of the PTX: {} stages, {} mbarriers, {} waits, wgmma {} commits; epilogue: "
        "{}; left out of the score",
        s.pipeline.stages ? std::to_string(*s.pipeline.stages) : std::string("no ring"),
        s.pipeline.mbarrierCount, s.pipeline.waits.size(), s.pipeline.wgmmaCommits,
        s.pipeline.epilogue);
    kr.stages.push_back(stage("performance", StageStatus::Skipped, pipeline));
    out.push_back(std::move(kr));
  }
  if (out.empty()) {
    RewardDiagnostic r;
    r.file = options.fileName;
    r.code = options.kernel.empty() ? "parse.no-kernel" : "options.kernel";
    r.message = options.kernel.empty() ? "the PTX holds no kernel (.entry with a body)"
                                       : "no kernel named '" + options.kernel + "' in the PTX";
    fileDiagnostics.push_back(std::move(r));
  }
  return out;
}

} // namespace tilescope::reward_detail
