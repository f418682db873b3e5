// The exhaustive fallback's sizes on one-stage rings and persistent grids,
// and the write-coverage proof on the library kernels and mutations of them.
#include "ir/ConcreteEval.h"
#include "ir/Diagnostics.h"
#include "ir/Instantiate.h"
#include "ir/Parser.h"
#include "kernels/BundledKernels.h"
#include "sync/BarrierSkeleton.h"
#include "verifier/FallbackSizes.h"
#include "verifier/WriteCoverage.h"

#include "SourceText.h"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

using namespace tilescope;
using tilescope::test::readSource;
using tilescope::test::replaced;

namespace {
struct Parsed {
  llvm::SourceMgr sm;
  Module module;
};

std::unique_ptr<Parsed> parse(const std::string &text) {
  auto p = std::make_unique<Parsed>();
  Diagnostics diag(p->sm, /*printImmediately=*/false);
  p->module = parseModuleText(text, "k.tile", diag);
  REQUIRE(!diag.hasErrors());
  REQUIRE(p->module.kernels.size() == 1);
  return p;
}

// The trip count of the outermost loop in the CTA `cta` at `sizes`.
int64_t outerTrip(const BarrierSkeleton &sk, const SizeAssignment &sizes, int64_t cta) {
  auto v = evalConcrete(sk.loops.front().trip(), [&](const Expr &e) -> std::optional<int64_t> {
    if (e->kind == ExprKind::Builtin)
      return cta;
    auto it = sizes.find(as<Var>(e).name);
    return it == sizes.end() ? std::nullopt : std::optional<int64_t>(it->second);
  });
  REQUIRE(v);
  return *v;
}
} // namespace

TEST_CASE("fallback sizes: a one-stage ring's loop runs twice") {
  auto p = parse(readSource("tests/lit/bugs/one-stage-release-skips-two.tile"));
  BarrierSkeleton sk = extractBarrierSkeleton(p->module.kernels[0]);
  std::string why;
  auto sizes = smallestTwoRoundSizes(sk, why);
  REQUIRE(sizes);
  // K / 64 >= 2 (before: K = 64, one iteration, and the planted deadlock
  // at the second never showed).
  CHECK(sizes->at("K") == 128);
}

TEST_CASE("fallback sizes: a persistent grid gets more tiles than CTAs, and a tail") {
  auto p = parse(std::string(bundledKernelText("gemm_bf16_sm90.tile")));
  BarrierSkeleton sk = extractBarrierSkeleton(p->module.kernels[0]);
  std::string why;
  auto sizes = smallestTwoRoundSizes(sk, why);
  REQUIRE(sizes);
  // The tile loop `for t in blockIdx.x .. tiles step 132`: twice in the
  // last CTA, and fewer times there than in the first.
  CHECK(outerTrip(sk, *sizes, 131) >= 2);
  CHECK(outerTrip(sk, *sizes, 0) > outerTrip(sk, *sizes, 131));
}

TEST_CASE("write coverage: every library kernel's outputs are proved written") {
  for (const BundledKernelFile &f : bundledKernelFiles()) {
    auto sm = std::make_unique<llvm::SourceMgr>();
    Diagnostics diag(*sm, false);
    Module m = parseModuleText(std::string(f.text), std::string(f.name), diag);
    REQUIRE(!diag.hasErrors());
    // A family is checked at its points (check instantiates them): its
    // skeleton with parameters models neither the param-guarded statements
    // nor, therefore, the bounds of their accesses.
    std::vector<Kernel> kernels;
    for (const Kernel &k : m.kernels) {
      if (k.space.empty()) {
        kernels.push_back(k);
        continue;
      }
      for (const NamedPoint &p : k.space.points) {
        Instance inst = instantiate(k, p.values);
        REQUIRE(inst.kernel);
        kernels.push_back(*inst.kernel);
      }
    }
    for (const Kernel &k : kernels) {
      CoverageReport r = proveWriteCoverage(k);
      INFO(f.name, ": ", k.name, ": ", r.method);
      CHECK(r.findings.empty());
      CHECK(r.notProved.empty());
      CHECK(r.method == "proved for all sizes");
    }
  }
}

TEST_CASE("write coverage: a persistent tile loop stepping past the grid leaves a tile unwritten") {
  std::string text(bundledKernelText("gemm_bf16_sm90.tile"));
  // Both tile loops (the producer's and the consumers'); the ring
  // counters are left alone, so only the coverage is wrong.
  text = replaced(text, "tiles step 132", "tiles step 133");
  text = replaced(text, "tiles step 132", "tiles step 133");
  auto p = parse(text);
  CoverageReport r = proveWriteCoverage(p->module.kernels[0]);
  REQUIRE(r.findings.size() == 1);
  // Tile 132 (one row block of tiles: column block 132) has no CTA.
  CHECK(r.findings[0].message.find("writes C[0, 33792] of the output C (for K = 8, M = 1, "
                                   "N = 33800)") != std::string::npos);
  CHECK(r.method == "violated");
}

TEST_CASE("write coverage: a store the inversion cannot read is not proved, never proved") {
  // Rows rotated by one: correct (a permutation of the rows), but the row
  // index is a remainder of a sum, which the inversion does not read.
  std::string text(bundledKernelText("rmsnorm.tile"));
  text = replaced(text, "let row = blockIdx.x", "let row = (blockIdx.x + 1) % R");
  auto p = parse(text);
  CoverageReport r = proveWriteCoverage(p->module.kernels[0]);
  CHECK(r.findings.empty());
  REQUIRE(r.notProved.size() == 1);
  CHECK(r.method.rfind("not proved (write coverage of Y: ", 0) == 0);
}

TEST_CASE("write coverage: rows in reverse order are inverted and proved") {
  // The row index falls with blockIdx: one digit of coefficient -1.
  std::string text(bundledKernelText("rmsnorm.tile"));
  text = replaced(text, "let row = blockIdx.x", "let row = R - 1 - blockIdx.x");
  auto p = parse(text);
  CoverageReport r = proveWriteCoverage(p->module.kernels[0]);
  CHECK(r.findings.empty());
  CHECK(r.notProved.empty());
  CHECK(r.method == "proved for all sizes");
}
