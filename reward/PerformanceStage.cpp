// The performance stage of the reward (docs/reward.md, "Performance"): the
// performance model's predicted time (model/Predict.h) at the task's
// performance sizes, held against a cuBLAS-calibrated roofline of the same
// work (model/Baseline.h). A slow kernel is no finding: the stage passes
// with a credit in [0, 1] (the baseline's time over the predicted time,
// capped at 1), is `unknown` when the model cannot predict a kernel it
// covers, and `skipped` (left out of the score) for what the model does not
// cover: tasks whose problem is no GEMM (the model is calibrated on GEMMs
// only, docs/model.md), and tensor-core kernels for targets other than
// sm_90a. A GEMM kernel that issues no tensor-core instruction at all (scalar
// FMA loops) is scored against the most it could do on CUDA cores: the
// machine's FP32 peak (or its DRAM rate, whichever binds) — a bound no such
// kernel beats, so dropping the tensor cores lowers the credit rather than
// leaving the stage out of the score.
#include "ir/Intrinsics.h"
#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "ir/Target.h"
#include "model/Baseline.h"
#include "model/Predict.h"
#include "reward/SimSizes.h"
#include "reward/SizeRelations.h"
#include "reward/Stages.h"
#include "simulator/Problem.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace tilescope::reward_detail {

namespace {

// Traced CTAs at most; the rest are costed as their average (model/Profile.h).
// 16 keeps the trace of a 4096^3 GEMM to a few ms (all 132 CTAs of the
// persistent library GEMM: 40 ms) and predicts the library GEMMs' times as
// tracing every CTA does.
constexpr int64_t kMaxTracedCtas = 16;

// The automatic sizes where the where clause rejects 4096 for some symbol
// (`N % 192 == 0`): each free symbol in turn moved to the value nearest 4096
// (the lower one on a tie) at which every constraint over it and the symbols
// already chosen holds; defined symbols follow their definitions. The caller
// checks the whole clause afterwards, so nothing it rejects is predicted.
void admitAutoSizes(const Kernel &kernel, const std::vector<std::string> &symbols,
                    std::map<std::string, int64_t> &sizes) {
  BarrierSkeleton sk = extractBarrierSkeleton(kernel);
  SizeRelations rel(kernel, sk, symbols);
  std::set<std::string> chosen;
  auto holds = [&](const std::map<std::string, int64_t> &at) {
    for (const Expr &c : kernel.constraints) {
      std::vector<std::string> behind = rel.freeBehind(namesUsed(c));
      if (!std::all_of(behind.begin(), behind.end(),
                       [&](const std::string &n) { return chosen.count(n) > 0; }))
        continue;
      auto v = model::evaluate(kernel, c, at);
      if (!v || !*v)
        return false;
    }
    return true;
  };
  for (const std::string &s : rel.free()) {
    chosen.insert(s);
    for (int64_t d = 0; d < kPerformanceAutoSize; ++d) {
      bool found = false;
      for (int64_t v : {kPerformanceAutoSize - d, kPerformanceAutoSize + d}) {
        SizeAssignment trial = sizes;
        trial[s] = v;
        rel.define(trial);
        if (holds(trial)) {
          sizes = trial;
          found = true;
          break;
        }
      }
      if (found)
        break;
    }
  }
}

StageResult stage(StageStatus status, std::string reason) {
  StageResult r;
  r.name = "performance";
  r.status = status;
  r.reason = std::move(reason);
  return r;
}

std::optional<double> elements(const Kernel &kernel, const Param &p,
                               const std::map<std::string, int64_t> &sizes) {
  double n = 1;
  for (const Expr &e : p.shape) {
    auto v = model::evaluate(kernel, e, sizes);
    if (!v || *v < 0)
      return std::nullopt;
    n *= double(*v);
  }
  return n;
}

const Param *paramNamed(const Kernel &kernel, const std::string &name) {
  for (const Param &p : kernel.params)
    if (p.name == name && p.isTensor)
      return &p;
  return nullptr;
}

bool isGemm(const std::string &problem) {
  sim::ProblemSyntaxError ignored;
  auto spec = sim::parseProblem(problem, &ignored);
  return spec && spec->kind == "gemm" && !spec->inputs.empty() && !spec->outputs.empty();
}

// The flops of the task's GEMM at `sizes` (2 M N K from the shapes of A and
// C): the problem's work, not the kernel's count, so that a kernel that
// computes more than the problem needs does not raise its own baseline.
std::optional<double> problemFlops(const Kernel &kernel, const std::string &problem,
                                   const std::map<std::string, int64_t> &sizes) {
  sim::ProblemSyntaxError ignored;
  auto spec = sim::parseProblem(problem, &ignored);
  if (!spec || !isGemm(problem))
    return std::nullopt;
  const Param *a = paramNamed(kernel, spec->inputs[0].name);
  const Param *c = paramNamed(kernel, spec->outputs[0].name);
  if (!a || !c || c->shape.size() != 2)
    return std::nullopt;
  auto aElems = elements(kernel, *a, sizes), cElems = elements(kernel, *c, sizes);
  auto m = model::evaluate(kernel, c->shape[spec->outputs[0].transposed ? 1 : 0], sizes);
  if (!aElems || !cElems || !m || *m <= 0)
    return std::nullopt;
  return 2 * *cElems * (*aElems / double(*m));
}

// Whether the kernel issues a tensor-core matrix multiply: the gemm tile
// primitive (wgmma, tcgen05.mma or mma.sync, whichever dispatch picks) or one
// of the native instructions.
bool usesTensorCores(const Kernel &kernel) {
  struct Find : IRVisitor {
    bool found = false;
    void visitCallStmt(const CallStmt &c) override {
      IntrinsicId f = idOf(c);
      found |= f == IntrinsicId::Gemm || f == IntrinsicId::GemmAsync ||
               f == IntrinsicId::WgmmaMmaAsync || f == IntrinsicId::Tcgen05Mma;
      IRVisitor::visitCallStmt(c);
    }
  } find;
  find.visit(kernel);
  return find.found;
}

double tensorBytes(const Kernel &kernel, const std::map<std::string, int64_t> &sizes) {
  double bytes = 0;
  for (const Param &param : kernel.params)
    if (param.isTensor)
      if (auto n = elements(kernel, param, sizes))
        bytes += *n * dtypeBits(param.dtype) / 8.0;
  return bytes;
}

// A kernel without tensor cores: credit against the fastest it could be,
// the problem's flops at the machine's FP32 CUDA-core peak or its tensors
// moved once at the datasheet DRAM rate, whichever takes longer.
StageResult cudaCoreBound(const Kernel &kernel, const std::string &problem,
                          const model::Machine &machine,
                          const std::map<std::string, int64_t> &sizes,
                          std::optional<PerformanceEstimate> &estimate) {
  auto flops = problemFlops(kernel, problem, sizes);
  if (!flops)
    return stage(StageStatus::Unknown, "not predicted: the shapes of the task's GEMM operands do "
                                       "not evaluate at " +
                                           describe(sizes));
  if (machine.fp32PeakTflops <= 0 || machine.dramDatasheetTBs <= 0)
    return stage(StageStatus::Unknown,
                 fmt::format("not predicted: the description of {} gives no FP32 peak or "
                             "datasheet DRAM rate for the CUDA-core bound",
                             machine.name));
  std::string error;
  double bytes = tensorBytes(kernel, sizes);
  auto base = model::baselineFor(*flops, bytes, machine, &error);
  if (!base)
    return stage(StageStatus::Unknown, "not predicted: " + error);
  double computeUs = *flops / (machine.fp32PeakTflops * 1e6);
  double memoryUs = bytes / (machine.dramDatasheetTBs * 1e6);
  double boundUs = std::max(computeUs, memoryUs);
  PerformanceEstimate e;
  e.machine = machine.target;
  e.sizes = describe(sizes);
  e.predictedUs = boundUs;
  e.boundBy = computeUs >= memoryUs ? "cuda-core fp32 peak (bound)" : "dram (bound)";
  e.tflops = *flops / (boundUs * 1e6);
  e.rooflineUs = base->rooflineUs;
  e.baselineUs = base->cublasUs;
  e.ratio = boundUs / base->cublasUs;
  StageResult r = stage(StageStatus::Pass, "");
  r.credit = std::min(1.0, base->cublasUs / boundUs);
  r.reason = fmt::format(
      "no tensor-core instruction runs at {}: at best {:.1f} us on {} (the FP32 CUDA-core peak "
      "of {:.0f} TFLOP/s, or the datasheet DRAM rate, whichever binds); cuBLAS-calibrated "
      "roofline {:.1f} us: {:.2f}x its time",
      e.sizes, boundUs, machine.name, machine.fp32PeakTflops, base->cublasUs, e.ratio);
  estimate = std::move(e);
  return r;
}

} // namespace

StageResult performanceStage(const Kernel &kernel, llvm::SourceMgr &sm,
                             const PerformanceRequest &request,
                             std::optional<PerformanceEstimate> &estimate) {
  const TargetInfo &target = targetInfo(kernel.launch.target);
  bool tensorCores = usesTensorCores(kernel);
  // The task decides whether there is a GEMM to time: left out of the score
  // for every candidate alike.
  if (!isGemm(request.problem))
    return stage(StageStatus::Skipped,
                 fmt::format("the performance model covers GEMMs (docs/model.md); the task's "
                             "problem {}; the stage is left out of the score",
                             request.problem.empty() ? "is not given" : "is no gemm"));
  // The candidate decides its target: a tensor-core kernel the model cannot
  // time (sm_100a's tcgen05) still weighs 1 and earns 0, so that moving out
  // of the model's reach never raises a score.
  if (tensorCores && (target.smVersion != 90 || !targetHas(target.kind, TargetFeature::Wgmma))) {
    StageResult r = stage(StageStatus::Skipped,
                          fmt::format("no performance model for {}: the model covers sm_90a "
                                      "(H100, H200); not predicted, so the stage weighs 1 in "
                                      "the score and earns 0",
                                      target.name));
    r.weighsWhenSkipped = true;
    return r;
  }
  std::string error;
  auto machine = model::bundledMachine(request.machine.empty() ? "h100" : request.machine, &error);
  if (!machine)
    return stage(StageStatus::Unknown, "not predicted: " + error);

  std::map<std::string, int64_t> sizes;
  std::vector<std::string> symbols = shapeSymbols(kernel);
  if (request.sizes == "auto") {
    // Every free symbol 4096; one the where clause defines from others
    // (`KB == K / 128`) computed from them.
    for (const std::string &s : symbols)
      sizes[s] = kPerformanceAutoSize;
    defineSymbols(kernel, sizes, true);
    for (const Expr &c : kernel.constraints)
      if (auto v = model::evaluate(kernel, c, sizes); !v || !*v) {
        admitAutoSizes(kernel, symbols, sizes);
        break;
      }
  } else {
    std::string why;
    auto given = parseSimSizes(request.sizes, why);
    if (!given || given->size() != 1)
      return stage(StageStatus::Unknown, "not predicted: the performance sizes '" + request.sizes +
                                             "' are not one set of sizes");
    sizes = given->front().values;
    defineSymbols(kernel, sizes, false);
    for (const std::string &s : symbols)
      if (!sizes.count(s))
        return stage(StageStatus::Unknown,
                     fmt::format("not predicted: the performance sizes give no value of '{}'", s));
  }
  for (const Expr &c : kernel.constraints) {
    auto v = model::evaluate(kernel, c, sizes);
    if (!v || !*v) {
      // The task's sizes are requirements; the automatic ones only a guess.
      bool given = request.sizes != "auto";
      StageResult r = stage(
          given ? StageStatus::Fail : StageStatus::Unknown,
          fmt::format("not predicted: the kernel's where clause {} at {}{}",
                      v ? "rejects the performance sizes" : "does not evaluate", describe(sizes),
                      given ? "" : " (the task's performance sizes choose others)"));
      r.diagnostics.push_back(
          diagnosticAt(sm, c->loc, kernel.name, "performance.sizes-rejected",
                       fmt::format("'{}' {} at {}", print(c), v ? "is false" : "does not evaluate",
                                   describe(sizes)),
                       describe(sizes), given ? "error" : "warning"));
      return r;
    }
  }
  if (!tensorCores)
    return cudaCoreBound(kernel, request.problem, *machine, sizes, estimate);
  auto profile = model::profileKernel(kernel, sizes, kMaxTracedCtas, &error);
  if (!profile)
    return stage(StageStatus::Unknown,
                 "not predicted: the model cannot trace the kernel: " + error);
  model::Prediction p = model::predict(*profile, *machine);
  if (p.flops <= 0) // tensor-core calls that never run at these sizes: CUDA cores do the work
    return cudaCoreBound(kernel, request.problem, *machine, sizes, estimate);
  double bytes = tensorBytes(kernel, sizes);
  auto flops = problemFlops(kernel, request.problem, sizes);
  if (!flops)
    return stage(StageStatus::Unknown, "not predicted: the shapes of the task's GEMM operands do "
                                       "not evaluate at " +
                                           describe(sizes));
  auto base = model::baselineFor(*flops, bytes, *machine, &error);
  if (!base)
    return stage(StageStatus::Unknown, "not predicted: " + error);

  PerformanceEstimate e;
  e.machine = machine->target;
  e.sizes = describe(sizes);
  e.predictedUs = p.us;
  e.boundBy = p.boundBy;
  e.tflops = p.tflops;
  e.rooflineUs = base->rooflineUs;
  e.baselineUs = base->cublasUs;
  e.ratio = p.us / base->cublasUs;
  StageResult r = stage(StageStatus::Pass, "");
  r.credit = std::min(1.0, base->cublasUs / p.us);
  r.reason = fmt::format(
      "predicted {:.1f} us at {} on {} (bound by {}, {:.0f} TFLOP/s); cuBLAS-calibrated "
      "roofline {:.1f} us (roofline {:.1f} us, {}): {:.2f}x its time",
      p.us, e.sizes, machine->name, p.boundBy, p.tflops, base->cublasUs, base->rooflineUs,
      base->computeUs >= base->memoryUs ? "compute-bound" : "memory-bound", e.ratio);
  estimate = std::move(e);
  return r;
}

} // namespace tilescope::reward_detail
