// The reward's performance stage (docs/reward.md, "Performance"): the model's
// prediction against the cuBLAS-calibrated roofline, its place in the score,
// and what it never does (turn an undecided kernel into a pass).
#include "ir/Instantiate.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "kernels/BundledKernels.h"
#include "model/Baseline.h"
#include "model/Predict.h"
#include "reward/Reward.h"

#include <doctest/doctest.h>

#include <llvm/Support/JSON.h>

using namespace tilescope;

namespace {

const StageResult &stage(const KernelReward &k, const std::string &name) {
  for (const StageResult &s : k.stages)
    if (s.name == name)
      return s;
  FAIL("no stage " << name);
  return k.stages.front();
}

// A point of kernels/gemm_bf16_sm90_family.tile as a kernel of its own.
Kernel familyPoint(const std::string &point) {
  llvm::SourceMgr sm;
  Diagnostics diag(sm, false);
  Module m =
      parseModuleText(std::string(bundledKernelText("gemm_bf16_sm90_family.tile")), "f.tile", diag);
  REQUIRE_FALSE(diag.hasErrors());
  auto p = parsePoint(m.kernels[0], point, diag);
  REQUIRE(p);
  Instance inst = instantiate(m.kernels[0], *p);
  REQUIRE_MESSAGE(inst.kernel, inst.reason);
  return *inst.kernel;
}

double modelUs(const Kernel &k, const std::map<std::string, int64_t> &sizes) {
  std::string error;
  auto machine = model::bundledMachine("h100", &error);
  REQUIRE(machine);
  auto profile = model::profileKernel(k, sizes, 16, &error);
  REQUIRE_MESSAGE(profile, error);
  return model::predict(*profile, *machine).us;
}

RewardOptions staticGemm() {
  RewardOptions o;
  o.problem = "gemm(A, B^T -> C)";
  o.staticOnly = true;
  o.seed = 1;
  return o;
}

} // namespace

TEST_CASE("performance: 2 and 4 stages of a GEMM rank as the model ranks them") {
  // 64x64 tiles, one consumer, persistent, 2048^3: the 2-stage ring is bound by
  // load latency (docs/model.md), the 4-stage one is not.
  const std::string base = "BM=64,BN=64,CONSUMERS=1,ORDER=row,PERSISTENT=true,SPLIT=1,STAGES=";
  const std::map<std::string, int64_t> sizes = {{"M", 2048}, {"N", 2048}, {"K", 2048}};
  RewardOptions o = staticGemm();
  o.performanceSizes = "M=2048,N=2048,K=2048";
  double modelTime[2], rewardTime[2], credit[2];
  for (int i = 0; i < 2; ++i) {
    Kernel k = familyPoint(base + (i == 0 ? "2" : "4"));
    modelTime[i] = modelUs(k, sizes);
    RewardResult r = reward(print(k), o);
    REQUIRE(r.kernels.size() == 1);
    const KernelReward &kr = r.kernels[0];
    const StageResult &perf = stage(kr, "performance");
    REQUIRE_MESSAGE(perf.status == StageStatus::Pass, perf.reason);
    REQUIRE(kr.performance);
    CHECK(kr.performance->machine == "h100");
    CHECK(kr.performance->sizes == "K = 2048, M = 2048, N = 2048");
    // The baseline of 2 * 2048^3 flops, as model/Baseline.h computes it.
    std::string why;
    auto machine = model::bundledMachine("h100", &why);
    auto b = model::baselineFor(2.0 * 2048 * 2048 * 2048, 3 * 2.0 * 2048 * 2048, *machine, &why);
    REQUIRE(b);
    CHECK(kr.performance->baselineUs == doctest::Approx(b->cublasUs));
    CHECK(kr.performance->ratio == doctest::Approx(kr.performance->predictedUs / b->cublasUs));
    rewardTime[i] = kr.performance->predictedUs;
    credit[i] = perf.credit;
    CHECK(perf.credit == doctest::Approx(std::min(1.0, b->cublasUs / rewardTime[i])));
    CHECK(rewardTime[i] == doctest::Approx(modelTime[i]));
  }
  CHECK(modelTime[0] != doctest::Approx(modelTime[1])); // the two variants differ
  CHECK((rewardTime[0] < rewardTime[1]) == (modelTime[0] < modelTime[1]));
  CHECK((credit[0] < credit[1]) == (modelTime[0] > modelTime[1]));
  CHECK(modelTime[1] < modelTime[0]); // more stages are faster while latency-bound
}

TEST_CASE("performance: an unknown verdict still scores as not passed") {
  // Static only: simulate is unknown (not checked). The performance stage runs
  // and earns its credit, but the kernel's verdict stays unknown (exit 3) and
  // its score below a pass.
  RewardResult r = reward(std::string(bundledKernelText("gemm_bf16_sm90.tile")), staticGemm());
  REQUIRE(r.kernels.size() == 1);
  const KernelReward &k = r.kernels[0];
  const StageResult &perf = stage(k, "performance");
  REQUIRE_MESSAGE(perf.status == StageStatus::Pass, perf.reason);
  CHECK(perf.credit > 0);
  CHECK(stage(k, "simulate").status == StageStatus::Unknown);
  CHECK(stage(k, "simulate").credit == 0);
  CHECK(k.verdict == "unknown");
  CHECK(r.exitCode == 3);
  // 8 static stages and the performance credit of 12: simulate's 3 are lost.
  CHECK(k.score == doctest::Approx((8 + perf.credit) / 12));
  CHECK(k.score < 0.75);
}

TEST_CASE("performance: the JSON carries the prediction; a kernel the model does not cover "
          "earns nothing for it, a task that is no GEMM leaves it out") {
  RewardResult r = reward(std::string(bundledKernelText("gemm_bf16_sm90.tile")), staticGemm());
  auto v = llvm::json::parse(rewardJson(r));
  REQUIRE(bool(v));
  const llvm::json::Object *p =
      (*v->getAsObject()->getArray("kernels"))[0].getAsObject()->getObject("performance");
  REQUIRE(p);
  CHECK(p->getNumber("predicted_us").getValueOr(0) > 0);
  CHECK(p->getNumber("baseline_us").getValueOr(0) > 0);

  // sm_100a (tcgen05): no model; the stage is skipped but never counts as a
  // pass: it weighs 1 and earns 0, so the score is 8 of 12 (simulate is
  // unknown here), below the sm_90a kernel's 8 + credit of 12.
  RewardResult b = reward(std::string(bundledKernelText("gemm_bf16_sm100.tile")), staticGemm());
  REQUIRE(b.kernels.size() == 1);
  const StageResult &skipped = stage(b.kernels[0], "performance");
  CHECK(skipped.status == StageStatus::Skipped);
  CHECK(skipped.credit == 0);
  CHECK(skipped.reason.find("weighs 1") != std::string::npos);
  CHECK_FALSE(b.kernels[0].performance);
  CHECK(b.kernels[0].verdict == "unknown"); // simulate not checked; the skip changes no verdict
  CHECK(b.kernels[0].score == doctest::Approx(8.0 / 12));
  CHECK(b.kernels[0].score < r.kernels[0].score);
  // With no problem the same kernel's stage is left out: 8 of 11.
  RewardOptions noProblem = staticGemm();
  noProblem.problem = "";
  RewardResult bn = reward(std::string(bundledKernelText("gemm_bf16_sm100.tile")), noProblem);
  REQUIRE(bn.kernels.size() == 1);
  CHECK(stage(bn.kernels[0], "performance").status == StageStatus::Skipped);
  CHECK(bn.kernels[0].score == doctest::Approx(8.0 / 11));
  // A task without a problem (or not a GEMM): skipped, so the score is 8 of 11.
  RewardOptions none = staticGemm();
  none.problem = "";
  RewardResult n = reward(std::string(bundledKernelText("gemm_bf16_sm90.tile")), none);
  REQUIRE(n.kernels.size() == 1);
  CHECK(stage(n.kernels[0], "performance").status == StageStatus::Skipped);
  CHECK(n.kernels[0].score == doctest::Approx(8.0 / 11));
}

TEST_CASE("performance: sizes the task gives and the kernel rejects fail the stage") {
  RewardOptions o = staticGemm();
  o.performanceSizes = "M=4096,N=4100,K=4096"; // the library GEMM needs N % 8 == 0
  RewardResult r = reward(std::string(bundledKernelText("gemm_bf16_sm90.tile")), o);
  REQUIRE(r.kernels.size() == 1);
  const StageResult &perf = stage(r.kernels[0], "performance");
  CHECK(perf.status == StageStatus::Fail);
  REQUIRE_FALSE(perf.diagnostics.empty());
  CHECK(perf.diagnostics[0].code == "performance.sizes-rejected");
  CHECK(perf.diagnostics[0].line > 0);

  o.performanceSizes = "M=4096;M=8";
  CHECK(reward(std::string(bundledKernelText("gemm_bf16_sm90.tile")), o).exitCode == 2);
  o.performanceSizes = "auto";
  o.machine = "h10";
  RewardResult bad = reward(std::string(bundledKernelText("gemm_bf16_sm90.tile")), o);
  CHECK(bad.exitCode == 2);
  REQUIRE_FALSE(bad.diagnostics.empty());
  CHECK(bad.diagnostics[0].code == "options.machine");
  CHECK(bad.diagnostics[0].message.find("did you mean 'h100'") != std::string::npos);
}

// A scalar GEMM (C = A B^T, bf16, one output element per thread) with a
// wgmma that never runs (K > 0): a tensor-core instruction in name only.
const char *const kDeadWgmma = R"(
kernel gemm_dead_wgmma(A: global bf16[M, K], B: global bf16[N, K], C: global bf16[M, N])
  where M % 128 == 0, N % 2 == 0, K > 0
  launch grid(N / 2, M / 128) threads(256) target(sm_90a)
{
  shared As: bf16[64, 64] layout(swizzle(128B, bf16, S[(64, 64):(64, 1)]))
  shared Bs: bf16[64, 64] layout(swizzle(128B, bf16, S[(64, 64):(64, 1)]))
  reg a: bf16[1]
  reg b: bf16[1]
  reg af: f32[1]
  reg bf: f32[1]
  reg acc: f32[1]
  reg out: bf16[1]
  let i = blockIdx.y * 128 + threadIdx.x % 128
  let j = blockIdx.x * 2 + threadIdx.x / 128
  if K < 0 {
    reg c: f32[64, 64] layout(wgmma_acc(64, 64))
    wg.gemm(c, As, Bs)
  }
  acc[0] = 0.0
  for k in 0 .. K {
    a[0] = A[i, k]
    b[0] = B[j, k]
    cast(af, a)
    cast(bf, b)
    acc[0] = acc[0] + af[0] * bf[0]
  }
  cast(out, acc)
  C[i, j] = out[0]
}
)";

TEST_CASE("performance: a GEMM without tensor cores is scored against the CUDA-core peak, "
          "below a tensor-core GEMM") {
  // The scalar library GEMM (sm_80, one FMA loop per thread) for a GEMM task:
  // the model does not trace it, but dropping the tensor cores must cost
  // credit, not take the stage out of the score.
  RewardOptions o = staticGemm();
  o.problem = "gemm(A, B -> C)";
  RewardResult scalar = reward(std::string(bundledKernelText("gemm_naive.tile")), o);
  REQUIRE(scalar.kernels.size() == 1);
  const StageResult &perf = stage(scalar.kernels[0], "performance");
  REQUIRE_MESSAGE(perf.status == StageStatus::Pass, perf.reason);
  REQUIRE(scalar.kernels[0].performance);
  const PerformanceEstimate &e = *scalar.kernels[0].performance;
  // 2 * 4096^3 flops at the H100's 67 TFLOP/s of FP32: 2051 us at best.
  CHECK(e.predictedUs == doctest::Approx(2.0 * 4096.0 * 4096.0 * 4096.0 / 67e6));
  CHECK(e.boundBy.find("cuda-core") != std::string::npos);
  CHECK(perf.credit == doctest::Approx(e.baselineUs / e.predictedUs));
  CHECK(perf.credit < 0.1);
  // 8 static stages, simulate unknown (static only), the bound's credit: 12 in all.
  CHECK(scalar.kernels[0].score == doctest::Approx((8 + perf.credit) / 12));

  // The tensor-core GEMM of the same problem earns more.
  RewardResult tc = reward(std::string(bundledKernelText("gemm_bf16_sm90.tile")), staticGemm());
  REQUIRE(tc.kernels.size() == 1);
  CHECK(stage(tc.kernels[0], "performance").credit > 2 * perf.credit);
  CHECK(tc.kernels[0].score > scalar.kernels[0].score);

  // A tensor-core call that never runs buys neither the model's credit nor a
  // skip: the trace sees no tensor-core work, so the CUDA-core bound applies.
  RewardResult d = reward(kDeadWgmma, staticGemm());
  REQUIRE(d.kernels.size() == 1);
  const StageResult &dp = stage(d.kernels[0], "performance");
  REQUIRE_MESSAGE(dp.status == StageStatus::Pass, dp.reason);
  CHECK(dp.reason.find("no tensor-core instruction") != std::string::npos);
  CHECK(dp.credit < 0.1);
}
