// The barrier-protocol verifier: skeleton extraction (who executes what, how
// many arrivals and bytes), and one exact finding per violation kind on small
// variants of the Hopper GEMM; the bundled kernels prove clean. The
// exhaustive fallback (unrolled skeleton, every interleaving) finds the same
// kinds at concrete sizes and picks its sizes from the where clause.
#include "ir/Parser.h"
#include "verifier/BarrierProofs.h"
#include "verifier/BarrierExplorer.h"
#include "sync/BarrierSkeleton.h"
#include "verifier/ConcreteSkeleton.h"
#include "verifier/FallbackSizes.h"

#include "SourceText.h"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

using namespace tilescope;
using tilescope::test::readSource;
using tilescope::test::replaced;

namespace {
std::string readKernel(const char *name) { return readSource(std::string("kernels/") + name); }

// The mutation tests start from the one-tile-per-CTA GEMM (the library kernel
// before it became persistent), whose witnesses name a single k loop.
std::string oneTileGemm() { return readSource("tests/lit/barriers/one-tile-gemm.tile"); }

struct Proved {
  BarrierReport report;
  llvm::SourceMgr sm;
  unsigned lineOf(llvm::SMLoc loc) { return sm.getLineAndColumn(loc).first; }
};

// Parses `text` (one kernel) and proves its protocols.
std::unique_ptr<Proved> prove(const std::string &text) {
  auto p = std::make_unique<Proved>();
  Diagnostics diag(p->sm, /*printImmediately=*/false);
  Module m = parseModuleText(text, "k.tile", diag);
  REQUIRE(!diag.hasErrors());
  REQUIRE(m.kernels.size() == 1);
  p->report = proveBarrierProtocols(m.kernels[0]);
  return p;
}

BarrierSkeleton skeletonOf(const std::string &text) {
  llvm::SourceMgr sm;
  Diagnostics diag(sm, false);
  Module m = parseModuleText(text, "k.tile", diag);
  REQUIRE(!diag.hasErrors());
  return extractBarrierSkeleton(m.kernels[0]);
}

std::string gemmWith(const std::string &from, const std::string &to) {
  std::string text = oneTileGemm();
  size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

unsigned lineContaining(const std::string &text, const std::string &what) {
  size_t at = text.find(what);
  REQUIRE(at != std::string::npos);
  return unsigned(std::count(text.begin(), text.begin() + long(at), '\n') + 1);
}

const ProtocolFinding *findKind(const std::vector<ProtocolFinding> &findings,
                                ProtocolViolationKind k) {
  for (const ProtocolFinding &f : findings)
    if (f.kind == k)
      return &f;
  return nullptr;
}
const ProtocolFinding *findKind(const BarrierReport &r, ProtocolViolationKind k) {
  return findKind(r.findings, k);
}
} // namespace

TEST_CASE("thread sets describe themselves in warpgroups, warps and threads") {
  ThreadSet wg0(384);
  for (int t = 0; t < 128; ++t)
    wg0.add(t);
  CHECK(wg0.describe() == "warpgroup 0");
  ThreadSet leaders(384);
  leaders.add(128);
  leaders.add(256);
  CHECK(leaders.describe() == "thread 0 of warpgroups 1-2");
  CHECK(leaders.groupsTouched(128) == 2);
  ThreadSet one(384);
  one.add(0);
  CHECK(one.describe() == "thread 0");
  CHECK(ThreadSet(384, true).describe() == "all 384 threads");
  CHECK(one.subsetOf(wg0));
  CHECK_FALSE(leaders.subsetOf(wg0));
  // Widening fills each group that has a member, and only those; a ragged
  // last group (100 threads: warps of 32, the last one of 4) stays in range.
  CHECK(leaders.widened(128).describe() == "warpgroups 1-2");
  CHECK(one.widened(32).describe() == "warp 0");
  CHECK(wg0.widened(128) == wg0);
  ThreadSet ragged(100);
  ragged.add(97);
  ThreadSet lastWarp = ragged.widened(32);
  CHECK(lastWarp.count() == 4);
  CHECK(lastWarp.contains(96));
  CHECK_FALSE(lastWarp.contains(95));
  CHECK(ThreadSet(384).widened(32).empty());
}

TEST_CASE("the GEMM skeleton: roles, arrivals per execution, bytes per copy") {
  BarrierSkeleton sk = skeletonOf(oneTileGemm());
  REQUIRE(sk.barriers.count("full"));
  CHECK(sk.barriers.at("full").size == 4);
  CHECK(sk.barriers.at("empty").count == 2);
  int waits = 0, deliveries = 0;
  for (const SyncEvent &e : sk.events) {
    if (e.kind == SyncKind::MbarArrive && e.barrier.array == "empty") {
      CHECK(e.issuers() == 2); // tid_in_wg == 0 in two consumer warpgroups
      CHECK(e.threads.describe() == "thread 0 of warpgroups 1-2");
    }
    if (e.kind == SyncKind::MbarArrive && e.barrier.array == "full")
      CHECK(e.threads.describe() == "thread 0"); // warpid == 0 && elect_sync()
    if (e.kind == SyncKind::MbarExpectTx)
      CHECK(constantValue(e.amount) == 49152);
    if (e.kind == SyncKind::TxDelivery) {
      ++deliveries;
      // 128 x 64 bf16 of A, 256 x 64 bf16 of B
      CHECK((constantValue(e.amount) == 16384 || constantValue(e.amount) == 32768));
    }
    if (e.kind == SyncKind::MbarWait) {
      ++waits;
      CHECK(e.loop >= 0);
      CHECK(e.parity != nullptr);
    }
  }
  CHECK(waits == 2);
  CHECK(deliveries == 2);
}

TEST_CASE("the bundled kernels prove clean, for all sizes") {
  for (const char *name :
       {"gemm_bf16_sm90.tile", "gemm_bf16_sm90_small.tile", "gemm_naive.tile", "rmsnorm.tile"}) {
    auto p = prove(readKernel(name));
    CHECK_MESSAGE(p->report.findings.empty(), name);
    CHECK_MESSAGE(p->report.notProved.empty(), name);
  }
  auto p = prove(readKernel("gemm_bf16_sm90.tile"));
  // Arrivals and bytes of both barriers, deadlock freedom, warps in step,
  // pipeline stages, and each round's arrivals after the phase before.
  CHECK(p->report.results.size() == 7);
  for (const ProtocolResult &r : p->report.results) {
    CHECK_MESSAGE(r.proved, r.property);
    CHECK(r.status.rfind("proved for all sizes", 0) == 0);
  }
}

TEST_CASE("a producer parity of (k / 4) % 2 deadlocks at k = 0") {
  std::string text = gemmWith("parity = (k / 4 + 1) % 2", "parity = (k / 4) % 2");
  auto p = prove(text);
  const ProtocolFinding *f = findKind(p->report, ProtocolViolationKind::Deadlock);
  REQUIRE(f);
  CHECK(p->lineOf(f->loc) == lineContaining(text, "mbarrier.wait(empty"));
  CHECK(f->message.find("at k = 0") != std::string::npos);
  CHECK(f->symbolic);
}

TEST_CASE("expect_tx of 16384 against a 16384- and a 32768-byte box: both numbers") {
  std::string text = gemmWith("bytes = 49152", "bytes = 16384");
  auto p = prove(text);
  const ProtocolFinding *f = findKind(p->report, ProtocolViolationKind::TxBytesMismatch);
  REQUIRE(f);
  CHECK(p->lineOf(f->loc) == lineContaining(text, "arrive_expect_tx"));
  CHECK(f->message.find("expects 16384 bytes but the copies signalling it deliver 49152") !=
        std::string::npos);
  CHECK(p->report.findings.size() == 1);
}

TEST_CASE("every consumer thread arriving over-arrives: 256 against a count of 2") {
  std::string text = gemmWith("      if tid_in_wg == 0 {\n        mbarrier.arrive(empty[s])\n      }\n",
                              "      mbarrier.arrive(empty[s])\n");
  auto p = prove(text);
  const ProtocolFinding *f = findKind(p->report, ProtocolViolationKind::OverArrival);
  REQUIRE(f);
  CHECK(f->message.find("receives 256 arrivals but its count is 2") != std::string::npos);
  CHECK(p->report.findings.size() == 1);
}

TEST_CASE("one warpgroup releasing leaves every empty phase one arrival short") {
  auto p = prove(gemmWith("if tid_in_wg == 0 {", "if tid_in_wg == 0 && wgid == 1 {"));
  const ProtocolFinding *f = findKind(p->report, ProtocolViolationKind::PhaseNeverCompletes);
  REQUIRE(f);
  CHECK(f->message.find("receives 1 of 2 arrivals") != std::string::npos);
}

TEST_CASE("a consumer parity one phase behind reads a stage before it is filled") {
  std::string text = gemmWith("parity = (k / 4) % 2", "parity = (k / 4 + 1) % 2");
  auto p = prove(text);
  const ProtocolFinding *f = findKind(p->report, ProtocolViolationKind::ReadBeforeFilled);
  REQUIRE(f);
  CHECK(p->lineOf(f->loc) == lineContaining(text, "wg.gemm"));
  CHECK(findKind(p->report, ProtocolViolationKind::ParityAliasing));
}

TEST_CASE("a one-stage buffer under a four-deep ring is refilled while read") {
  std::string text = oneTileGemm();
  auto swap = [&](const std::string &a, const std::string &b) {
    size_t at = text.find(a);
    REQUIRE(at != std::string::npos);
    text.replace(at, a.size(), b);
  };
  swap("shared As: bf16[4, 128, 64] layout(swizzle(128B, bf16, S[(4, 128, 64):(8192, 64, 1)]))",
       "shared As: bf16[1, 128, 64] layout(swizzle(128B, bf16, S[(1, 128, 64):(8192, 64, 1)]))");
  swap("copy_async(As[s]", "copy_async(As[0]");
  swap("wg.gemm(acc, As[s]", "wg.gemm(acc, As[0]");
  auto p = prove(text);
  const ProtocolFinding *f = findKind(p->report, ProtocolViolationKind::OverwriteWhileRead);
  REQUIRE(f);
  CHECK(p->lineOf(f->loc) == lineContaining(text, "copy_async(As[0]"));
  CHECK(f->message.find("at k = 1") != std::string::npos);
  CHECK(f->message.find("(from k = 0)") != std::string::npos);
  CHECK(p->report.findings.size() == 1);
}

TEST_CASE("init without fence and CTA barrier is not visible; with them it is") {
  const std::string bad = R"(kernel k(X: global f32[N])
  launch grid(1) threads(128) target(sm_90a)
{
  mbarrier bar
  if threadIdx.x == 0 {
    mbarrier.init(bar, count = 128)
  }
  mbarrier.arrive(bar)
  mbarrier.wait(bar, parity = 0)
}
)";
  auto p = prove(bad);
  const ProtocolFinding *f = findKind(p->report, ProtocolViolationKind::InitOrder);
  REQUIRE(f);
  CHECK(p->lineOf(f->loc) == 8);
  CHECK_FALSE(f->symbolic);
  std::string good = bad;
  good.replace(good.find("  }\n  mbarrier.arrive"), 4, "    fence.mbarrier_init()\n  }\n  cta.sync()\n");
  auto q = prove(good);
  CHECK(q->report.findings.empty());
}

TEST_CASE("a parity-1 wait in round 0 passes at once and is not reported as a deadlock") {
  auto p = prove(R"(kernel k(X: global f32[N])
  launch grid(1) threads(128) target(sm_90a)
{
  mbarrier bar(count = 128)
  mbarrier.arrive(bar)
  mbarrier.wait(bar, parity = 1)
}
)");
  // parity 1 in round 0 reads as "the phase before the first": it passes at
  // once and is not a deadlock; the proof must not invent one.
  CHECK(findKind(p->report, ProtocolViolationKind::Deadlock) == nullptr);
}

// --- the exhaustive fallback ---

namespace {
const SizeAssignment kGemmSizes{{"K", 512}, {"M", 128}, {"N", 256}};

ExplorationResult explore(const std::string &text, size_t cap = 200000) {
  BarrierSkeleton sk = skeletonOf(text);
  ConcreteSkeleton concrete = unrollSkeleton(sk, kGemmSizes, {0, 0, 0}, 100000);
  REQUIRE(concrete.error.empty());
  return exploreSkeleton(concrete, cap);
}
} // namespace

TEST_CASE("exhaustive: the Hopper GEMM has no violation in any interleaving at K = 512") {
  ExplorationResult r = explore(oneTileGemm());
  CHECK(r.complete);
  CHECK(r.states > 100);
  CHECK(r.findings.empty());
}

TEST_CASE("exhaustive: the unrolled GEMM has a producer and a consumer process") {
  BarrierSkeleton sk = skeletonOf(oneTileGemm());
  ConcreteSkeleton c = unrollSkeleton(sk, kGemmSizes, {0, 0, 0}, 100000);
  REQUIRE(c.processes.size() == 3); // warp 0, warpgroups 1-2, warps 1-3
  CHECK(c.processName(0) == "warp 0");
  CHECK(c.processName(1) == "warpgroups 1-2");
  // Producer: 8 iterations of wait, arrive_expect_tx, two copies.
  CHECK(c.processes[0].steps.size() == 8 * 4);
  const ConcreteStep &arrive = c.processes[0].steps[1];
  CHECK(arrive.amount == 1);
  CHECK(arrive.expectBytes == 49152);
  CHECK(c.processes[0].steps[2].amount == 16384);
  CHECK(c.processes[0].steps[4].iteration == "k = 1");
  // Consumer release: thread 0 of two warpgroups, 2 arrivals.
  CHECK(c.processes[1].steps[2].amount == 2);
  CHECK(c.elements.size() == 8);
}

TEST_CASE("exhaustive: every consumer thread releasing is an over-arrival") {
  ExplorationResult r = explore(gemmWith("      if tid_in_wg == 0 {\n        mbarrier.arrive(empty[s])",
                                         "      if true {\n        mbarrier.arrive(empty[s])"));
  const ProtocolFinding *f = findKind(r.findings, ProtocolViolationKind::OverArrival);
  REQUIRE(f);
  CHECK(f->exhaustive);
  CHECK(f->message.find("brings 256 arrivals to empty[0], which expects only 2 more") !=
        std::string::npos);
}

TEST_CASE("exhaustive: a consumer loop longer than the producer's deadlocks at its last wait") {
  ExplorationResult r = explore(gemmWith("for k in 0 .. K / 64 pipelined(4)",
                                         "for k in 0 .. K / 64 + 1 pipelined(4)"));
  REQUIRE(r.complete);
  const ProtocolFinding *f = findKind(r.findings, ProtocolViolationKind::Deadlock);
  REQUIRE(f);
  CHECK(f->message.find("at k = 8 for phase 2, which never completes: full[0] has completed 2 "
                        "phases; phase 2 has 0 of 1 arrivals") != std::string::npos);
}

TEST_CASE("exhaustive: expect_tx four bytes short leaves a phase with bytes outstanding") {
  ExplorationResult r = explore(gemmWith("bytes = 49152", "bytes = 49148"));
  const ProtocolFinding *f = findKind(r.findings, ProtocolViolationKind::TxBytesMismatch);
  REQUIRE(f);
  CHECK(f->message.find("-4 transaction bytes outstanding") != std::string::npos);
}

TEST_CASE("exhaustive: a constant parity is satisfied by a phase two behind") {
  ExplorationResult r = explore(gemmWith("mbarrier.wait(full[s], parity = (k / 4) % 2)",
                                         "mbarrier.wait(full[s], parity = 0)"));
  CHECK(findKind(r.findings, ProtocolViolationKind::ParityAliasing));
}

TEST_CASE("exhaustive: releasing a stage before reading it is an overwrite while read") {
  ExplorationResult r =
      explore(gemmWith("      wg.gemm(acc, As[s][(wgid - 1) * 64 : +64, :], Bs[s], transpose_b = true)\n"
                       "      if tid_in_wg == 0 {\n        mbarrier.arrive(empty[s])\n      }",
                       "      if tid_in_wg == 0 {\n        mbarrier.arrive(empty[s])\n      }\n"
                       "      wg.gemm(acc, As[s][(wgid - 1) * 64 : +64, :], Bs[s], transpose_b = true)"));
  const ProtocolFinding *f =
      findKind(r.findings, ProtocolViolationKind::OverwriteWhileRead);
  const ProtocolFinding *g = findKind(r.findings, ProtocolViolationKind::ReadBeforeFilled);
  CHECK((f || g));
}

TEST_CASE("exhaustive: the state cap turns into an honest limit") {
  ExplorationResult r = explore(oneTileGemm(), 50);
  CHECK(!r.complete);
  CHECK(r.limit == "state space above 50 states");
}

TEST_CASE("exhaustive: a ring index past the array is out of range when unrolled") {
  BarrierSkeleton sk = skeletonOf(gemmWith("mbarrier full[4](count = 1), empty[4](count = 2)",
                                           "mbarrier full[3](count = 1), empty[4](count = 2)"));
  ConcreteSkeleton c = unrollSkeleton(sk, kGemmSizes, {0, 0, 0}, 100000);
  CHECK(c.outOfRange);
  CHECK(c.error.find("uses full[3] at k = 3, but full has 3 elements") != std::string::npos);
}

TEST_CASE("fallback sizes: the smallest admitted sizes run the 4-stage ring twice") {
  std::string why;
  BarrierSkeleton sk = skeletonOf(oneTileGemm());
  auto sizes = smallestTwoRoundSizes(sk, why);
  REQUIRE(sizes);
  CHECK(*sizes == kGemmSizes);
  CHECK(describeSizes(*sizes) == "K = 512, M = 128, N = 256");
  CHECK(admittedSizes(sk, {{"K", 640}, {"M", 256}, {"N", 256}}, why));
  CHECK(!admittedSizes(sk, {{"K", 100}, {"M", 128}, {"N", 256}}, why));
  CHECK(why == "the sizes K = 100, M = 128, N = 256 are not admitted by the where clause");
}

TEST_CASE("fallback sizes: given sizes that leave symbols out are completed, the given kept") {
  std::string why;
  BarrierSkeleton sk = skeletonOf(oneTileGemm());
  auto sizes = fallbackSizes(sk, {{"K", 1024}}, why);
  REQUIRE(sizes);
  CHECK(describeSizes(*sizes) == "K = 1024, M = 128, N = 256");
  // Complete sizes are taken as they are, or refused.
  CHECK(fallbackSizes(sk, {{"K", 640}, {"M", 256}, {"N", 256}}, why) ==
        SizeAssignment{{"K", 640}, {"M", 256}, {"N", 256}});
  CHECK(!fallbackSizes(sk, {{"K", 100}, {"M", 128}, {"N", 256}}, why));
  // A given size no admitted completion has.
  CHECK(!fallbackSizes(sk, {{"K", 100}}, why));
  CHECK(why == "Z3 found no sizes with K = 100 that the where clause admits");
}

// --- clusters ---

namespace {
// Two CTAs: each multicasts its half of S into both and expects both halves;
// each arrives on its own `done` and on its peer's (count 2).
const char *kClusterPair = R"(
kernel pair(X: global f32[64, 64])
  launch grid(2) cluster(2) threads(32) target(sm_90a)
{
  shared S: f32[64, 64]
  mbarrier full(count = 1), done(count = 2)
  let r = clusterCtaIdx.x
  if elect_sync() {
    mbarrier.arrive_expect_tx(full, bytes = 16384)
  }
  cluster.sync()
  if elect_sync() {
    tma.load(S[r * 32 : +32, :], X[r * 32 : +32, :], mbar = full, multicast = 3)
  }
  mbarrier.wait(full, parity = 0)
  if elect_sync() {
    mbarrier.arrive(done)
    mbarrier.arrive(done, cta = 1 - r)
  }
  mbarrier.wait(done, parity = 0)
  cluster.sync()
}
)";

std::vector<const ConcreteStep *> stepsOf(const ConcreteProcess &p, SyncKind kind) {
  std::vector<const ConcreteStep *> out;
  for (const ConcreteStep &s : p.steps)
    if (s.event->kind == kind)
      out.push_back(&s);
  return out;
}
} // namespace

TEST_CASE("exhaustive: a cluster unrolls every CTA, with remote arrivals and multicasts") {
  BarrierSkeleton sk = skeletonOf(kClusterPair);
  ConcreteSkeleton c = unrollSkeleton(sk, {}, {0, 0, 0}, 1000, 2);
  REQUIRE(c.error.empty());
  REQUIRE(c.processes.size() == 2); // one per CTA
  CHECK(c.processes[1].cta == 1);
  CHECK(c.elements.size() == 4); // full and done of each CTA
  // CTA 1's multicast is one delivery into each CTA's full.
  auto copies = stepsOf(c.processes[1], SyncKind::TxDelivery);
  REQUIRE(copies.size() == 2);
  CHECK(c.elementName(copies[0]->element) == "full[0] of CTA 0");
  CHECK(c.elementName(copies[1]->element) == "full[0] of CTA 1");
  CHECK(copies[0]->amount == 8192); // 32 rows of 64 f32
  // CTA 0's second arrival lands on CTA 1's done.
  auto arrivals = stepsOf(c.processes[0], SyncKind::MbarArrive);
  REQUIRE(arrivals.size() == 3); // arrive_expect_tx, two on done
  CHECK(c.elementName(arrivals[1]->element) == "done[0] of CTA 0");
  CHECK(c.elementName(arrivals[2]->element) == "done[0] of CTA 1");
  ExplorationResult r = exploreSkeleton(c, 200000);
  CHECK(r.complete);
  CHECK(r.findings.empty());
}

TEST_CASE("exhaustive: without the remote arrival the peer's phase never completes") {
  std::string text = kClusterPair;
  text.replace(text.find("    mbarrier.arrive(done, cta = 1 - r)\n"),
               std::string("    mbarrier.arrive(done, cta = 1 - r)\n").size(), "");
  BarrierSkeleton sk = skeletonOf(text); // the steps point into it
  ConcreteSkeleton c = unrollSkeleton(sk, {}, {0, 0, 0}, 1000, 2);
  ExplorationResult r = exploreSkeleton(c, 200000);
  const ProtocolFinding *f = findKind(r.findings, ProtocolViolationKind::Deadlock);
  REQUIRE(f);
  CHECK(f->message.find("done[0] of CTA") != std::string::npos);
  CHECK(f->message.find("1 of 2 arrivals") != std::string::npos);
}

TEST_CASE("proof: bytes from every CTA's multicast are counted, and a short expect_tx is found") {
  auto good = prove(kClusterPair);
  CHECK(findKind(good->report, ProtocolViolationKind::TxBytesMismatch) == nullptr);
  std::string text = kClusterPair;
  text.replace(text.find("bytes = 16384"), 13, "bytes = 8192");
  auto bad = prove(text);
  const ProtocolFinding *f = findKind(bad->report, ProtocolViolationKind::TxBytesMismatch);
  REQUIRE(f);
  CHECK(bad->lineOf(f->loc) == 9); // the arrive_expect_tx
  CHECK(f->message.find("expects 8192 bytes but the copies signalling it deliver 16384") !=
        std::string::npos);
}

TEST_CASE("proof: a wait only one rank runs is released by a peer's remote arrival") {
  const std::string notify = R"(
kernel notify(X: global f32[64])
  launch grid(2) cluster(2) threads(32) target(sm_90a)
{
  mbarrier ready(count = 1)
  let r = clusterCtaIdx.x
  cluster.sync()
  if r == 0 {
    if elect_sync() {
      mbarrier.arrive(ready, cta = 1)
    }
  }
  if r == 1 {
    mbarrier.wait(ready, parity = 0)
  }
  cluster.sync()
}
)";
  // The wait's guard reads the rank of the CTA the proof is about, as the
  // sender's target does: rank 1 receives rank 0's arrival.
  auto good = prove(notify);
  CHECK(good->report.findings.empty());
  CHECK(good->report.notProved.empty());
  // Arriving on its own barrier instead leaves rank 1 waiting.
  std::string text = notify;
  text.replace(text.find("cta = 1"), 7, "cta = 0");
  auto bad = prove(text);
  const ProtocolFinding *f = findKind(bad->report, ProtocolViolationKind::Deadlock);
  REQUIRE(f);
  CHECK(bad->lineOf(f->loc) == 14); // the wait
}

TEST_CASE("exhaustive: the split cluster barrier orders the CTAs of a cluster") {
  // Rank 1 waits for rank 0's remote arrival before it arrives on the
  // cluster barrier; rank 0 arrives on `ready` only after that barrier.
  const std::string text = R"(
kernel handoff(X: global f32[64])
  launch grid(2) cluster(2) threads(32) target(sm_90a)
{
  mbarrier ready(count = 1)
  let r = clusterCtaIdx.x
  cluster.sync()
  if r == 1 {
    mbarrier.wait(ready, parity = 0)
  }
  barrier.cluster.arrive()
  barrier.cluster.wait()
  if r == 0 {
    if elect_sync() {
      mbarrier.arrive(ready, cta = 1)
    }
  }
  cluster.sync()
}
)";
  BarrierSkeleton sk = skeletonOf(text);
  ConcreteSkeleton c = unrollSkeleton(sk, {}, {0, 0, 0}, 1000, 2);
  REQUIRE(c.error.empty());
  ExplorationResult r = exploreSkeleton(c, 200000);
  const ProtocolFinding *f = findKind(r.findings, ProtocolViolationKind::Deadlock);
  REQUIRE(f);
  // With the wait after the cluster barrier, the handoff completes.
  std::string fixed = text;
  std::string wait = "  if r == 1 {\n    mbarrier.wait(ready, parity = 0)\n  }\n";
  fixed.erase(fixed.find(wait), wait.size());
  fixed.insert(fixed.find("  cluster.sync()\n}"), wait);
  BarrierSkeleton sk2 = skeletonOf(fixed);
  ExplorationResult r2 = exploreSkeleton(unrollSkeleton(sk2, {}, {0, 0, 0}, 1000, 2), 200000);
  CHECK(r2.complete);
  CHECK(r2.findings.empty());
}
