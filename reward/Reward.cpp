// The reward driver: parses the candidate (kernel by kernel when the file as
// a whole does not parse), runs the stages of each kernel in order, and
// scores them (docs/reward.md).
#include "reward/Reward.h"

#include "ir/Budget.h"
#include "ir/Checker.h"
#include "ir/Dtype.h"
#include "ir/DtypeNames.h"
#include "ir/Instantiate.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/SemanticHash.h"
#include "ir/Suggest.h"
#include "model/Machine.h"
#include "reward/RewardCache.h"
#include "reward/SimSizes.h"
#include "reward/SourceAnchors.h"
#include "reward/Stages.h"
#include "simulator/Problem.h"
#include "simulator/Reference.h"
#include "proof/ProofContext.h"

#include <llvm/Support/xxhash.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <random>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tilescope {

const char *stageStatusName(StageStatus s) {
  switch (s) {
  case StageStatus::Pass:
    return "pass";
  case StageStatus::Fail:
    return "fail";
  case StageStatus::Unknown:
    return "unknown";
  case StageStatus::Budget:
    return "budget";
  case StageStatus::Skipped:
    return "skipped";
  }
  return "skipped";
}

const std::vector<std::string> &rewardStageNames() {
  static const std::vector<std::string> names = {"parse",    "types",      "dispatch", "resources",
                                                 "layouts",  "barriers",   "races",    "coverage",
                                                 "simulate", "performance"};
  return names;
}

namespace {
using Clock = std::chrono::steady_clock;
using namespace tilescope::reward_detail;

// A time limit given as a double (the command's and the module's options) in
// whole milliseconds, 0 (none) when not positive. Converting 1e30 or NaN to
// int64_t is undefined (UBSan, `reward --static-timeout-ms 1e30`); limits past
// 10^12 ms (31 years) count as that.
int64_t wholeMs(double ms) {
  return ms > 0 ? int64_t(std::min(ms, 1e12)) : 0;
}

void scoreKernel(KernelReward &kr);
int exitCodeOf(const std::string &verdict);
int verdictRank(const std::string &v);

double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Weights of the score (docs/reward.md); performance counts for a GEMM task
// (a performance stage skipped because the task is no GEMM is left out; one
// skipped because the kernel's tensor cores are out of the model's reach
// weighs 1 and earns 0, so that leaving the model's reach never pays).
double weightOf(const StageResult &stage) {
  if (stage.name == "simulate")
    return 3;
  if (stage.name == "performance")
    return stage.status == StageStatus::Skipped && !stage.weighsWhenSkipped ? 0 : 1;
  return 1;
}

// Where each kernel of a file starts: a line whose first word is `kernel`.
struct KernelSpan {
  size_t begin = 0, end = 0;
};
std::vector<KernelSpan> kernelSpans(const std::string &text) {
  std::vector<KernelSpan> spans;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t first = text.find_first_not_of(" \t", pos);
    if (first != std::string::npos && text.compare(first, 7, "kernel ") == 0) {
      if (!spans.empty())
        spans.back().end = first;
      spans.push_back({first, text.size()});
    }
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos)
      break;
    pos = nl + 1;
  }
  return spans;
}

// The byte offset of 1-based `line` and `column` in `text`.
size_t offsetOf(const std::string &text, unsigned line, unsigned column) {
  size_t offset = 0;
  for (unsigned l = 1; l < line && offset < text.size(); ++l) {
    size_t nl = text.find('\n', offset);
    if (nl == std::string::npos)
      return text.size();
    offset = nl + 1;
  }
  return std::min(text.size(), offset + (column ? column - 1 : 0));
}

// `text` with everything outside `span` blanked (newlines kept, so lines and
// columns stay those of the file).
std::string masked(const std::string &text, const KernelSpan &span) {
  std::string out = text;
  for (size_t i = 0; i < out.size(); ++i)
    if ((i < span.begin || i >= span.end) && out[i] != '\n')
      out[i] = ' ';
  return out;
}

// A short hint an agent can act on, by the code of the first failure.
std::string adviceFor(const std::string &code) {
  static const std::vector<std::pair<const char *, const char *>> advice = {
      {"parse.", "fix the syntax there (docs/ir.md has the grammar)"},
      {"types.unknown-call", "call a known intrinsic or tile primitive (docs/ir.md lists them)"},
      {"types.undefined-name", "define the name before this use, or fix its spelling"},
      {"types.redefined", "give one of the two definitions another name"},
      {"types.point", "the task's point must be one of the kernel's space: a value of every "
                      "parameter's domain that the where clause admits (tilescope space lists "
                      "them)"},
      {"types.", "make the operands' dtypes, shapes and scopes agree with the call"},
      {"dispatch.", "change the operand layouts or the execution scope so that an "
                    "implementation accepts the call (the message lists why each refused)"},
      {"resources.", "use fewer threads or less shared memory (smaller tiles or fewer stages)"},
      {"layouts.undecided", "simplify the layout so that it can be proved legal"},
      {"layouts.", "change the layout so that distinct elements get distinct slots within the "
                   "axes' extents (the witness shows two elements that collide)"},
      {"barriers.not-proved", "use ring indices of the form (i + c) % S so the protocol can be "
                              "proved"},
      {"barriers.", "fix the mbarrier protocol: arrivals per phase must equal the count and "
                    "waits must track the phase (the witness gives the iteration)"},
      {"races.", "order the two accesses with a barrier, an mbarrier handshake or a fence"},
      {"coverage.write-coverage", "make the grid and the tile loop reach every output tile, "
                                  "edge tiles included (the witness gives the sizes and the "
                                  "element nobody writes)"},
      {"coverage.out-of-bounds", "keep every box inside its tensor: guard the edge tiles or fix "
                                 "the grid (the witness gives the sizes, CTA and element)"},
      {"coverage.not-proved", "write the output through regions whose start is a multiple of "
                              "the CTA or loop index, so that the coverage can be proved"},
      {"simulate.no-problem", "the task must name the problem (--problem or --task)"},
      {"simulate.unwritten", "write every element of the output, including edge tiles"},
      {"simulate.input-modified", "do not write the inputs; use a scratch buffer"},
      {"simulate.mismatch", "the values differ from the reference at the size and element "
                            "given; check indexing at edge tiles and the accumulation"},
      {"simulate.deadlock", "a wait never completes at these sizes: check the barrier counts "
                            "and parities"},
      {"simulate.step-budget", "the kernel ran out of its step or time budget: check loop "
                               "bounds and waits"},
      {"simulate.time-budget", "the kernel ran out of its time budget: check loop bounds and "
                               "waits"},
      {"simulate.", "see the message"},
  };
  for (const auto &[prefix, text] : advice)
    if (code.rfind(prefix, 0) == 0)
      return text;
  return "see the diagnostics";
}

// The stage an agent should fix first: the first that failed, else the first
// out of budget, else the first undecided.
std::optional<FirstFailure> firstFailureOf(const std::vector<StageResult> &stages) {
  const StageResult *chosen = nullptr;
  for (StageStatus wanted : {StageStatus::Fail, StageStatus::Budget, StageStatus::Unknown}) {
    for (const StageResult &s : stages)
      if (s.status == wanted) {
        chosen = &s;
        break;
      }
    if (chosen)
      break;
  }
  if (!chosen)
    return std::nullopt;
  const StageResult &s = *chosen;
  FirstFailure f;
  f.stage = s.name;
  const RewardDiagnostic *d = nullptr;
  for (const RewardDiagnostic &x : s.diagnostics)
    if (x.severity == "error") {
      d = &x;
      break;
    }
  if (!d && !s.diagnostics.empty())
    d = &s.diagnostics.front();
  std::string what = d ? d->message : s.reason;
  f.code = d ? d->code : s.name + "." + stageStatusName(s.status);
  if (d) {
    f.file = d->file;
    f.line = d->line;
    f.column = d->column;
  }
  std::string where = f.line ? fmt::format(" at {}:{}:{}", f.file, f.line, f.column) : "";
  f.hint = fmt::format("{} {}{}: {} -- {}", s.name, stageStatusName(s.status), where, what,
                       adviceFor(f.code));
  return f;
}

std::string hex(uint64_t h) {
  return fmt::format("{:016x}", h);
}

struct ParsedKernel {
  std::optional<Kernel> kernel;
  std::string name;
  StageResult parse;
  std::string point;                // the point `kernel` is the instance of
  std::optional<StageResult> types; // types, failed before the stage ran: no such point
};

// A kernel with parameters is scored at the task's point (options.point):
// `pk.kernel` becomes its instance, whose canonical text and hash are the
// point's. A family that does not check, or without a point, is left to the
// types stage (which says so); a point that is not in the space (an unknown
// parameter, a value outside its domain, a `where` constraint false there)
// fails types at the candidate's declaration.
void choosePoint(ParsedKernel &pk, llvm::SourceMgr &sm, const RewardOptions &options) {
  if (!pk.kernel || pk.kernel->space.empty() || options.point.empty())
    return;
  Diagnostics diag(sm, false);
  Module family;
  family.kernels.push_back(*pk.kernel);
  if (checkModule(family, diag) > 0 || diag.hasErrors())
    return;
  if (std::optional<Point> p = parsePoint(*pk.kernel, options.point, diag)) {
    Instance inst = instantiate(*pk.kernel, *p);
    if (inst.kernel) {
      pk.kernel = std::move(*inst.kernel);
      pk.point = pointText(*p);
      return;
    }
    diag.error(inst.loc, fmt::format("point {} of kernel '{}' {}", pointText(*p), pk.name,
                                     whyNotInstantiated(inst)));
  }
  StageResult types;
  types.name = "types";
  types.status = StageStatus::Fail;
  types.diagnostics = convertDiagnostics(diag, 0, pk.name, "types");
  pk.types = std::move(types);
}

KernelReward rewardKernel(ParsedKernel &pk, llvm::SourceMgr &sm, const RewardOptions &options,
                          uint64_t seed) {
  KernelReward kr;
  kr.kernel = pk.name;
  kr.point = pk.point;
  kr.stages.push_back(pk.parse);
  std::string blockedBy;
  auto blocked = [&](const StageResult &s) {
    if (blockedBy.empty() && (s.status == StageStatus::Fail || s.status == StageStatus::Budget))
      blockedBy = s.name;
  };
  blocked(pk.parse);
  auto skipped = [&](const std::string &name) {
    StageResult s;
    s.name = name;
    s.status = StageStatus::Skipped;
    s.reason = fmt::format("skipped: stage '{}' did not pass", blockedBy);
    return s;
  };
  std::string key;
  SourceAnchors anchors;
  if (pk.kernel) {
    Kernel normal = semanticNormalForm(*pk.kernel);
    kr.candidate = hex(llvm::xxHash64(print(normal)));
    if (options.cache)
      anchors = sourceAnchors(normal, sm);
    key = fmt::format("v1|{}|{}|{}", kr.candidate, options.problem, options.sizes);
    if (!options.point.empty()) // a point outside the space fails types by its text
      key += "|set:" + options.point;
    if (options.ptxas)
      key += "|ptxas";
    for (const auto &[output, t] : options.tolerances) // simulate's verdict depends on them
      key += fmt::format("|{}:{}:{}", output, t.rtol, t.atol);
    for (const auto &[param, dtype] : options.dtypes) // and on these
      key += fmt::format("|{}={}", param, dtype);
  }
  using StageFn = StageResult (*)(const Kernel &, llvm::SourceMgr &);
  static const std::pair<const char *, StageFn> kStatic[] = {
      {"types", typesStage},      {"dispatch", dispatchStage}, {"resources", resourcesStage},
      {"layouts", layoutsStage},  {"barriers", barriersStage}, {"races", racesStage},
      {"coverage", coverageStage}};
  // A cached entry is used at this candidate's lines and columns, or not at all.
  auto fromCache = [&](const std::string &k) -> std::optional<std::vector<StageResult>> {
    std::optional<RewardCache::Entry> e = options.cache->find(k);
    if (e && moveToCandidate(e->stages, e->anchors, anchors, options.fileName, pk.name))
      return std::move(e->stages);
    return std::nullopt;
  };
  std::optional<std::vector<StageResult>> cached;
  if (pk.kernel && blockedBy.empty() && options.cache)
    cached = fromCache(key);
  if (cached && cached->size() == std::size(kStatic)) {
    for (StageResult &s : *cached) {
      s.cached = true;
      kr.stages.push_back(s);
      blocked(s);
    }
  } else {
    std::vector<StageResult> fresh;
    // The static stages share one time budget (ir/Budget.h, processor time: Z3's
    // queries and the exhaustive barrier check obey it); the stage it runs
    // out in is `budget`, and the stages after it are skipped.
    Budget budget(BudgetLimits{wholeMs(options.staticTimeoutMs), 0, 0});
    std::optional<ActiveBudget> active;
    if (options.staticTimeoutMs > 0)
      active.emplace(budget);
    // This candidate's queries in a Z3 context of their own: its reward must
    // not depend on the candidates before it (proof/ProofContext.h).
    ProofContextScope context;
    for (const auto &[name, run] : kStatic) {
      if (!blockedBy.empty()) {
        fresh.push_back(skipped(name));
        continue;
      }
      auto started = Clock::now();
      StageResult s = pk.types && std::string_view(name) == "types" ? *pk.types : run(*pk.kernel, sm);
      if (options.ptxas && s.name == "resources" && s.status == StageStatus::Pass)
        addPtxasReport(*pk.kernel, sm, s);
      s.ms = msSince(started);
      if (active && (budget.expired() || budget.exceeded() != BudgetKind::None) &&
          s.status != StageStatus::Fail) {
        s.status = StageStatus::Budget;
        s.reason = fmt::format("the static stages' CPU time of {} ms (--static-timeout-ms) "
                               "ran out in this stage",
                               budget.limits().timeoutMs);
      }
      blocked(s);
      fresh.push_back(std::move(s));
    }
    bool outOfBudget = budget.exceeded() != BudgetKind::None;
    if (pk.kernel && options.cache && !fresh.empty() && !outOfBudget &&
        fresh.front().status != StageStatus::Skipped)
      options.cache->store(key, {fresh, anchors});
    for (StageResult &s : fresh)
      kr.stages.push_back(std::move(s));
  }
  // simulate
  if (!blockedBy.empty()) {
    kr.stages.push_back(skipped("simulate"));
  } else if (options.staticOnly) {
    StageResult s;
    s.name = "simulate";
    s.status = StageStatus::Unknown;
    s.reason = "not run: static stages only were asked for (--static)";
    kr.stages.push_back(std::move(s));
  } else {
    std::optional<std::vector<StageResult>> cachedSim;
    if (options.cacheDynamic && options.cache)
      cachedSim = fromCache(key + "|simulate");
    if (cachedSim && cachedSim->size() == 1) {
      cachedSim->front().cached = true;
      kr.stages.push_back(cachedSim->front());
    } else {
      SimulateRequest req{options.problem,   options.sizes,    seed,
                          options.timeoutMs, options.maxSteps, options.maxMemoryMb,
                          options.tolerances, options.dtypes};
      auto started = Clock::now();
      StageResult s = simulateStage(*pk.kernel, sm, req, kr.simulated);
      s.ms = msSince(started);
      if (options.cache)
        options.cache->store(key + "|simulate", {{s}, anchors});
      kr.stages.push_back(std::move(s));
    }
    blocked(kr.stages.back());
  }
  if (pk.kernel && blockedBy.empty()) {
    auto started = Clock::now();
    PerformanceRequest req{options.problem, options.performanceSizes, options.machine};
    StageResult s = performanceStage(*pk.kernel, sm, req, kr.performance);
    s.ms = msSince(started);
    kr.stages.push_back(std::move(s));
  } else {
    kr.stages.push_back(skipped("performance"));
  }

  scoreKernel(kr);
  return kr;
}

// The credits, score, verdict and first failure of a kernel's stages.
void scoreKernel(KernelReward &kr) {
  double total = 0, earned = 0;
  bool failed = false, budget = false, unknown = false;
  for (StageResult &s : kr.stages) {
    // simulate and performance earn a share of their credit when they pass.
    bool partial = s.name == "simulate" || s.name == "performance";
    if (!partial)
      s.credit = s.status == StageStatus::Pass ? 1 : 0;
    else if (s.status == StageStatus::Unknown || s.status == StageStatus::Skipped)
      s.credit = 0;
    double w = weightOf(s);
    total += w;
    earned += w * s.credit;
    failed |= s.status == StageStatus::Fail;
    budget |= s.status == StageStatus::Budget;
    unknown |= s.status == StageStatus::Unknown;
  }
  std::string verdict = failed ? "fail" : budget ? "budget" : unknown ? "unknown" : "pass";
  if (kr.stages.size() > 1 &&
      (kr.stages[0].status == StageStatus::Fail || kr.stages[1].status == StageStatus::Fail))
    verdict = "error";
  kr.verdict = verdict;
  kr.score = total > 0 ? earned / total : 0;
  kr.firstFailure = firstFailureOf(kr.stages);
}

int exitCodeOf(const std::string &verdict) {
  if (verdict == "pass")
    return 0;
  if (verdict == "fail")
    return 1;
  if (verdict == "error")
    return 2;
  if (verdict == "unknown")
    return 3;
  return 4; // budget
}

// Severity order of verdicts for a file: error > fail > budget > unknown > pass.
int verdictRank(const std::string &v) {
  return v == "error" ? 4 : v == "fail" ? 3 : v == "budget" ? 2 : v == "unknown" ? 1 : 0;
}

uint64_t drawSeed() {
  std::random_device device;
  uint64_t s = (uint64_t(device()) << 32 | device()) & ((uint64_t{1} << 53) - 1);
  return s ? s : 1;
}

// Once per process: freed memory stays with the process instead of going
// back to the system between candidates. With glibc's defaults every
// candidate's Z3 contexts (four or five, tables of about a megabyte each)
// and its simulated tensors were returned when freed (the heap's top
// trimmed, large blocks unmapped) and faulted in page by page again by the
// next: 10-12 % of a full reward's CPU time in the kernel's page-fault path
// (perf, 2026-11-26, docs/reward.md). Blocks up to 32 MiB (glibc's largest
// mmap threshold) now come from the heap, which is trimmed only past
// 512 MiB free at its top. What a process holds at its peak does not change;
// what it keeps after a peak does (a harness that must give memory back
// calls malloc_trim(0)). Nothing a stage decides depends on it.
void keepFreedMemory() {
#if defined(__GLIBC__)
  static const bool kept = [] {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    return true;
  }();
  (void)kept;
#endif
}

} // namespace

RewardResult reward(const std::string &source, const RewardOptions &options) {
  keepFreedMemory();
  auto started = Clock::now();
  RewardResult res;
  res.file = options.fileName;
  res.problem = options.problem;
  res.seed = options.seed ? *options.seed : drawSeed();
  auto fileError = [&](const std::string &code, const std::string &message, unsigned line = 0,
                       unsigned column = 0) {
    RewardDiagnostic d;
    d.file = options.fileName;
    d.line = line;
    d.column = column;
    d.code = code;
    d.message = message;
    res.diagnostics.push_back(std::move(d));
  };
  auto finishError = [&]() {
    res.verdict = "error";
    res.exitCode = 2;
    res.ms = msSince(started);
    return res;
  };
  // A CUDA candidate is rewarded as the PTX nvcc makes of it; its diagnostics
  // name that PTX (FILE.cu.ptx) and its lines.
  std::optional<std::string> compiled;
  RewardOptions ptxOptions = options;
  if (isCudaSource(options.fileName)) {
    std::string why;
    unsigned line = 0;
    compiled = cudaToPtx(source, why, line);
    if (!compiled) {
      fileError("parse.cuda-compile", why, line, line ? 1 : 0);
      return finishError();
    }
    ptxOptions.fileName = options.fileName + ".ptx";
  }
  if (compiled || isPtxSource(source, options.fileName)) { // reward/PtxReward.cpp
    std::vector<KernelReward> kernels =
        ptxKernelRewards(compiled ? *compiled : source, ptxOptions, res.diagnostics);
    if (kernels.empty() && res.diagnostics.empty())
      fileError("parse.no-kernel", "the file holds no kernel");
    if (kernels.empty())
      return finishError();
    std::string fileHash;
    res.verdict = "pass";
    double scores = 0;
    for (KernelReward &kr : kernels) {
      scoreKernel(kr);
      fileHash += kr.candidate;
      scores += kr.score;
      if (verdictRank(kr.verdict) > verdictRank(res.verdict))
        res.verdict = kr.verdict;
      res.kernels.push_back(std::move(kr));
    }
    res.candidate = hex(llvm::xxHash64(fileHash));
    res.score = scores / double(res.kernels.size());
    res.exitCode = exitCodeOf(res.verdict);
    res.ms = msSince(started);
    return res;
  }
  if (!options.problem.empty()) {
    sim::ProblemSyntaxError syntax;
    if (!sim::parseProblem(options.problem, &syntax)) {
      fileError("options.problem", fmt::format("the task's problem '{}' does not parse at "
                                               "offset {}: {}",
                                               options.problem, syntax.offset, syntax.message));
      return finishError();
    }
    // An unknown kind is the task's error too, not each candidate's
    // (simulate.problem-mismatch, exit 1, failed every candidate before).
    if (auto spec = sim::parseProblem(options.problem, &syntax))
      if (std::string why = sim::unknownProblemKind(spec->kind); !why.empty()) {
        fileError("options.problem",
                  fmt::format("the task's problem '{}': {}", options.problem, why));
        return finishError();
      }
  }

  for (const auto &[output, t] : options.tolerances) {
    bool known = output == "*";
    sim::ProblemSyntaxError ignored; // the problem itself was checked above
    if (auto spec = sim::parseProblem(options.problem, &ignored))
      for (const sim::ProblemOperand &o : spec->outputs)
        known |= o.name == output;
    if (!known || !(t.rtol >= 0) || !(t.atol >= 0) || !std::isfinite(t.rtol) ||
        !std::isfinite(t.atol)) {
      fileError("options.tolerances",
                fmt::format("tolerance for '{}' (rtol {}, atol {}): {}", output, t.rtol, t.atol,
                            known ? "rtol and atol must be finite and at least 0"
                                  : "no output of the task's problem has that name (\"*\" "
                                    "means every output)"));
      return finishError();
    }
  }

  for (const auto &[param, dtype] : options.dtypes)
    if (!dtypeFromName(dtype)) {
      fileError("options.dtypes",
                fmt::format("the task's type '{}' for '{}' is no element type (f32, bf16, "
                            "f16, f8e4m3, ...){}",
                            dtype, param, didYouMean(dtype, dtypeNames())));
      return finishError();
    }

  if (options.sizes != "auto") {
    std::string why;
    if (!parseSimSizes(options.sizes, why)) {
      fileError("options.sizes", why);
      return finishError();
    }
  }

  if (options.performanceSizes != "auto") {
    std::string why;
    auto given = parseSimSizes(options.performanceSizes, why);
    if (!given || given->size() != 1) {
      fileError("options.performance-sizes",
                given ? "the performance sizes are one set of sizes (M=..,N=..,K=..)" : why);
      return finishError();
    }
  }
  if (!options.machine.empty()) {
    std::string why;
    if (!model::bundledMachine(options.machine, &why)) {
      std::vector<std::string> targets = model::bundledMachineTargets();
      std::vector<std::string_view> names(targets.begin(), targets.end());
      fileError("options.machine", why + didYouMean(options.machine, names));
      return finishError();
    }
  }

  llvm::SourceMgr sm;
  std::vector<ParsedKernel> parsed;
  {
    Diagnostics diag(sm, false);
    auto t = Clock::now();
    Module m = parseModuleText(source, options.fileName, diag);
    double ms = msSince(t);
    if (!diag.hasErrors()) {
      for (Kernel &k : m.kernels) {
        ParsedKernel pk;
        pk.name = k.name;
        pk.kernel = std::move(k);
        pk.parse.name = "parse";
        pk.parse.status = StageStatus::Pass;
        pk.parse.ms = ms / double(m.kernels.size());
        parsed.push_back(std::move(pk));
      }
    } else {
      // Kernel by kernel, so that a typo in one does not hide the others.
      std::vector<KernelSpan> spans = kernelSpans(source);
      for (const Diagnostic &d : diag.all()) {
        size_t offset = offsetOf(source, d.line, d.column);
        bool inKernel = false;
        for (const KernelSpan &span : spans)
          inKernel |= d.line > 0 && offset >= span.begin && offset < span.end;
        if (!inKernel && d.kind == Diagnostic::Error)
          fileError(codeOfMessage("parse", d.message), d.message, d.line, d.column);
      }
      for (const KernelSpan &span : spans) {
        auto t2 = Clock::now();
        Diagnostics one(sm, false);
        Module km = parseModuleText(masked(source, span), options.fileName, one);
        ParsedKernel pk;
        size_t nameStart = source.find_first_not_of(" \t", span.begin + 6);
        size_t nameEnd = source.find_first_of(" \t\n(", nameStart);
        pk.name =
            nameStart == std::string::npos
                ? std::string("?")
                : source.substr(nameStart, nameEnd == std::string::npos ? std::string::npos
                                                                        : nameEnd - nameStart);
        pk.parse.name = "parse";
        pk.parse.ms = msSince(t2);
        if (!one.hasErrors() && km.kernels.size() == 1) {
          pk.kernel = std::move(km.kernels.front());
          pk.parse.status = StageStatus::Pass;
        } else {
          pk.parse.status = StageStatus::Fail;
          pk.parse.diagnostics = convertDiagnostics(one, 0, pk.name, "parse");
        }
        parsed.push_back(std::move(pk));
      }
      if (spans.empty() && res.diagnostics.empty())
        for (const Diagnostic &d : diag.all())
          fileError(codeOfMessage("parse", d.message), d.message, d.line, d.column);
    }
  }
  if (!options.kernel.empty()) {
    std::vector<ParsedKernel> chosen;
    std::vector<std::string_view> names;
    for (ParsedKernel &pk : parsed) {
      names.push_back(pk.name);
      if (pk.name == options.kernel)
        chosen.push_back(std::move(pk));
    }
    if (chosen.empty()) {
      fileError("options.kernel", fmt::format("no kernel named '{}' in {}{}", options.kernel,
                                              options.fileName, didYouMean(options.kernel, names)));
      return finishError();
    }
    parsed = std::move(chosen);
  }
  if (parsed.empty()) {
    if (res.diagnostics.empty())
      fileError("parse.no-kernel", "the file holds no kernel");
    return finishError();
  }

  std::string fileHash;
  res.verdict = "pass";
  double scores = 0;
  for (ParsedKernel &pk : parsed) {
    choosePoint(pk, sm, options);
    KernelReward kr = rewardKernel(pk, sm, options, res.seed);
    fileHash += kr.candidate.empty() ? "-" : kr.candidate;
    scores += kr.score;
    if (verdictRank(kr.verdict) > verdictRank(res.verdict))
      res.verdict = kr.verdict;
    res.kernels.push_back(std::move(kr));
  }
  if (!res.diagnostics.empty())
    res.verdict = "error";
  res.candidate = hex(llvm::xxHash64(fileHash));
  res.score = scores / double(res.kernels.size());
  res.exitCode = exitCodeOf(res.verdict);
  res.ms = msSince(started);
  return res;
}

} // namespace tilescope
