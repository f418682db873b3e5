// The simulate stage: the kernel runs on the simulator at every size of
// SimSizes.h against the reference of the task's problem, on inputs drawn
// fresh from the seed, with budgets. The checking itself is the simulator's
// checked simulation (simulator/Simulate.h: poisoned outputs and on-chip
// memory, the input copy the reference reads, unchanged inputs, unwritten
// elements also within sampled CTAs' tiles, uninitialised reads of shared
// and tensor memory); this stage adds the sizes, a seed per size, the
// budgets, and turns the findings into outcomes and diagnostic codes
// (docs/reward.md).
#include "simulator/Simulate.h"
#include "reward/SimSizes.h"
#include "reward/SizeRelations.h"
#include "reward/ThresholdSizes.h"
#include "reward/Stages.h"
#include "simulator/Engine.h"
#include "simulator/Problem.h"
#include "simulator/Reference.h"
#include "simulator/Value.h"
#include "ir/Suggest.h"

#include <llvm/ADT/StringExtras.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace tilescope::reward_detail {
namespace {
using namespace tilescope::sim;
using Clock = std::chrono::steady_clock;

uint64_t mix(uint64_t seed, uint64_t i) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return z == 0 ? 1 : z;
}

// The outcome word and the code's name of a finding of simulateChecked.
std::string outcomeWord(const std::string &kind) {
  if (kind == "unwritten output")
    return "unwritten";
  if (kind == "input modified")
    return "input-modified";
  if (kind == "uninitialized read")
    return "uninitialized-read";
  return kind; // "mismatch", and the engine's outcome names ("deadlock", ...)
}

// The poison pattern of size `i` of an evaluation (docs/reward.md): NaN at
// the first size, random bytes at the second, and at any later one a huge
// value of either sign, drawn from the evaluation's seed — so every
// evaluation with two sizes or more runs under NaN and under values a
// `max`, a `min` or a comparison does not drop.
PoisonPattern poisonOfSize(size_t i, uint64_t seed) {
  if (i == 0)
    return PoisonPattern::Nan;
  if (i == 1)
    return PoisonPattern::Random;
  return mix(seed, 1000 + i) % 2 ? PoisonPattern::Big : PoisonPattern::NegBig;
}

// Whether size `i` of an evaluation runs on widened inputs: every size but
// the first (whose eps is drawn from the top of its range, visible against
// a mean square of about 1/3 only while the rows are not scaled up). Until
// session 25 the second size alone: a kernel wrong for large inputs only
// in a tile that only the persistent or a threshold size runs passed. A
// threshold size that pins a float scalar runs at the edge size's values
// (reward/ThresholdSizes.cpp) with its zeros and rows at 2^-24 too: an eps
// floored at 3e-6 showed only in rows of small values (`eps-floor`).
bool wideInputs(size_t i) { return i >= 1; }

// What one size gave.
struct SizeOutcome {
  StageStatus status = StageStatus::Pass;
  std::string outcome = "match";
};

} // namespace

StageResult simulateStage(const Kernel &kernel, llvm::SourceMgr &sm, const SimulateRequest &req,
                          std::vector<SimulatedSize> &ran) {
  StageResult r;
  r.name = "simulate";
  auto add = [&](const std::string &code, const std::string &message,
                 const std::string &witness = "", llvm::SMLoc loc = {}) {
    r.diagnostics.push_back(
        diagnosticAt(sm, loc.isValid() ? loc : kernel.loc, kernel.name, code, message, witness));
  };
  if (req.problem.empty()) {
    r.status = StageStatus::Unknown;
    r.reason = "the task names no problem (--problem or --task), so there is no reference; a "
               "candidate's own `// problem:` line is not trusted";
    r.diagnostics.push_back(
        diagnosticAt(sm, kernel.loc, kernel.name, "simulate.no-problem", r.reason, "", "warning"));
    return r;
  }
  ProblemSyntaxError syntax;
  std::optional<ProblemSpec> spec = parseProblem(req.problem, &syntax);
  if (!spec) { // the driver checks the problem first; kept for direct callers
    r.status = StageStatus::Unknown;
    r.reason = "the task's problem does not parse: " + syntax.message;
    return r;
  }

  // The task's element types (RewardOptions::dtypes): a reference of the
  // candidate's own cheaper types is no answer to the task (hack
  // `cheaper-dtypes`).
  for (const auto &[name, want] : req.dtypes) {
    auto p = std::find_if(kernel.params.begin(), kernel.params.end(),
                          [&](const Param &q) { return q.name == name; });
    std::string got = p == kernel.params.end() ? "" : std::string(dtypeName(p->dtype));
    if (got == want)
      continue;
    r.status = StageStatus::Fail;
    r.reason = p == kernel.params.end()
                   ? fmt::format("the task wants a parameter '{}' of type {}; the kernel has none",
                                 name, want)
                   : fmt::format("the task wants '{}' as {}; the kernel declares it {}", name, want,
                                 got);
    add("simulate.problem-mismatch", r.reason, "", p == kernel.params.end() ? llvm::SMLoc{} : p->loc);
    return r;
  }

  std::string why;
  std::optional<std::vector<SimSize>> sizes =
      req.sizes == "auto" ? chooseSimSizes(kernel, why) : parseSimSizes(req.sizes, why);
  if (sizes && req.sizes != "auto")
    for (SimSize &size : *sizes) // KB of `KB == K / 128` need not be given
      defineSymbols(kernel, size.values, false);
  if (!sizes) {
    r.status = req.sizes == "auto" ? StageStatus::Unknown : StageStatus::Fail;
    r.reason = why;
    add(req.sizes == "auto" ? "simulate.no-sizes" : "simulate.sizes-rejected", why);
    return r;
  }
  // Sizes on the other side of every decision over sizes and CTA indices
  // that the sampled sizes take one way only (ThresholdSizes.h).
  ThresholdPlan thresholds;
  if (req.sizes == "auto") {
    thresholds = thresholdSizes(
        kernel, *sizes,
        [&](llvm::SMLoc loc) {
          RewardDiagnostic d = diagnosticAt(sm, loc, "", "", "");
          return fmt::format("{}:{}:{}", d.file, d.line, d.column);
        },
        signedScalars(*spec));
    sizes->insert(sizes->end(), thresholds.sizes.begin(), thresholds.sizes.end());
  }

  // A gemm's alpha takes either sign (Reference.h signedScalars): positive at
  // the first size, negative at the second (a kernel that took |alpha|
  // passed, hack `abs-alpha`).
  std::set<std::string> signedNames = signedScalars(*spec);
  size_t firstThreshold = sizes->size() - thresholds.sizes.size();
  size_t passed = 0;
  StageStatus worst = StageStatus::Pass;
  for (size_t i = 0; i < sizes->size(); ++i) {
    const SimSize &size = (*sizes)[i];
    auto started = Clock::now();
    uint64_t seed = mix(req.seed, i);
    ArgValues args;
    args.ints = size.values;
    if (i >= firstThreshold) // a float scalar a threshold size pins
      args.floats = thresholds.floats[i - firstThreshold];
    // Float scalars (eps, scale): not only the default, and both ends of
    // their range — the first size draws from the top fifth, the second from
    // the bottom fifth, later ones from all of it (hack `ignores-eps`, which
    // dropped eps and passed about a third of the seeds while every size
    // drew from the whole range).
    sampleScalars(kernel, args, seed,
                  i == 0   ? sim::ScalarStratum::Top
                  : i == 1 ? sim::ScalarStratum::Bottom
                           : sim::ScalarStratum::Whole,
                  signedNames);
    std::string described = describe(size.values);
    for (const auto &[name, v] : args.floats)
      described += fmt::format(", {} = {:.3g}", name, v);
    PoisonPattern poison = poisonOfSize(i, req.seed);
    const bool pinsFloat = i >= firstThreshold && !thresholds.floats[i - firstThreshold].empty();
    const bool wide = wideInputs(i);
    SimulatedSize record{described, "all", "", 0, std::string(poisonName(poison)), size.role,
                         i >= firstThreshold ? thresholds.reasons[i - firstThreshold] : ""};
    SizeOutcome result;
    auto finish = [&](StageStatus status, const std::string &outcome) {
      result.status = status;
      result.outcome = outcome;
    };
    Diagnostics bindDiag(sm, false);
    std::optional<Program> program = bindProgram(kernel, args, bindDiag);
    std::vector<HostTensor> tensors;
    std::optional<BoundProblem> problem;
    // Capped (as tools/Budgets.cpp caps --max-memory-mb): `--memory-mb
    // 18446744073709551615` wrapped to a negative cap that every run was over.
    int64_t memoryCapBytes = int64_t(std::min<uint64_t>(req.maxMemoryMb, uint64_t{1} << 40) << 20);
    if (!program) {
      std::string message = bindDiag.all().empty() ? "the kernel does not bind at these sizes"
                                                   : bindDiag.all().front().message;
      // Sizes under names the kernel does not have (a task's `Q` for the
      // kernel's `N`): say so, with the kernel's symbols.
      std::vector<std::string> symbols = shapeSymbols(kernel);
      std::vector<std::string_view> known(symbols.begin(), symbols.end());
      for (const auto &[name, v] : size.values)
        if (std::find(symbols.begin(), symbols.end(), name) == symbols.end() &&
            std::none_of(kernel.params.begin(), kernel.params.end(),
                         [&, &name = name](const Param &p) { return p.name == name; }))
          message += fmt::format("; the sizes give '{}', which is no shape symbol of kernel '{}' "
                                 "(its symbols: {}){}",
                                 name, kernel.name, llvm::join(symbols, ", "),
                                 didYouMean(name, known));
      add("simulate.sizes-rejected", fmt::format("at {}: {}", described, message), described);
      finish(StageStatus::Fail, "sizes-rejected");
    } else {
      int64_t tensorBytes = 0;
      for (int b : program->tensorParams)
        if (b >= 0)
          tensorBytes += program->buffers[b].elements * program->buffers[b].elementBytes;
      // Inputs, their copy and the reference: about three times the tensors.
      if (3 * tensorBytes > memoryCapBytes) {
        add("simulate.memory-budget",
            fmt::format("at {} the kernel's tensors take {} bytes; with their copies that is over "
                        "the memory budget of {} MiB",
                        described, tensorBytes, req.maxMemoryMb),
            described);
        finish(StageStatus::Budget, "memory-budget");
      } else {
        tensors = allocateTensors(*program);
        ProblemError bad;
        problem = bindProblem(*spec, *program, tensors, &bad);
        if (!problem) {
          add("simulate.problem-mismatch",
              fmt::format("the task's problem '{}' does not fit the kernel: {}", spec->text,
                          bad.message));
          finish(StageStatus::Fail, "problem-mismatch");
          sizes->resize(i + 1); // the same at every size: said once
        }
      }
    }
    if (program && problem) {
      // Every size's inputs but the first's are widened (wideInputs; rows
      // scaled by 2^-6 .. 2^6, exact zeros; simulator/Reference.h
      // widenInput): a kernel that clamps
      // an input to [-1, 1], special-cases zero, or overflows on large rows
      // or underflows on small ones passed while every input lay in [-1, 1]
      // and none was zero (session 24's red team).
      // Since session 25 some rows of f32 and bf16 inputs go further: past
      // the literals the kernel compares its data with (a clamp at 100.0
      // passed), and 1 row in 16 at 2^-24 (outputs below 2^-10 were rare:
      // `tiny-output-flush` passed at some seeds).
      WideTargets targets = wide ? wideTargets(kernel, args) : WideTargets{};
      targets.edgeRows = i == 1 || pinsFloat; // zeros and rows at 2^-24
      prepareTensors(tensors, &*problem, seed, poison, wide, targets);
      SimulateOptions options;
      options.seed = seed;
      options.poison = poison;
      for (const auto &[output, t] : req.tolerances)
        options.tolerances[output] = {t.rtol, t.atol};
      options.maxSteps = int64_t(std::min<uint64_t>(req.maxSteps, uint64_t{1} << 62));
      options.memoryCapBytes = memoryCapBytes;
      // `--timeout-ms 1e30` overflowed the conversion to integer microseconds
      // (UBSan); past 10^12 ms (31 years) the deadline would pass the steady
      // clock's range.
      double timeoutMs = req.timeoutMs > 0 ? std::min(req.timeoutMs, 1e12) : 0.0;
      options.deadline = started + std::chrono::microseconds(int64_t(timeoutMs * 1000));
      options.where = [&](llvm::SMLoc loc) {
        RewardDiagnostic d = diagnosticAt(sm, loc, "", "", "");
        return fmt::format("{}:{}:{}", d.file, d.line, d.column);
      };
      if (size.sampleCtas > 0) {
        int64_t total = program->grid[0] * program->grid[1] * program->grid[2];
        if (size.sampleCtas < total)
          options.ctas =
              size.ctas.empty() ? sampleCtas(program->grid, size.sampleCtas, seed) : size.ctas;
        record.ctas = fmt::format("{} of {}", std::min(size.sampleCtas, total), total);
      }
      SimulationResult sim = simulateChecked(*program, &*problem, tensors, options);
      size_t said = r.diagnostics.size();
      std::string witnessSeed =
          fmt::format("{}; seed {}; poison {}{}", described, req.seed, poisonName(poison),
                      !wide ? "" : i == 1 || pinsFloat ? "; inputs wide" : "; inputs wide, later");
      // Uninitialised reads first, at the reading statement; the engine's
      // reads and simulateChecked's findings of that kind are in one order.
      const std::vector<UninitializedRead> &reads = sim.run.stats.uninitializedReads;
      size_t nextRead = 0;
      for (const SimFinding &f : sim.findings) {
        if (f.kind != "uninitialized read")
          continue;
        llvm::SMLoc loc;
        if (nextRead < reads.size())
          loc = llvm::SMLoc::getFromPointer(static_cast<const char *>(reads[nextRead++].key));
        add("simulate.uninitialized-read", fmt::format("at {}: {}", described, f.message),
            witnessSeed, loc);
      }
      if (!sim.run.ok()) {
        std::string notes;
        for (const std::string &n : sim.run.notes)
          notes += (notes.empty() ? "" : "; ") + n;
        add("simulate." + std::string(outcomeName(sim.run.outcome)),
            fmt::format("at {}: {}", described, sim.run.message),
            notes.empty() ? witnessSeed : notes);
      }
      for (const SimFinding &f : sim.findings)
        if (f.kind == "input modified" || f.kind == "unwritten output" || f.kind == "mismatch")
          add("simulate." + outcomeWord(f.kind), fmt::format("at {}: {}", described, f.message),
              witnessSeed);
      switch (sim.verdict) {
      case SimVerdict::Proved:
        finish(StageStatus::Pass, "match");
        break;
      case SimVerdict::Finding:
        finish(StageStatus::Fail, outcomeWord(sim.result));
        if (r.diagnostics.size() == said) // e.g. mismatches only where nothing was written
          add("simulate." + result.outcome,
              fmt::format("at {}: the run does not match the reference ({})", described,
                          sim.result),
              witnessSeed);
        break;
      case SimVerdict::Budget:
        finish(StageStatus::Budget, outcomeWord(sim.result));
        break;
      case SimVerdict::Unknown: // not with a problem; never a pass
        add("simulate.unknown", fmt::format("at {}: {}", described, sim.reason), witnessSeed);
        finish(StageStatus::Unknown, "unknown");
        break;
      }
    }
    record.outcome = result.outcome;
    record.ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    ran.push_back(record);
    if (result.status == StageStatus::Pass)
      ++passed;
    else if (worst != StageStatus::Fail)
      worst = result.status;
  }
  // A decision's outcome no size reaches leaves the stage unknown: the
  // values past it were never compared.
  for (const std::string &missed : thresholds.unreached)
    r.diagnostics.push_back(diagnosticAt(
        sm, kernel.loc, kernel.name, "simulate.threshold-unreached",
        "no simulated size takes " + missed + "; the values there are not checked", "",
        "warning"));
  if (worst == StageStatus::Pass && !thresholds.unreached.empty())
    worst = StageStatus::Unknown;
  r.status = worst;
  r.credit = sizes->empty() ? 0 : double(passed) / double(sizes->size());
  r.reason = fmt::format("{} of {} size{} matched the reference of {}", passed, sizes->size(),
                         sizes->size() == 1 ? "" : "s", spec->text);
  for (const auto &[output, t] : req.tolerances)
    r.reason +=
        fmt::format("; task tolerance for {}: rtol {:g}, atol {:g}", output, t.rtol, t.atol);
  return r;
}

} // namespace tilescope::reward_detail
