// Google Benchmark for the whole `tilescope check` pipeline on the bundled
// Hopper GEMM: parse, type and well-formedness checks, layout proofs, barrier
// protocol proofs, static races and write coverage, in the order CmdCheck runs them (the
// barrier issue's budget: under 200 ms on one core). Each stage is also timed
// alone, so a regression points at its component. `exhaustiveFallback` times
// what a kernel whose proofs fail to decide pays on top: the skeleton of the
// same GEMM unrolled at the fallback's sizes (K = 512, M = 128, N = 256) and
// every interleaving explored (check never runs it on this GEMM: its proofs
// decide).
#include "ir/Checker.h"
#include "ir/Parser.h"
#include "kernels/BundledKernels.h"
#include "racecheck/StaticRaces.h"
#include "verifier/BarrierExplorer.h"
#include "verifier/BarrierProofs.h"
#include "verifier/ConcreteSkeleton.h"
#include "verifier/KernelLayouts.h"
#include "verifier/WriteCoverage.h"

#include <benchmark/benchmark.h>

using namespace tilescope;

namespace {
constexpr std::string_view kGemm = "gemm_bf16_sm90.tile";

// Parses and checks the GEMM; false (and the state skipped) when it does not.
bool parsedGemm(benchmark::State &state, Diagnostics &diag, Module &module) {
  module = parseModuleText(bundledKernelText(kGemm), "gemm.tile", diag);
  if (module.kernels.empty() || checkModule(module, diag) != 0) {
    state.SkipWithError("gemm_bf16_sm90.tile does not parse and check");
    return false;
  }
  return true;
}

unsigned coverage(const Kernel &k, Diagnostics &d) {
  return reportWriteCoverage(proveWriteCoverage(k), d);
}

void wholeCheck(benchmark::State &state) {
  for (auto _ : state) {
    llvm::SourceMgr sm;
    Diagnostics diag(sm, false);
    Module module;
    if (!parsedGemm(state, diag, module))
      return;
    unsigned findings = 0;
    for (const Kernel &k : module.kernels)
      findings += checkKernelLayouts(k, diag) + verifyBarrierProtocols(k, diag) +
                  verifyStaticRaces(k, diag) + coverage(k, diag);
    if (findings != 0) {
      state.SkipWithError("the GEMM has findings");
      return;
    }
  }
}

// One proof stage alone on the parsed kernel.
template <unsigned (*Stage)(const Kernel &, Diagnostics &)> void stage(benchmark::State &state) {
  llvm::SourceMgr sm;
  Diagnostics diag(sm, false);
  Module module;
  if (!parsedGemm(state, diag, module))
    return;
  for (auto _ : state)
    benchmark::DoNotOptimize(Stage(module.kernels[0], diag));
}

unsigned layouts(const Kernel &k, Diagnostics &d) {
  return checkKernelLayouts(k, d);
}

void exhaustiveFallback(benchmark::State &state) {
  llvm::SourceMgr sm;
  Diagnostics diag(sm, false);
  Module module;
  if (!parsedGemm(state, diag, module))
    return;
  BarrierSkeleton skeleton = extractBarrierSkeleton(module.kernels[0]);
  const std::map<std::string, int64_t> sizes{{"K", 512}, {"M", 128}, {"N", 256}};
  size_t states = 0;
  for (auto _ : state) {
    ConcreteSkeleton concrete = unrollSkeleton(skeleton, sizes, {0, 0, 0}, 1'000'000);
    ExplorationResult r = exploreSkeleton(concrete, 200000);
    if (!r.complete || !r.findings.empty()) {
      state.SkipWithError("the exhaustive check of the GEMM did not pass");
      return;
    }
    states = r.states;
  }
  state.counters["states"] = double(states);
}
} // namespace

BENCHMARK(wholeCheck)->Unit(benchmark::kMillisecond);
BENCHMARK(stage<layouts>)->Name("layouts")->Unit(benchmark::kMillisecond);
BENCHMARK(stage<verifyBarrierProtocols>)->Name("barrierProtocols")->Unit(benchmark::kMillisecond);
BENCHMARK(stage<verifyStaticRaces>)->Name("staticRaces")->Unit(benchmark::kMillisecond);
BENCHMARK(stage<coverage>)->Name("writeCoverage")->Unit(benchmark::kMillisecond);
BENCHMARK(exhaustiveFallback)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
