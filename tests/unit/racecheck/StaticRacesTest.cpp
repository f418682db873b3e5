// The static race check: two symbolic threads within a barrier interval, the
// witness they come with, the async-proxy fence rule, and the pairs left to
// the barrier proofs.
#include "racecheck/StaticRaces.h"
#include "ir/Parser.h"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

using namespace tilescope;

namespace {
RaceReport check(const std::string &text) {
  llvm::SourceMgr sm;
  Diagnostics diag(sm, /*printImmediately=*/false);
  Module m = parseModuleText(text, "k.tile", diag);
  REQUIRE(!diag.hasErrors());
  REQUIRE(m.kernels.size() == 1);
  return checkStaticRaces(m.kernels[0]);
}

const char *kShift = R"(kernel shift(X: global f32[N], Y: global f32[N])
  where N % 256 == 0
  launch grid(N / 256) threads(256) target(sm_90a)
{
  shared S: f32[256]
  let base = blockIdx.x * 256
  S[threadIdx.x] = X[base + threadIdx.x]
SYNC  Y[base + threadIdx.x] = S[(threadIdx.x + 1) % 256]
}
)";

std::string shift(bool sync) {
  std::string t = kShift;
  t.replace(t.find("SYNC"), 4, sync ? "  cta.sync()\n" : "");
  return t;
}
} // namespace

TEST_CASE("reading a neighbour's element without cta.sync races, with a witness") {
  RaceReport r = check(shift(false));
  REQUIRE(r.findings.size() == 1);
  const RaceFinding &f = r.findings[0];
  CHECK(f.kind == RaceKind::DataRace);
  CHECK(f.message.find("data race on shared S[") != std::string::npos);
  CHECK(f.message.find("written by thread") != std::string::npos);
  CHECK(f.message.find("read by thread") != std::string::npos);
}

TEST_CASE("a cta.sync between the write and the read orders them for all sizes") {
  RaceReport r = check(shift(true));
  CHECK(r.findings.empty());
  CHECK(r.pairsProved == 3);
  CHECK(r.notChecked.empty());
}

TEST_CASE("distinct elements per thread never race, even without a barrier") {
  RaceReport r = check(R"(kernel k(X: global f32[N])
  where N % 256 == 0
  launch grid(N / 256) threads(256) target(sm_90a)
{
  shared S: f32[256]
  S[threadIdx.x] = 1.0
  S[threadIdx.x] = S[threadIdx.x] + 1.0
}
)");
  CHECK(r.findings.empty());
}

TEST_CASE("a generic write read by a TMA store needs fence.proxy.async") {
  std::string text = R"(kernel e(C: global bf16[M, N])
  where M % 128 == 0, N % 128 == 0
  launch grid(N / 128, M / 128) threads(128) target(sm_90a)
{
  shared Cs: bf16[128, 128]
  for r in 0 .. 128 {
    Cs[r, tid_in_wg] = bf16(0.0)
  }
FENCE  cta.sync()
  if tid_in_wg == 0 {
    tma.store(C[blockIdx.y * 128 : +128, blockIdx.x * 128 : +128], Cs)
  }
}
)";
  std::string bad = text, good = text;
  bad.replace(bad.find("FENCE"), 5, "");
  good.replace(good.find("FENCE"), 5, "  fence.proxy.async()\n");
  RaceReport r = check(bad);
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].kind == RaceKind::MissingProxyFence);
  CHECK(check(good).findings.empty());
}

TEST_CASE("the Hopper GEMM: no races; its two pipeline pairs go to the barrier proofs") {
  std::ifstream in(std::string(TILESCOPE_SOURCE_DIR) + "/kernels/gemm_bf16_sm90.tile");
  std::stringstream ss;
  ss << in.rdbuf();
  RaceReport r = check(ss.str());
  CHECK(r.findings.empty());
  CHECK(r.pairsOrderedByMbarrier == 2);
  CHECK(r.pairsProved == 5);
}

TEST_CASE("a persistent tile loop from blockIdx.x: each CTA's tiles are its own") {
  // Loop bounds are read with each executor's own blockIdx: with a stride of
  // the grid no two CTAs meet on a tile; with half of it CTAs 0 and 2 do.
  std::string text = R"(kernel k(X: global f32[N], Y: global f32[N])
  where N % 128 == 0
  launch grid(4) threads(128) target(sm_90a)
{
  for t in blockIdx.x .. N / 128 step STRIDE {
    Y[t * 128 + threadIdx.x] = X[t * 128 + threadIdx.x]
  }
}
)";
  std::string bad = text, good = text;
  bad.replace(bad.find("STRIDE"), 6, "2");
  good.replace(good.find("STRIDE"), 6, "4");
  CHECK(check(good).findings.empty());
  RaceReport r = check(bad);
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].message.find("in different CTAs") != std::string::npos);
}

TEST_CASE("global writes without the CTA offset race between CTAs; with it they do not") {
  std::string text = R"(kernel k(X: global f32[N], Y: global f32[N])
  where N % 128 == 0
  launch grid(N / 128) threads(128) target(sm_90a)
{
  Y[OFFSETthreadIdx.x] = X[blockIdx.x * 128 + threadIdx.x]
}
)";
  std::string bad = text, good = text;
  bad.replace(bad.find("OFFSET"), 6, "");
  good.replace(good.find("OFFSET"), 6, "blockIdx.x * 128 + ");
  RaceReport r = check(bad);
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].message.find("in different CTAs") != std::string::npos);
  CHECK(r.findings[0].message.find("CTA (0)") != std::string::npos);
  CHECK(check(good).findings.empty());
}

TEST_CASE("a write, cta.sync, a neighbour's read: the next iteration's write races") {
  std::string text = R"(kernel k(X: global f32[N])
  where N % 128 == 0
  launch grid(N / 128) threads(128) target(sm_90a)
{
  shared S: f32[128]
  for it in 0 .. 4 {
    S[threadIdx.x] = X[blockIdx.x * 128 + threadIdx.x]
    cta.sync()
    X[blockIdx.x * 128 + threadIdx.x] = S[(threadIdx.x + 1) % 128]
END  }
}
)";
  std::string bad = text, good = text;
  bad.replace(bad.find("END"), 3, "");
  good.replace(good.find("END"), 3, "    cta.sync()\n");
  RaceReport r = check(bad);
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].message.find("data race on shared S[") != std::string::npos);
  CHECK(check(good).findings.empty());
}
