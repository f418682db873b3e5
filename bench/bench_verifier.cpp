// Google Benchmark for the layout verifier: every layout of the Hopper GEMM
// (the budget: under 100 ms in total on one core), and one 4-stage
// 128B-swizzled ring under each engine.
#include "ir/Parser.h"
#include "kernels/BundledKernels.h"
#include "verifier/KernelLayouts.h"

#include <benchmark/benchmark.h>

using namespace tilescope;

namespace {
void gemmKernelLayouts(benchmark::State &state, ProofEngine engine) {
  llvm::SourceMgr sm;
  Diagnostics diag(sm, false);
  Module module = parseModuleText(bundledKernelText("gemm_bf16_sm90.tile"), "gemm.tile", diag);
  if (module.kernels.empty()) {
    state.SkipWithError("gemm_bf16_sm90.tile did not parse");
    return;
  }
  VerifyOptions options;
  options.engine = engine;
  for (auto _ : state) {
    KernelLayoutInput in = collectKernelLayouts(module.kernels[0]);
    KernelLayoutReport r =
        verifyKernelLayouts(in.buffers, in.uses, targetInfo(in.target), in.launch, options);
    if (!r.clean())
      state.SkipWithError("the kernel has findings");
    benchmark::DoNotOptimize(r);
  }
}

void ring(benchmark::State &state, ProofEngine engine) {
  auto sw = Swizzle::fromMode(128, Dtype::bf16, nullptr);
  Layout l = *Layout::make({{4, 8192, Axis::m}, {128, 64, Axis::m}, {64, 1, Axis::m}}, {}, {}, sw,
                           nullptr);
  BufferInfo b;
  b.scope = MemScope::Shared;
  b.dtype = Dtype::bf16;
  VerifyOptions options;
  options.engine = engine;
  for (auto _ : state) {
    LayoutReport r =
        verifyLayout(l, {4, 128, 64}, b, targetInfo(TargetKind::sm_90a), {384}, options);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations() * l.size());
}
} // namespace

BENCHMARK_CAPTURE(gemmKernelLayouts, auto, ProofEngine::Auto) -> Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(gemmKernelLayouts, z3, ProofEngine::Z3)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(gemmKernelLayouts, enumerate, ProofEngine::Enumerate)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(ring, z3, ProofEngine::Z3)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(ring, enumerate, ProofEngine::Enumerate)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
