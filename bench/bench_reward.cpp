// Google Benchmark for the reward (reward/Reward.h), in process, the way an
// agent harness calls it:
//  - staticReward: the static stages (parse, types, dispatch, resources,
//    layouts, barriers, races, and the performance model's stage, which the
//    task's gemm problem turns on) of kernels/gemm_bf16_sm90.tile, each iteration
//    on a distinct candidate (a mutant whose epilogue comment and one unused
//    `let` differ, so nothing is answered from a cache) — issue 14's target:
//    >= 20 candidates/s on one core;
//  - fullReward/<kernel>: every stage with the simulation at the default sizes
//    (docs/reward.md, "Sizes") for each library GEMM — target >= 4/s/core;
//  - cachedReward: a duplicate of an already rewarded candidate (static
//    stages from the in-memory cache, the simulation run again).
// items_per_second is candidates per CPU-second of the calling thread (the
// reward is single-threaded), which a loaded machine does not distort the way
// it does wall time. The batch target (1,000 mutants
// on 2 cores) is measured by bench/reward_batch.py.
#include "kernels/BundledKernels.h"
#include "reward/Reward.h"
#include "reward/RewardCache.h"

#include <benchmark/benchmark.h>

#include <string>

using namespace tilescope;

namespace {

const char *kProblem = "gemm(A, B^T -> C)";
const char *kFp8Problem = "gemm(A, B^T -> C, alpha = scale)";
const char *kBlockScaledProblem =
    "gemm(A, B^T -> C, scale_a = SA^T, scale_b = SB, block = 128, block_n = 128)";

// A distinct but equivalent candidate for iteration `i`.
std::string mutant(std::string_view text, int64_t i) {
  std::string s(text);
  size_t brace = s.find("{\n");
  return s.substr(0, brace + 2) + "  let unused" + std::to_string(i) + " = " + std::to_string(i) +
         "\n" + s.substr(brace + 2);
}

bool passed(const RewardResult &r, bool simulated) {
  for (const KernelReward &k : r.kernels)
    for (const StageResult &s : k.stages) {
      if (s.name == "performance" || (!simulated && s.name == "simulate"))
        continue;
      if (s.status != StageStatus::Pass)
        return false;
    }
  return !r.kernels.empty();
}

void staticReward(benchmark::State &state) {
  std::string_view gemm = bundledKernelText("gemm_bf16_sm90.tile");
  RewardOptions options;
  options.problem = kProblem;
  options.staticOnly = true;
  options.seed = 1;
  int64_t i = 0;
  for (auto _ : state) {
    RewardResult r = reward(mutant(gemm, i++), options);
    if (!passed(r, false)) {
      state.SkipWithError("a static stage of gemm_bf16_sm90 did not pass");
      return;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(staticReward)->Unit(benchmark::kMillisecond);

void fullReward(benchmark::State &state, const char *file, const char *problem) {
  std::string_view text = bundledKernelText(file);
  RewardOptions options;
  options.problem = problem;
  int64_t i = 0;
  for (auto _ : state) {
    options.seed = uint64_t(++i);
    RewardResult r = reward(mutant(text, i), options);
    if (!passed(r, true)) {
      state.SkipWithError("a stage did not pass");
      return;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(fullReward, gemm_naive, "gemm_naive.tile", "gemm(A, B -> C)")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(fullReward, gemm_bf16_sm90, "gemm_bf16_sm90.tile", kProblem)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(fullReward, gemm_bf16_sm90_small, "gemm_bf16_sm90_small.tile", kProblem)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(fullReward, gemm_bf16_sm90_64x128, "gemm_bf16_sm90_64x128.tile", kProblem)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(fullReward, gemm_bf16_sm100, "gemm_bf16_sm100.tile", kProblem)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(fullReward, gemm_bf16_sm90_grouped, "gemm_bf16_sm90_grouped.tile", kProblem)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(fullReward, gemm_fp8_sm90, "gemm_fp8_sm90.tile", kFp8Problem)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(fullReward, gemm_fp8_sm90_grouped, "gemm_fp8_sm90_grouped.tile", kFp8Problem)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(fullReward, gemm_fp8_blockscaled_sm90, "gemm_fp8_blockscaled_sm90.tile",
                  kBlockScaledProblem)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(fullReward, gemm_fp8_blockscaled_sm90_bn192,
                  "gemm_fp8_blockscaled_sm90_bn192.tile", kBlockScaledProblem)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(fullReward, gemm_fp8_blockscaled_sm90_grouped,
                  "gemm_fp8_blockscaled_sm90_grouped.tile", kBlockScaledProblem)
    ->Unit(benchmark::kMillisecond);

void cachedReward(benchmark::State &state) {
  std::string_view gemm = bundledKernelText("gemm_naive.tile");
  RewardCache cache;
  RewardOptions options;
  options.problem = "gemm(A, B -> C)";
  options.cache = &cache;
  reward(std::string(gemm), options);
  for (auto _ : state) {
    RewardResult r = reward(std::string(gemm), options);
    if (!passed(r, true) || !r.kernels[0].stages[1].cached) {
      state.SkipWithError("the duplicate was not answered from the cache");
      return;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(cachedReward)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
