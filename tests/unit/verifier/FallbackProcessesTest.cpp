// The processes of the exhaustive fallback (verifier/ConcreteSkeleton.h):
// roles that share a loop stay separate processes, mbarrier.init is a step,
// and accesses keep the region each process touches, so that the check
// neither invents findings (a false deadlock of merged roles, a conflict of
// disjoint halves) nor misses one (an element no init reaches).
#include "ir/Parser.h"
#include "verifier/BarrierExplorer.h"
#include "sync/BarrierSkeleton.h"
#include "verifier/ConcreteSkeleton.h"
#include "proof/SolverBudget.h"

#include "ir/Budget.h"

#include "SourceText.h"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

using namespace tilescope;
using tilescope::test::readSource;
using tilescope::test::replaced;

namespace {
BarrierSkeleton skeletonOf(const std::string &text) {
  llvm::SourceMgr sm;
  Diagnostics diag(sm, false);
  Module m = parseModuleText(text, "k.tile", diag);
  REQUIRE(!diag.hasErrors());
  REQUIRE(!m.kernels.empty());
  return extractBarrierSkeleton(m.kernels[0]);
}

ConcreteSkeleton unrolled(const BarrierSkeleton &sk, const std::map<std::string, int64_t> &sizes) {
  ConcreteSkeleton c = unrollSkeleton(sk, sizes, {0, 0, 0}, 1'000'000);
  REQUIRE(c.error.empty());
  return c;
}

std::vector<std::string> processNames(const ConcreteSkeleton &c) {
  std::vector<std::string> out;
  for (size_t p = 0; p < c.processes.size(); ++p)
    out.push_back(c.processName(p));
  return out;
}

const ProtocolFinding *findKind(const ExplorationResult &r, ProtocolViolationKind k) {
  for (const ProtocolFinding &f : r.findings)
    if (f.kind == k)
      return &f;
  return nullptr;
}

const std::map<std::string, int64_t> kSm100Sizes{{"K", 256}, {"M", 128}, {"N", 128}};
const std::map<std::string, int64_t> kPersistentSizes{{"K", 72}, {"M", 25345}, {"N", 264}};
} // namespace

TEST_CASE("fallback processes: roles that share an all-thread loop are explored apart") {
  // The Blackwell GEMM: warp 0 loads, warp 1 issues the MMAs, and all four
  // warps read the accumulator back in one loop. Merged into one sequential
  // process, warp 0 waited for releases warp 1 only gives later: a false
  // deadlock.
  BarrierSkeleton sk = skeletonOf(readSource("kernels/gemm_bf16_sm100.tile"));
  ConcreteSkeleton c = unrolled(sk, kSm100Sizes);
  CHECK(processNames(c) == std::vector<std::string>{"warp 0", "warp 1", "warps 2-3"});
  ExplorationResult r = exploreSkeleton(c, 200000);
  CHECK(r.complete);
  CHECK(r.findings.empty());
}

TEST_CASE("fallback processes: the ping-pong consumers of attention are two processes") {
  std::string text = readSource("kernels/attention_fwd_sm90.tile");
  text = text.substr(0, text.find("\nkernel ", text.find("kernel attention_fwd_sm90(") + 1));
  BarrierSkeleton sk = skeletonOf(text);
  ConcreteSkeleton c = unrolled(sk, {{"B", 1}, {"H", 1}, {"S", 392}});
  std::vector<std::string> names = processNames(c);
  CHECK(std::find(names.begin(), names.end(), "warpgroup 1") != names.end());
  CHECK(std::find(names.begin(), names.end(), "warpgroup 2") != names.end());
  ExplorationResult r = exploreSkeleton(c, 400000);
  CHECK(r.complete);
  CHECK(r.findings.empty());
}

TEST_CASE("fallback processes: units of one process agree on every wait and arrival") {
  // The two consumer warpgroups of the Hopper GEMM run the same code and
  // both release each stage: one process, in lockstep.
  std::string gemm = readSource("kernels/gemm_bf16_sm90.tile");
  std::vector<ThreadSet> together = skeletonProcesses(skeletonOf(gemm));
  BarrierSkeleton sk = skeletonOf(readSource("tests/lit/bugs/units-release-one-warpgroup.tile"));
  ConcreteSkeleton c = unrolled(sk, {{"K", 512}, {"M", 128}, {"N", 128}});
  // Only warpgroup 1's first thread releases (count 1): warpgroup 2 may lag
  // behind in its reads, so the two are explored apart, and the refill of a
  // stage warpgroup 2 still reads is found.
  std::vector<std::string> names = processNames(c);
  CHECK(std::find(names.begin(), names.end(), "warpgroup 1") != names.end());
  CHECK(std::find(names.begin(), names.end(), "warpgroup 2") != names.end());
  ExplorationResult r = exploreSkeleton(c, 200000);
  const ProtocolFinding *f = findKind(r, ProtocolViolationKind::OverwriteWhileRead);
  REQUIRE(f);
  CHECK(f->message.find("refills As stage 0 at k = 4") != std::string::npos);
  bool joined = false;
  for (const ThreadSet &p : together)
    joined = joined || (p.contains(128) && p.contains(256));
  CHECK(joined);
}

TEST_CASE("fallback processes: a ring element no init reaches is a finding at its first use") {
  std::string bug = readSource("tests/lit/bugs/init-array-ring-loop-short.tile");
  ExplorationResult r = exploreSkeleton(unrolled(skeletonOf(bug), kPersistentSizes), 200000);
  const ProtocolFinding *f = findKind(r, ProtocolViolationKind::InitOrder);
  REQUIRE(f);
  CHECK(f->message.find("uses empty[2] before any mbarrier.init of it (no init of the run reaches "
                        "this element)") != std::string::npos);
  // The twin initialises all three: no finding.
  std::string twin = replaced(bug, "for s in 0 .. 2 {", "for s in 0 .. 3 {");
  ExplorationResult clean = exploreSkeleton(unrolled(skeletonOf(twin), kPersistentSizes), 200000);
  CHECK(clean.complete);
  CHECK(clean.findings.empty());
}

TEST_CASE("fallback processes: an init after the CTA barrier races with the first wait") {
  // The Blackwell GEMM with its barriers initialised by warp 0's elected
  // thread, done[0] only after the cta.sync: warp 1 may arrive on it first.
  std::string text = readSource("kernels/gemm_bf16_sm100.tile");
  text = replaced(text, "mbarrier full[2](count = 1), empty[2](count = 1), done(count = 1)",
                  "mbarrier full[2](count = 1), empty[2](count = 1), done[1]");
  text = replaced(text, "  cta.sync()\n  if warpid == 0 {\n    for k",
                  "  cta.sync()\n  if threadIdx.x == 0 {\n    mbarrier.init(done[0], count = 1)\n"
                  "  }\n  if warpid == 0 {\n    for k");
  for (const char *use : {"tcgen05.commit(done)", "mbarrier.wait(done, "})
    text =
        replaced(text, use, std::string(use).replace(std::string(use).find("done"), 4, "done[0]"));
  ExplorationResult r = exploreSkeleton(unrolled(skeletonOf(text), kSm100Sizes), 200000);
  const ProtocolFinding *f = findKind(r, ProtocolViolationKind::InitOrder);
  REQUIRE(f);
  CHECK(f->message.find("uses done[0] before any mbarrier.init of it (an init of it comes later "
                        "in this interleaving") != std::string::npos);
}

TEST_CASE("fallback processes: two warpgroups' halves of Cs are disjoint regions") {
  // The block-scaled FP8 GEMM: warpgroups 1 and 2 differ (named barriers 2
  // and 3), so they are two processes, and each copies its 64 rows into Cs.
  BarrierSkeleton sk = skeletonOf(readSource("kernels/gemm_fp8_blockscaled_sm90.tile"));
  ConcreteSkeleton c = unrolled(sk, {{"K", 128}, {"KB", 1}, {"M", 128}, {"N", 128}, {"NB", 1}});
  std::vector<const ConcreteAccess *> halves;
  for (const ConcreteProcess &p : c.processes)
    for (const ConcreteStep &s : p.steps)
      for (const ConcreteAccess &a : s.accesses)
        if (a.buffer == "Cs" && a.write)
          halves.push_back(&a);
  REQUIRE(halves.size() == 2);
  using Box = std::vector<std::pair<int64_t, int64_t>>;
  CHECK(halves[0]->box == Box{{0, 64}, {0, 128}});
  CHECK(halves[1]->box == Box{{64, 128}, {0, 128}});
  CHECK(!halves[0]->overlaps(*halves[1]));
  // The same halves from one process of both warpgroups would be one region.
  ConcreteAccess whole = *halves[0];
  whole.box = {{0, 128}, {0, 128}};
  CHECK(whole.overlaps(*halves[1]));
}

TEST_CASE("solver budget: 'canceled' is the deadline only when the wall budget is spent") {
  // No budget: no query has a timeout of ours, so neither word is the
  // deadline (an exhausted rlimit, undecided).
  CHECK(!isDeadlineReason("timeout"));
  CHECK(!isDeadlineReason("canceled"));
  BudgetLimits shortLimits;
  shortLimits.wallTimeoutMs = 1;
  Budget spent(shortLimits);
  {
    ActiveBudget scope(spent);
    while (spent.remainingWallMs() > 0) {
    }
    CHECK(isDeadlineReason("canceled"));
    CHECK(isDeadlineReason("timeout"));
  }
  BudgetLimits longLimits;
  longLimits.wallTimeoutMs = 600000;
  Budget ample(longLimits);
  ActiveBudget scope(ample);
  CHECK(!isDeadlineReason("canceled"));
  CHECK(!isDeadlineReason("timeout"));
}
