// Benchmarks of the foundation: parse + print of the kernel library, and the
// layout engine's apply / inverse / enumeration, reported per element.
#include "ir/Diagnostics.h"
#include "ir/Layout.h"
#include "ir/LayoutPresets.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "kernels/BundledKernels.h"

#include <benchmark/benchmark.h>

using namespace tilescope;

namespace {

void BM_ParsePrintLibrary(benchmark::State &state) {
  int64_t bytes = 0;
  for (const BundledKernelFile &f : bundledKernelFiles())
    bytes += static_cast<int64_t>(f.text.size());
  for (auto _ : state) {
    for (const BundledKernelFile &f : bundledKernelFiles()) {
      llvm::SourceMgr sm;
      Diagnostics diag(sm, false);
      Module m = parseModuleText(f.text, f.name, diag);
      std::string text = print(m);
      benchmark::DoNotOptimize(text.data());
    }
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["kernels/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * bundledKernelFiles().size()),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ParsePrintLibrary);

Layout wgmmaAccumulator() {
  std::string err;
  return *findLayoutPreset("wgmma_acc")->build({64, 256}, &err);
}

Layout swizzledRing() {
  return *Layout::make({{4, 8192, Axis::m}, {128, 64, Axis::m}, {64, 1, Axis::m}}, {}, {},
                       Swizzle::fromMode(128, Dtype::bf16, nullptr), nullptr);
}

Layout replicated() {
  // A 64x64 tile on 4 warps x 32 lanes, replicated over 2 warpgroups.
  return *Layout::make({{4, 1, Axis::warpid}, {16, 2, Axis::laneid}, {64, 1, Axis::m}},
                       {{2, 4, Axis::warpid}, {2, 1, Axis::laneid}}, {}, std::nullopt, nullptr);
}

void runApply(benchmark::State &state, const Layout &l) {
  for (auto _ : state)
    for (int64_t flat = 0; flat < l.size(); ++flat) {
      PhysCoord c = l.base(flat);
      benchmark::DoNotOptimize(c);
    }
  state.SetItemsProcessed(state.iterations() * l.size());
}
void BM_ApplyWgmmaAccumulator(benchmark::State &state) {
  runApply(state, wgmmaAccumulator());
}
void BM_ApplySwizzledRing(benchmark::State &state) {
  runApply(state, swizzledRing());
}
BENCHMARK(BM_ApplyWgmmaAccumulator);
BENCHMARK(BM_ApplySwizzledRing);

void runInverse(benchmark::State &state, const Layout &l) {
  std::vector<PhysCoord> owners;
  for (int64_t flat = 0; flat < l.size(); ++flat)
    owners.push_back(l.base(flat));
  for (auto _ : state)
    for (const PhysCoord &c : owners) {
      auto pre = l.preimages(c, 1);
      benchmark::DoNotOptimize(pre.data());
    }
  state.SetItemsProcessed(state.iterations() * l.size());
}
void BM_InverseWgmmaAccumulator(benchmark::State &state) {
  runInverse(state, wgmmaAccumulator());
}
void BM_InverseSwizzledRing(benchmark::State &state) {
  runInverse(state, swizzledRing());
}
void BM_InverseReplicated(benchmark::State &state) {
  runInverse(state, replicated());
}
BENCHMARK(BM_InverseWgmmaAccumulator);
BENCHMARK(BM_InverseSwizzledRing);
BENCHMARK(BM_InverseReplicated);

// Enumeration: every owner of every element (replicas included).
void BM_EnumerateReplicated(benchmark::State &state) {
  Layout l = replicated();
  for (auto _ : state) {
    int64_t sum = 0;
    for (int64_t flat = 0; flat < l.size(); ++flat)
      l.forEachOwner(flat, [&](const PhysCoord &c) { sum += c.get(Axis::m); });
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * l.size() * l.replicas());
}
BENCHMARK(BM_EnumerateReplicated);

} // namespace

BENCHMARK_MAIN();
