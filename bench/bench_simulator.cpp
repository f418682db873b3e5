// Benchmarks of the simulator on the bundled kernels: the thread-level naive
// GEMM (scalar interpretation, reported as lane operations per second) and the
// Hopper GEMM with every CTA at 256^3 and with 4 sampled CTAs at 1024^3
// (bit-faithful tensor-core numerics, reported per run and per MMA fused sum);
// the *_Races variants run the same with the dynamic race detector on.
#include "ir/Diagnostics.h"
#include "ir/Parser.h"
#include "kernels/BundledKernels.h"
#include "simulator/Engine.h"
#include "simulator/Value.h"

#include <benchmark/benchmark.h>

#include <random>

using namespace tilescope;
using namespace tilescope::sim;

namespace {

struct Loaded {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag{sourceMgr, false};
  Module module;
  std::optional<Program> program;
};

std::unique_ptr<Loaded> load(std::string_view file, ArgValues args) {
  auto l = std::make_unique<Loaded>();
  for (const BundledKernelFile &f : bundledKernelFiles())
    if (f.name == file)
      l->module = parseModuleText(f.text, f.name, l->diag);
  if (l->module.kernels.empty())
    return nullptr;
  l->program = bindProgram(l->module.kernels[0], args, l->diag);
  return l->program ? std::move(l) : nullptr;
}

void randomInputs(std::vector<HostTensor> &tensors) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (HostTensor &t : tensors)
    for (int64_t i = 0; i < t.elements(); ++i)
      t.setBits(i, encodeFloat(t.dtype, dist(rng)));
}

using CtaList = std::vector<std::array<int64_t, 3>>;

void runKernel(benchmark::State &state, std::string_view file, ArgValues args, int64_t ctas,
               bool races = false, CtaList chosenCtas = {}) {
  auto l = load(file, std::move(args));
  if (!l) {
    state.SkipWithError("cannot load the kernel");
    return;
  }
  std::vector<HostTensor> tensors = allocateTensors(*l->program);
  randomInputs(tensors);
  EngineOptions options;
  options.detectRaces = races;
  if (ctas > 0)
    options.ctas = sampleCtas(l->program->grid, ctas, 1);
  if (!chosenCtas.empty())
    options.ctas = std::move(chosenCtas);
  RunStats total;
  for (auto _ : state) {
    RunResult r = runProgram(*l->program, tensors, options);
    if (!r.ok() || !r.races.empty()) {
      state.SkipWithError(r.ok() ? r.races[0].text.c_str() : r.message.c_str());
      return;
    }
    total.laneOps += r.stats.laneOps;
    total.steps += r.stats.steps;
    total.mmaSums += r.stats.mmaSums;
  }
  state.counters["lane_ops/s"] =
      benchmark::Counter(static_cast<double>(total.laneOps), benchmark::Counter::kIsRate);
  state.counters["steps/s"] =
      benchmark::Counter(static_cast<double>(total.steps), benchmark::Counter::kIsRate);
  state.counters["mma_sums/s"] =
      benchmark::Counter(static_cast<double>(total.mmaSums), benchmark::Counter::kIsRate);
}

void BM_GemmNaive_256x256x128(benchmark::State &state) {
  runKernel(state, "gemm_naive.tile", {{{"M", 256}, {"N", 256}, {"K", 128}}, {}}, 0);
}
void BM_GemmSm90_256cubed_AllCtas(benchmark::State &state) {
  runKernel(state, "gemm_bf16_sm90.tile", {{{"M", 256}, {"N", 256}, {"K", 256}}, {}}, 0);
}
void BM_GemmSm90_1024cubed_4Ctas(benchmark::State &state) {
  runKernel(state, "gemm_bf16_sm90.tile", {{{"M", 1024}, {"N", 1024}, {"K", 1024}}, {}}, 4);
}
// The persistent kernel runs 132 CTAs; at 1024^3 CTA t computes tile t of the
// 8 x 4 grid of 128x256 tiles (t < 32) and the rest have none, so the
// sampler's corner CTAs (0 and 131, ...) compute little. These four CTAs
// compute the four corner tiles of C: tiles 0, 3, 28 and 31.
void BM_GemmSm90_1024cubed_4CornerTiles(benchmark::State &state) {
  runKernel(state, "gemm_bf16_sm90.tile", {{{"M", 1024}, {"N", 1024}, {"K", 1024}}, {}}, 0, false,
            {{0, 0, 0}, {3, 0, 0}, {28, 0, 0}, {31, 0, 0}});
}
void BM_GemmNaive_256x256x128_Races(benchmark::State &state) {
  runKernel(state, "gemm_naive.tile", {{{"M", 256}, {"N", 256}, {"K", 128}}, {}}, 0, true);
}
void BM_GemmSm90_256cubed_AllCtas_Races(benchmark::State &state) {
  runKernel(state, "gemm_bf16_sm90.tile", {{{"M", 256}, {"N", 256}, {"K", 256}}, {}}, 0, true);
}
void BM_GemmSm100_256cubed_AllCtas_Races(benchmark::State &state) {
  runKernel(state, "gemm_bf16_sm100.tile", {{{"M", 256}, {"N", 256}, {"K", 256}}, {}}, 0, true);
}
void BM_GemmSm100_256cubed_AllCtas(benchmark::State &state) {
  runKernel(state, "gemm_bf16_sm100.tile", {{{"M", 256}, {"N", 256}, {"K", 256}}, {}}, 0);
}
void BM_RmsNorm_64x4096(benchmark::State &state) {
  runKernel(state, "rmsnorm.tile", {{{"R", 64}, {"H", 4096}}, {{"eps", 1e-5}}}, 0);
}

BENCHMARK(BM_GemmNaive_256x256x128)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GemmSm90_256cubed_AllCtas)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GemmSm90_1024cubed_4Ctas)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GemmSm90_1024cubed_4CornerTiles)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RmsNorm_64x4096)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GemmNaive_256x256x128_Races)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GemmSm90_256cubed_AllCtas_Races)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GemmSm100_256cubed_AllCtas)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GemmSm100_256cubed_AllCtas_Races)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
