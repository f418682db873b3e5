// The checked simulation (simulator/Simulate.h): no problem is unknown, never
// a pass; poisoned memory and the uninitialised-read check catch reads before
// writes; a kernel that writes its input is a finding and is compared with the
// reference of the inputs it was given; unwritten outputs are findings, also
// with sampled CTAs (Coverage.h); annotations are recognised in any spacing.
#include "simulator/Simulate.h"
#include "ir/Checker.h"
#include "ir/Parser.h"
#include "simulator/Coverage.h"
#include "simulator/Value.h"

#include <doctest/doctest.h>

#include <cmath>
#include <memory>

using namespace tilescope;
using namespace tilescope::sim;

namespace {

struct Case {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag{sourceMgr, /*printImmediately=*/false};
  Module module;
  std::optional<Program> program;
  std::vector<HostTensor> tensors;
  std::optional<BoundProblem> problem;
  SimulationResult result;
};

// Parses and checks `text`, binds `problem` (none when empty), fills the
// tensors from `seed` and runs the checked simulation.
std::unique_ptr<Case> simulate(const std::string &text, const std::string &problem,
                               ArgValues args = {}, SimulateOptions options = {}) {
  auto c = std::make_unique<Case>();
  c->module = parseModuleText(text, "test.tile", c->diag);
  if (!c->diag.hasErrors())
    checkModule(c->module, c->diag);
  REQUIRE(!c->diag.hasErrors());
  c->program = bindProgram(c->module.kernels.at(0), args, c->diag);
  REQUIRE(c->program);
  c->tensors = allocateTensors(*c->program);
  if (!problem.empty()) {
    ProblemSyntaxError syntax;
    auto spec = parseProblem(problem, &syntax);
    REQUIRE_MESSAGE(spec, syntax.message);
    ProblemError bad;
    c->problem = bindProblem(*spec, *c->program, c->tensors, &bad);
    REQUIRE_MESSAGE(c->problem, bad.message);
  }
  const BoundProblem *bound = c->problem ? &*c->problem : nullptr;
  prepareTensors(c->tensors, bound, 3);
  c->result = simulateChecked(*c->program, bound, c->tensors, options);
  return c;
}

bool hasFinding(const SimulationResult &r, const std::string &kind) {
  for (const SimFinding &f : r.findings)
    if (f.kind == kind)
      return true;
  return false;
}

const char *kCopy = R"(
kernel copy(X: global f32[64], Y: global f32[64])
  launch grid(1) threads(64) target(sm_90a)
{
  Y[threadIdx.x] = X[threadIdx.x]
}
)";

} // namespace

TEST_CASE("simulate: without a problem the verdict is unknown, never a pass") {
  auto c = simulate(kCopy, "");
  CHECK(c->result.verdict == SimVerdict::Unknown);
  CHECK(c->result.exitCode() == 3);
  CHECK(c->result.result == "no reference");
  CHECK(c->result.reason.find("no reference") == 0);
  auto matched = simulate(kCopy, "copy(X -> Y)");
  CHECK(matched->result.verdict == SimVerdict::Proved);
  CHECK(matched->result.exitCode() == 0);
}

TEST_CASE("simulate: a kernel that writes nothing is a finding") {
  auto c = simulate(R"(
kernel nothing(X: global f32[64], Y: global f32[64])
  launch grid(1) threads(64) target(sm_90a)
{
  let i = threadIdx.x
}
)",
                    "copy(X -> Y)");
  CHECK(c->result.verdict == SimVerdict::Finding);
  CHECK(c->result.result == "unwritten output");
  CHECK(c->result.findings.at(0).message.find("unwritten output Y[0]: 64 of 64") == 0);
}

TEST_CASE("simulate: a read of shared memory before any write is poisoned and reported") {
  const char *text = R"(
kernel early(X: global f32[64], Y: global f32[64])
  launch grid(1) threads(64) target(sm_90a)
{
  shared S: f32[64]
  Y[threadIdx.x] = S[threadIdx.x] + X[threadIdx.x]
}
)";
  auto c = simulate(text, "copy(X -> Y)");
  CHECK(c->result.verdict == SimVerdict::Finding);
  REQUIRE(!c->result.run.stats.uninitializedReads.empty());
  const UninitializedRead &r = c->result.run.stats.uninitializedReads[0];
  CHECK(r.buffer == "S");
  CHECK(r.space == "shared");
  CHECK(r.count == 64);
  CHECK(hasFinding(c->result, "uninitialized read"));
  // Without the shadow check the NaN poison still shows in the values.
  SimulateOptions noShadow;
  noShadow.checkUninitialized = false;
  auto p = simulate(text, "copy(X -> Y)", {}, noShadow);
  CHECK(p->result.verdict == SimVerdict::Finding);
  CHECK(p->result.result == "mismatch");
  CHECK(std::isnan(p->result.outputs.at(0).first.at(0).got));
  // Zero poison with the check off: what the simulator did before (a pass
  // here, since S + X == X), which is why it is not the default.
  noShadow.poison = PoisonPattern::Zero;
  auto z = simulate(text, "copy(X -> Y)", {}, noShadow);
  CHECK(z->result.verdict == SimVerdict::Proved);
}

TEST_CASE("simulate: each CTA's shared memory starts poisoned and unwritten, whatever the last "
          "CTA left") {
  // CTA 0 writes S before reading it; CTA 1 reads it first. The CTAs run one
  // after the other on one thread and hand their storage on, and shared
  // memory is poisoned (and its written marks cleared) when a CTA first
  // touches it (CtaExecutor::readyShared): CTA 1 must see the poison and be
  // reported, never CTA 0's zeros and marks.
  const char *text = R"(
kernel leftover(X: global f32[128], Y: global f32[128])
  launch grid(2) threads(64) target(sm_90a)
{
  shared S: f32[64]
  if blockIdx.x == 0 {
    S[threadIdx.x] = 0.0
  }
  Y[blockIdx.x * 64 + threadIdx.x] = S[threadIdx.x] + X[blockIdx.x * 64 + threadIdx.x]
}
)";
  auto c = simulate(text, "copy(X -> Y)");
  CHECK(c->result.verdict == SimVerdict::Finding);
  REQUIRE(c->result.run.stats.uninitializedReads.size() == 1);
  CHECK(c->result.run.stats.uninitializedReads[0].buffer == "S");
  CHECK(c->result.run.stats.uninitializedReads[0].count == 64); // CTA 1's reads only
  SimulateOptions noShadow;
  noShadow.checkUninitialized = false;
  auto p = simulate(text, "copy(X -> Y)", {}, noShadow);
  CHECK(p->result.result == "mismatch");
  const auto &mismatches = p->result.outputs.at(0).first;
  REQUIRE(!mismatches.empty());
  for (const auto &m : mismatches)
    CHECK(std::isnan(m.got));
  CHECK(p->result.outputs.at(0).mismatches == 64); // CTA 0's outputs match
}

TEST_CASE("simulate: a register tile read before it is filled is poisoned") {
  const char *text = R"(
kernel acc(X: global f32[64], Y: global f32[64])
  launch grid(1) threads(64) target(sm_90a)
{
  reg a: f32[1]
  a[0] = a[0] + X[threadIdx.x]
  Y[threadIdx.x] = a[0]
}
)";
  for (PoisonPattern p :
       {PoisonPattern::Nan, PoisonPattern::Big, PoisonPattern::NegBig, PoisonPattern::Random}) {
    SimulateOptions o;
    o.poison = p;
    auto c = simulate(text, "copy(X -> Y)", {}, o);
    CHECK_MESSAGE(c->result.verdict == SimVerdict::Finding, poisonName(p));
  }
}

TEST_CASE("simulate: writing an input is a finding; the reference reads the inputs as given") {
  auto c = simulate(R"(
kernel zeroes(X: global f32[64], Y: global f32[64])
  launch grid(1) threads(64) target(sm_90a)
{
  X[threadIdx.x] = 0.0
  Y[threadIdx.x] = X[threadIdx.x]
}
)",
                    "copy(X -> Y)");
  CHECK(c->result.verdict == SimVerdict::Finding);
  REQUIRE(c->result.inputChanges.size() == 1);
  CHECK(c->result.inputChanges[0].name == "X");
  CHECK(c->result.inputChanges[0].changed == 64);
  CHECK(c->result.inputChanges[0].after == 0);
  // Compared with the copy taken before the run: Y = 0 is a mismatch.
  CHECK(c->result.outputs.at(0).mismatches == 64);
}

TEST_CASE("simulate: storing into an input is a finding even when its values end as they were") {
  // Each thread stores back the element it read (an input used as scratch
  // and restored writes it all the same): values unchanged, 64 written.
  auto c = simulate(R"(
kernel restores(X: global f32[64], Y: global f32[64])
  launch grid(1) threads(64) target(sm_90a)
{
  reg v: f32[1]
  v[0] = X[threadIdx.x]
  X[threadIdx.x] = v[0]
  Y[threadIdx.x] = v[0]
}
)",
                    "copy(X -> Y)");
  CHECK(c->result.verdict == SimVerdict::Finding);
  REQUIRE(c->result.inputChanges.size() == 1);
  CHECK(c->result.inputChanges[0].name == "X");
  CHECK(c->result.inputChanges[0].changed == 0);
  CHECK(c->result.inputChanges[0].written == 64);
  CHECK(c->result.outputs.at(0).mismatches == 0);
  // The copy kernel that writes only Y has no input change.
  auto ok = simulate(R"(
kernel copies(X: global f32[64], Y: global f32[64])
  launch grid(1) threads(64) target(sm_90a)
{
  Y[threadIdx.x] = X[threadIdx.x]
}
)",
                     "copy(X -> Y)");
  CHECK(ok->result.verdict == SimVerdict::Proved);
  CHECK(ok->result.inputChanges.empty());
}

TEST_CASE("simulate: CTA sampling checks the sampled CTAs' tiles for unwritten elements") {
  const char *text = R"(
kernel rows(X: global f32[64, 32], Y: global f32[64, 32])
  launch grid(4, 4) threads(128) target(sm_90a)
{
  let r = blockIdx.y * 16 + threadIdx.x / 8
  let c = blockIdx.x * 8 + threadIdx.x % 8
  if threadIdx.x / 8 < 15 {
    Y[r, c] = X[r, c]
  }
}
)";
  SimulateOptions o;
  o.ctas = sampleCtas({4, 4, 1}, 2, 1);
  auto c = simulate(text, "copy(X -> Y)", {}, o);
  CHECK(!c->result.allCtas);
  CHECK(c->result.verdict == SimVerdict::Finding);
  const OutputReport &y = c->result.outputs.at(0);
  CHECK(y.sampledTile == std::vector<int64_t>{16, 8});
  CHECK(y.regionElements == 2 * 16 * 8);
  CHECK(y.regionUnwritten == 2 * 8);
  CHECK(y.firstRegionUnwritten.at(0) == 15 * 32);
}

TEST_CASE("simulate: sampled scalars stay in their documented ranges") {
  llvm::SourceMgr sm;
  Diagnostics diag(sm, false);
  Module m = parseModuleText("kernel k(X: global f32[4], eps: f32, scale: f32, Y: global f32[4]) "
                             "launch grid(1) threads(32) target(sm_80) { }",
                             "t.tile", diag);
  REQUIRE(!diag.hasErrors());
  for (uint64_t seed = 1; seed < 50; ++seed) {
    ArgValues args;
    auto notes = sampleScalars(m.kernels[0], args, seed);
    CHECK(notes.size() == 2);
    CHECK(args.floats.at("eps") >= 1e-6);
    CHECK(args.floats.at("eps") <= 1e-1);
    CHECK(args.floats.at("scale") >= 0.125);
    CHECK(args.floats.at("scale") <= 2.0);
  }
  // A signed scalar (a gemm's alpha) is positive in the top stratum,
  // negative in the bottom one, of either sign over the whole range; eps
  // stays positive even when named signed.
  bool positive = false, negative = false;
  for (uint64_t seed = 1; seed < 50; ++seed) {
    for (ScalarStratum stratum :
         {ScalarStratum::Top, ScalarStratum::Bottom, ScalarStratum::Whole}) {
      ArgValues args;
      sampleScalars(m.kernels[0], args, seed, stratum, {"scale", "eps"});
      double v = args.floats.at("scale");
      CHECK(std::fabs(v) >= 0.125);
      CHECK(std::fabs(v) <= 2.0);
      CHECK(args.floats.at("eps") > 0);
      if (stratum == ScalarStratum::Top)
        CHECK(v > 0);
      if (stratum == ScalarStratum::Bottom)
        CHECK(v < 0);
      if (stratum == ScalarStratum::Whole)
        (v > 0 ? positive : negative) = true;
    }
  }
  CHECK(positive);
  CHECK(negative);
  CHECK(signedScalars(*parseProblem("gemm(A, B^T -> C, alpha = s)", nullptr)) ==
        std::set<std::string>{"s"});
  CHECK(signedScalars(*parseProblem("attention(Q, K, V -> O, scale = s)", nullptr)).empty());
  CHECK(signedScalars(*parseProblem("scale(X, s -> Y)", nullptr)) == std::set<std::string>{"s"});
  ArgValues given;
  given.floats["eps"] = 0.5;
  CHECK(sampleScalars(m.kernels[0], given, 1).size() == 1);
  CHECK(given.floats.at("eps") == 0.5);
  CHECK(freshSeed() != freshSeed());
}

TEST_CASE("problem: annotations in any spacing and case; near misses are reported") {
  std::string source = "//problem: softmax(X -> Y)\n"
                       "kernel a(X: global f32[4]) {}\n"
                       "// Problem :  gemm(A, B -> C)  \n"
                       "kernel b(A: global f32[4]) {}\n"
                       "// problem gemm(A, B -> C)\n"
                       "kernel c(A: global f32[4]) {}\n"
                       "// problems: gemm(A, B -> C)\n"
                       "kernel d(A: global f32[4]) {}\n"
                       "// the problem is hard\n"
                       "kernel e(A: global f32[4]) {}\n";
  auto a = findProblemAnnotation(source, "a");
  REQUIRE(a);
  CHECK(a->text == "softmax(X -> Y)");
  CHECK(source.substr(a->offset, 7) == "softmax");
  auto b = findProblemAnnotation(source, "b");
  REQUIRE(b);
  CHECK(b->text == "gemm(A, B -> C)");
  std::vector<size_t> misses;
  CHECK(!findProblemAnnotation(source, "c", &misses));
  REQUIRE(misses.size() == 1);
  CHECK(source.substr(misses[0], 17) == "// problem gemm(A");
  CHECK(!findProblemAnnotation(source, "d", &misses));
  CHECK(misses.size() == 1);
  CHECK(!findProblemAnnotation(source, "e", &misses));
  CHECK(misses.empty());
}

TEST_CASE("simulate: a tcgen05.ld of tensor memory nothing stored is an uninitialised read") {
  // The twin stores X first (tcgen05.st); the bug loads the freshly
  // allocated columns straight away.
  std::string text = R"(
kernel tmem_early(X: global f32[128, 32], Y: global f32[128, 32])
  launch grid(1) threads(128) target(sm_100a)
{
  tmem acc: f32[128, 32] layout(tmem_m128(32))
  reg frag: f32[128, 32] layout(tcgen05_32x32b(32))
  if warpid == 0 {
    tcgen05.alloc(acc, cols = 32)
  }
  cta.sync()
  warp.copy(frag[warpid * 32 : +32, :], X[warpid * 32 : +32, :])
  STORE
  tcgen05.ld(frag[warpid * 32 : +32, :], acc[warpid * 32 : +32, :], shape = "32x32b")
  tcgen05.wait_ld()
  warp.copy(Y[warpid * 32 : +32, :], frag[warpid * 32 : +32, :])
  cta.sync()
  if warpid == 0 {
    tcgen05.dealloc(acc)
  }
}
)";
  auto with = [&](const std::string &store) {
    std::string t = text;
    t.replace(t.find("STORE"), 5, store);
    return t;
  };
  auto bug = simulate(with("let nothing = 0"), "copy(X -> Y)");
  CHECK(bug->result.verdict == SimVerdict::Finding);
  REQUIRE(!bug->result.run.stats.uninitializedReads.empty());
  CHECK(bug->result.run.stats.uninitializedReads[0].space == "tmem");
  CHECK(bug->result.run.stats.uninitializedReads[0].buffer == "acc");
  CHECK(bug->result.run.stats.uninitializedReads[0].count == 128 * 32);
  auto fixed = simulate(
      with("tcgen05.st(acc[warpid * 32 : +32, :], frag[warpid * 32 : +32, :], shape = \"32x32b\")"),
      "copy(X -> Y)");
  CHECK(fixed->result.run.stats.uninitializedReads.empty());
  CHECK(fixed->result.verdict == SimVerdict::Proved);
}
