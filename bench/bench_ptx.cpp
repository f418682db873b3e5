// The PTX reader's speed: a 100k-line module made of copies of the library's
// persistent Hopper GEMM as nvcc compiles it (tests/ptx/nvcc/gemm_bf16_sm90.ptx,
// 5338 lines a copy, each entry renamed), parsed from memory; and the
// condensed form of one copy. Figures: docs/ptx.md.
#include "ptx/Condense.h"
#include "ptx/Parser.h"

#include <benchmark/benchmark.h>
#include <llvm/Support/MemoryBuffer.h>

#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string readCorpus() {
  std::ifstream in(std::string(TILESCOPE_SOURCE_DIR) + "/tests/ptx/nvcc/gemm_bf16_sm90.ptx");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The module header once, then copies of the function with distinct names
// until the text has at least `lines` lines.
std::string largeModule(size_t lines) {
  std::string one = readCorpus();
  size_t entry = one.find(".visible .entry");
  std::string header = one.substr(0, entry), body = one.substr(entry);
  std::string out = header;
  size_t count = 0, n = 0;
  for (char c : header)
    n += c == '\n';
  while (n < lines) {
    std::string copy = body;
    const std::string name = "gemm_bf16_sm90";
    for (size_t pos = 0; (pos = copy.find(name, pos)) != std::string::npos; pos += name.size() + 4)
      copy.insert(pos + name.size(), "_" + std::to_string(count % 1000) + "x");
    ++count;
    out += copy;
    for (char c : copy)
      n += c == '\n';
  }
  return out;
}

void parse100kLines(benchmark::State &state) {
  static const std::string text = largeModule(100000);
  size_t lines = 0;
  for (char c : text)
    lines += c == '\n';
  for (auto _ : state) {
    llvm::SourceMgr sm;
    tilescope::Diagnostics diag(sm, false);
    unsigned id =
        sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBuffer(text, "big.ptx"), llvm::SMLoc());
    auto m = tilescope::ptx::parseModule(id, diag);
    if (!m) {
      state.SkipWithError("the module did not parse");
      return;
    }
    benchmark::DoNotOptimize(m->functions.size());
  }
  state.counters["lines"] = double(lines);
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(text.size()));
}
BENCHMARK(parse100kLines)->Unit(benchmark::kMillisecond);

void condenseGemm(benchmark::State &state) {
  static const std::string text = readCorpus();
  llvm::SourceMgr sm;
  tilescope::Diagnostics diag(sm, false);
  unsigned id =
      sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBuffer(text, "g.ptx"), llvm::SMLoc());
  auto m = tilescope::ptx::parseModule(id, diag);
  if (!m) {
    state.SkipWithError("the module did not parse");
    return;
  }
  for (auto _ : state) {
    auto s = tilescope::ptx::condense(*m, *m->kernels()[0]);
    benchmark::DoNotOptimize(s.instructions);
  }
}
BENCHMARK(condenseGemm)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
