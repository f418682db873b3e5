// The simulate stage: the kernel runs on the simulator at every size of
// SimSizes.h against the reference of the task's problem, on inputs drawn
// fresh from the seed, with budgets. Measures against gaming (docs/reward.md):
// outputs are poisoned (NaN) and every element must be written; the
// reference is computed from a copy of the inputs taken before the run, and
// the inputs must be unchanged after it; float scalars (eps, scale) are
// sampled per size; each size has its own seed.
#include "reward/SimSizes.h"
#include "reward/Stages.h"
#include "simulator/Engine.h"
#include "simulator/Problem.h"
#include "simulator/Reference.h"
#include "simulator/Value.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

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

std::string elementName(const HostTensor &t, int64_t flat) {
  std::vector<int64_t> idx(t.shape.size());
  for (size_t d = t.shape.size(); d-- > 0;) {
    idx[d] = t.shape[d] ? flat % t.shape[d] : 0;
    flat = t.shape[d] ? flat / t.shape[d] : 0;
  }
  std::string s;
  for (int64_t i : idx)
    s += (s.empty() ? "" : ", ") + std::to_string(i);
  return t.name + "[" + s + "]";
}

void poison(HostTensor &t) {
  for (int64_t i = 0; i < t.elements(); ++i)
    t.setBits(i, isFloat(t.dtype) ? encodeFloat(t.dtype, std::nan("")) : encodeInt(t.dtype, -1));
  std::fill(t.written.begin(), t.written.end(), 0);
}

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

  std::string why;
  std::optional<std::vector<SimSize>> sizes =
      req.sizes == "auto" ? chooseSimSizes(kernel, why) : parseSimSizes(req.sizes, why);
  if (!sizes) {
    r.status = req.sizes == "auto" ? StageStatus::Unknown : StageStatus::Fail;
    r.reason = why;
    add(req.sizes == "auto" ? "simulate.no-sizes" : "simulate.sizes-rejected", why);
    return r;
  }

  std::vector<std::string> floatScalars;
  for (const Param &p : kernel.params)
    if (!p.isTensor && isFloat(p.dtype))
      floatScalars.push_back(p.name);

  size_t passed = 0;
  StageStatus worst = StageStatus::Pass;
  for (size_t i = 0; i < sizes->size(); ++i) {
    const SimSize &size = (*sizes)[i];
    auto started = Clock::now();
    uint64_t seed = mix(req.seed, i);
    std::mt19937_64 rng(seed);
    ArgValues args;
    args.ints = size.values;
    std::string described = describe(size.values);
    for (const std::string &name : floatScalars) {
      // Log-uniform in [1e-6, 1e-1]: not only the default.
      double v = std::pow(10.0, -6.0 + 5.0 * std::uniform_real_distribution<double>(0, 1)(rng));
      args.floats[name] = v;
      described += fmt::format(", {} = {:.3g}", name, v);
    }
    SimulatedSize record{described, "all", "", 0};
    SizeOutcome result;
    auto finish = [&](StageStatus status, const std::string &outcome) {
      result.status = status;
      result.outcome = outcome;
    };
    Diagnostics bindDiag(sm, false);
    std::optional<Program> program = bindProgram(kernel, args, bindDiag);
    std::vector<HostTensor> tensors;
    std::optional<BoundProblem> problem;
    if (!program) {
      std::string message = bindDiag.all().empty() ? "the kernel does not bind at these sizes"
                                                   : bindDiag.all().front().message;
      add("simulate.sizes-rejected", fmt::format("at {}: {}", described, message), described);
      finish(StageStatus::Fail, "sizes-rejected");
    } else {
      int64_t tensorBytes = 0;
      for (int b : program->tensorParams)
        if (b >= 0)
          tensorBytes += program->buffers[b].elements * program->buffers[b].elementBytes;
      // Inputs, their copy and the reference: about three times the tensors.
      if (3 * tensorBytes > int64_t(req.maxMemoryMb) << 20) {
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
      auto isIn = [](const std::vector<int> &list, int i) {
        return std::find(list.begin(), list.end(), i) != list.end();
      };
      for (size_t t = 0; t < tensors.size(); ++t) {
        if (isIn(problem->outputs, int(t)))
          poison(tensors[t]);
        else
          fillRandomInput(tensors[t], seed, isIn(problem->scales, int(t)));
      }
      std::vector<HostTensor> before = tensors; // inputs as they were
      EngineOptions options;
      options.seed = seed;
      options.maxSteps = int64_t(std::min<uint64_t>(req.maxSteps, uint64_t{1} << 62));
      options.memoryCapBytes = int64_t(req.maxMemoryMb) << 20;
      options.deadline = started + std::chrono::microseconds(int64_t(req.timeoutMs * 1000));
      options.where = [&](llvm::SMLoc loc) {
        RewardDiagnostic d = diagnosticAt(sm, loc, "", "", "");
        return fmt::format("{}:{}:{}", d.file, d.line, d.column);
      };
      bool allCtas = true;
      if (size.sampleCtas > 0) {
        int64_t total = program->grid[0] * program->grid[1] * program->grid[2];
        allCtas = size.sampleCtas >= total;
        options.ctas = sampleCtas(program->grid, size.sampleCtas, seed);
        record.ctas = fmt::format("{} of {}", std::min(size.sampleCtas, total), total);
      }
      RunResult run = runProgram(*program, tensors, options);
      std::string witnessSeed = fmt::format("{}; seed {}", described, req.seed);
      if (!run.ok()) {
        std::string notes;
        for (const std::string &n : run.notes)
          notes += (notes.empty() ? "" : "; ") + n;
        bool budget = run.outcome == RunResult::Outcome::StepBudget ||
                      run.outcome == RunResult::Outcome::MemoryCap;
        std::string outcome(outcomeName(run.outcome));
        add("simulate." + outcome, fmt::format("at {}: {}", described, run.message),
            notes.empty() ? witnessSeed : notes);
        finish(budget ? StageStatus::Budget : StageStatus::Fail, outcome);
      } else {
        // Inputs must come back unchanged (no parameter is declared in-out).
        for (size_t t = 0; t < tensors.size() && result.status == StageStatus::Pass; ++t) {
          if (isIn(problem->outputs, int(t)) || tensors[t].bytes == before[t].bytes)
            continue;
          int64_t first = 0;
          for (int64_t e = 0; e < tensors[t].elements(); ++e)
            if (tensors[t].bitsAt(e) != before[t].bitsAt(e)) {
              first = e;
              break;
            }
          add("simulate.input-modified",
              fmt::format("at {} the kernel wrote its input '{}' (first at {}); inputs must be "
                          "left unchanged",
                          described, tensors[t].name, elementName(tensors[t], first)),
              witnessSeed);
          finish(StageStatus::Fail, "input-modified");
        }
        if (result.status == StageStatus::Pass) {
          // The reference reads the inputs as they were before the run.
          for (size_t t = 0; t < tensors.size(); ++t)
            if (!isIn(problem->outputs, int(t)))
              tensors[t] = before[t];
          for (const OutputReport &o : compareWithReference(*problem, tensors, allCtas)) {
            const HostTensor *out = nullptr;
            for (const HostTensor &t : tensors)
              if (t.name == o.name)
                out = &t;
            if (o.unwritten > 0 && allCtas) {
              add("simulate.unwritten",
                  fmt::format("at {}: {} of {} elements of '{}' were never written (first {})",
                              described, o.unwritten, o.elements, o.name,
                              out && !o.firstUnwritten.empty()
                                  ? elementName(*out, o.firstUnwritten.front())
                                  : "?"),
                  witnessSeed);
              finish(StageStatus::Fail, "unwritten");
            } else if (o.mismatches > 0) {
              std::string first;
              for (const Mismatch &m : o.first)
                if (m.written) {
                  first = fmt::format("{} = {} where the reference gives {}",
                                      out ? elementName(*out, m.index) : o.name, m.got, m.expected);
                  break;
                }
              add("simulate.mismatch",
                  fmt::format("at {}: {} of {} compared elements of '{}' differ from the "
                              "reference (max abs error {:.3g}); first: {}",
                              described, o.mismatches, o.compared, o.name, o.maxAbsError, first),
                  witnessSeed);
              finish(StageStatus::Fail, "mismatch");
            }
          }
        }
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
  r.status = worst;
  r.credit = sizes->empty() ? 0 : double(passed) / double(sizes->size());
  r.reason = fmt::format("{} of {} size{} matched the reference of {}", passed, sizes->size(),
                         sizes->size() == 1 ? "" : "s", spec->text);
  return r;
}

} // namespace tilescope::reward_detail
