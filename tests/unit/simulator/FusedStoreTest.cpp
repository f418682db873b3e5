// The scalar fast paths (fused store statements, uniform loop stepping, fused
// loops) against
// the general evaluator: every kernel here runs twice on the same inputs, with
// EngineOptions::scalarFastPaths on and off, and the two runs must agree on
// every output bit, every written flag, the statistics and the diagnostics.
// The kernels aim at what the fast path could get wrong: divergent and
// partial warps, offsets reused across iterations while a slot changes,
// aliasing between a store and its operands, every multiply-add variant and
// out-of-range subscripts (uniform and varying).
#include "ir/Checker.h"
#include "ir/Parser.h"
#include "simulator/Engine.h"
#include "simulator/ExprCode.h"
#include "simulator/Value.h"

#include <doctest/doctest.h>

#include <fmt/format.h>

#include <random>

using namespace tilescope;
using namespace tilescope::sim;

namespace {

struct Bound {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag{sourceMgr, /*printImmediately=*/false};
  Module module;
  std::optional<Program> program;
};

std::unique_ptr<Bound> bind(const std::string &text, ArgValues args) {
  auto b = std::make_unique<Bound>();
  b->module = parseModuleText(text, "fused.tile", b->diag);
  if (!b->diag.hasErrors())
    checkModule(b->module, b->diag);
  REQUIRE(!b->diag.hasErrors());
  b->program = bindProgram(b->module.kernels.at(0), args, b->diag);
  REQUIRE(b->program);
  return b;
}

struct Outcome {
  RunResult result;
  std::vector<HostTensor> tensors;
};

// Inputs: random values, then `special` f32 bit patterns from element 0 of
// every tensor on.
Outcome runWith(Bound &b, bool fast, const std::vector<uint32_t> &special, uint64_t seed = 1) {
  Outcome o;
  o.tensors = allocateTensors(*b.program);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> dist(-4, 4);
  for (HostTensor &t : o.tensors) {
    for (int64_t i = 0; i < t.elements(); ++i)
      t.setBits(i, encodeFloat(t.dtype, dist(rng)));
    for (size_t i = 0; i < special.size() && static_cast<int64_t>(i) < t.elements(); ++i)
      t.setBits(static_cast<int64_t>(i), special[i]);
  }
  EngineOptions options;
  options.scalarFastPaths = fast;
  options.seed = seed;
  options.where = [&b](llvm::SMLoc loc) {
    auto [line, col] = b.sourceMgr.getLineAndColumn(loc);
    return fmt::format("fused.tile:{}:{}", line, col);
  };
  o.result = runProgram(*b.program, o.tensors, options);
  return o;
}

// Runs `text` both ways (with the scheduler's `seed`) and checks that they
// agree; returns the fast run.
Outcome agree(const std::string &text, ArgValues args = {},
              const std::vector<uint32_t> &special = {}, uint64_t seed = 1) {
  auto b = bind(text, std::move(args));
  Outcome fast = runWith(*b, true, special, seed), general = runWith(*b, false, special, seed);
  CHECK(fast.result.outcome == general.result.outcome);
  CHECK(fast.result.message == general.result.message);
  CHECK(fast.result.stats.laneOps == general.result.stats.laneOps);
  CHECK(fast.result.stats.steps == general.result.stats.steps);
  CHECK(fast.result.stats.stepsPerWarp == general.result.stats.stepsPerWarp);
  CHECK(fast.result.stats.globalBytesRead == general.result.stats.globalBytesRead);
  CHECK(fast.result.stats.globalBytesWritten == general.result.stats.globalBytesWritten);
  REQUIRE(fast.tensors.size() == general.tensors.size());
  for (size_t t = 0; t < fast.tensors.size(); ++t) {
    INFO("tensor " << fast.tensors[t].name);
    CHECK(fast.tensors[t].bytes == general.tensors[t].bytes);
    CHECK(fast.tensors[t].written == general.tensors[t].written);
  }
  return fast;
}

// The same with several seeds: the scheduler's quanta end at other
// statements, so a fused loop starts and stops at other iterations.
Outcome agreeSeeds(const std::string &text, ArgValues args = {},
                   const std::vector<uint32_t> &special = {}) {
  Outcome o;
  for (uint64_t seed : {1, 2, 3, 11, 12345}) {
    INFO("seed " << seed);
    o = agree(text, args, special, seed);
  }
  return o;
}

// How many loops of the kernel body the compiler marked as fused loops.
int fusedLoops(const std::string &text, ArgValues args = {}) {
  auto b = bind(text, std::move(args));
  int n = 0;
  for (const auto &[block, stmts] : b->program->code->blocks)
    for (const StmtCode &s : stmts)
      n += s.fusedBody;
  return n;
}

// How many store statements of the kernel body the compiler fused.
int fusedStores(const std::string &text, ArgValues args = {}) {
  auto b = bind(text, std::move(args));
  int n = 0;
  for (const auto &[block, stmts] : b->program->code->blocks)
    for (const StmtCode &s : stmts)
      n += s.fused.shape != FusedStore::Shape::None;
  return n;
}

const char *kGemm = R"(
kernel gemm(A: global f32[M, K], B: global f32[K, N], C: global f32[M, N])
  launch grid(N / 16, M / 16) threads(256) target(sm_80)
{
  reg acc: f32[1]
  let i = blockIdx.y * 16 + threadIdx.x / 16
  let j = blockIdx.x * 16 + threadIdx.x % 16
  acc[0] = 0.0
  for k in 0 .. K {
    acc[0] = acc[0] + A[i, k] * B[k, j]
  }
  C[i, j] = acc[0]
}
)";

} // namespace

TEST_CASE("fused stores: the naive GEMM gives the general path's bits") {
  ArgValues args{{{"M", 32}, {"N", 48}, {"K", 24}}, {}};
  CHECK(fusedStores(kGemm, args) == 3); // the zero fill, the multiply-add, the copy out
  Outcome o = agree(kGemm, args);
  REQUIRE(o.result.ok());
  // And they are the sums themselves: one fmaf chain in k order.
  const HostTensor &a = o.tensors[0], &b = o.tensors[1], &c = o.tensors[2];
  for (int64_t i : {0, 17, 31})
    for (int64_t j : {0, 5, 47}) {
      float acc = 0;
      for (int64_t k = 0; k < 24; ++k)
        acc = std::fmaf(static_cast<float>(decodeFloat(Dtype::f32, a.bitsAt(i * 24 + k))),
                        static_cast<float>(decodeFloat(Dtype::f32, b.bitsAt(k * 48 + j))), acc);
      CHECK(c.bitsAt(i * 48 + j) == std::bit_cast<uint32_t>(acc));
    }
}

TEST_CASE("fused stores: divergent lanes, partial warps and per-lane trip counts") {
  agree(R"(
kernel diverge(A: global f32[64, 8], C: global f32[64, 8])
  launch grid(1) threads(48) target(sm_80)
{
  reg r: f32[4]
  r[0] = A[threadIdx.x, 0]
  r[1] = A[threadIdx.x, 1]
  if laneid % 3 != 1 {
    for k in 0 .. laneid % 5 + 1 {
      let q = k % 4
      r[q] = r[q] * A[threadIdx.x, k]
      C[threadIdx.x, k] = r[q] - A[threadIdx.x + 1, 7 - k]
    }
  }
  for k in 0 .. 8 {
    if laneid < k * 4 {
      C[threadIdx.x + 16, k] = A[threadIdx.x, k] / r[1]
    }
  }
}
)");
}

TEST_CASE("fused stores: offsets follow a slot rewritten in every iteration") {
  agree(R"(
kernel shifting(A: global f32[8, 32], C: global f32[8, 32])
  launch grid(1) threads(64) target(sm_80)
{
  for k in 0 .. 8 {
    let i = (laneid + k * 3) % 32
    C[k, laneid] = A[k, 31 - i] + A[7 - k, i]
  }
}
)");
}

TEST_CASE("fused stores: every multiply-add form and a store that reads its own tensor") {
  agree(R"(
kernel forms(A: global f32[32], B: global f32[32], C: global f32[32, 4])
  launch grid(1) threads(32) target(sm_80)
{
  reg acc: f32[2]
  acc[0] = A[laneid]
  acc[1] = B[laneid]
  acc[0] = acc[0] - A[laneid] * B[31 - laneid]
  acc[1] = A[laneid] * B[laneid] - acc[1]
  let next = (laneid + 1) % 32
  acc[0] = A[next] * acc[1] + acc[0]
  C[laneid, 0] = acc[0]
  C[laneid, 1] = acc[1] * acc[0]
  C[laneid, 2] = C[31 - laneid, 0] + C[laneid, 1]
  C[31 - laneid, 3] = C[laneid, 2]
}
)");
}

TEST_CASE("fused stores: out-of-range subscripts report as the general path does") {
  // A varying subscript out of range in some lanes.
  Outcome o = agree(R"(
kernel varying(A: global f32[32, 4], C: global f32[32, 4])
  launch grid(1) threads(32) target(sm_80)
{
  for k in 0 .. 4 {
    C[laneid, k] = A[laneid + k, k]
  }
}
)");
  CHECK(o.result.outcome == RunResult::Outcome::RuntimeError);
  CHECK(o.result.message.find("index 32 is out of range for dimension 0 of 'A'") !=
        std::string::npos);
  // A uniform subscript (the loop counter) out of range in every lane.
  o = agree(R"(
kernel uniform(A: global f32[32, 4], C: global f32[32, 8])
  launch grid(1) threads(32) target(sm_80)
{
  for k in 0 .. 8 {
    C[laneid, k] = A[laneid, k]
  }
}
)");
  CHECK(o.result.outcome == RunResult::Outcome::RuntimeError);
  CHECK(o.result.message.find("index 4 is out of range for dimension 1 of 'A'") !=
        std::string::npos);
  // Out of range in the target only, in a partial warp.
  o = agree(R"(
kernel target(A: global f32[40], C: global f32[40])
  launch grid(1) threads(40) target(sm_80)
{
  C[threadIdx.x + 1] = A[threadIdx.x]
}
)");
  CHECK(o.result.outcome == RunResult::Outcome::RuntimeError);
}

TEST_CASE("fused stores: warp-uniform values are the ones every lane computes") {
  const char *kernel = R"(
kernel uniformity(A: global f32[64, 64], C: global f32[64, 64])
  launch grid(2) threads(64) target(sm_80)
{
  let u = blockIdx.x * 8 + warpid
  let v = laneid + u
  for k in 0 .. u + 1 {
    C[v, k] = A[u, k]
  }
  for k in 0 .. laneid {
    C[k, u] = A[u, k]
  }
}
)";
  auto b = bind(kernel, {});
  const KernelCode &code = *b->program->code;
  int uniformLoops = 0, loops = 0;
  for (const auto &[block, stmts] : code.blocks)
    for (const StmtCode &s : stmts)
      if (s.end >= 0) {
        ++loops;
        uniformLoops += s.uniformLoop;
      }
  CHECK(loops == 2);
  CHECK(uniformLoops == 1); // 0 .. u + 1, not 0 .. laneid
  agree(kernel);
}

TEST_CASE("integer division by powers of two and warp-uniform operations truncate as C does") {
  // Negative and positive dividends, divisors that are powers of two (the
  // shift path of binaryInto) and others, uniform operands (computed in one
  // lane and copied) and a divergent warp.
  const char *kernel = R"(
kernel divisions(C: global i32[7, 64])
  launch grid(1) threads(64) target(sm_80)
{
  let x = threadIdx.x - 37
  let u = warpid * 7 - 9
  C[0, threadIdx.x] = x / 4
  C[1, threadIdx.x] = x % 8
  C[2, threadIdx.x] = x / 3 * 100 + x % 3
  C[3, threadIdx.x] = u / 4 * 100 + u % 4
  C[4, threadIdx.x] = (u - 64) / 16 * 100 + x / 1 + x % 1
  C[6, threadIdx.x] = x / 64 * 100 + x % 64
  if laneid % 3 == 1 {
    C[5, threadIdx.x] = x / 2 * 100 + x % 2
  }
}
)";
  Outcome o = agree(kernel);
  REQUIRE(o.result.ok());
  const HostTensor &c = o.tensors[0];
  auto at = [&](int64_t row, int64_t t) {
    return static_cast<int64_t>(static_cast<int32_t>(c.bitsAt(row * 64 + t)));
  };
  for (int64_t t = 0; t < 64; ++t) {
    INFO("thread " << t);
    const int64_t x = t - 37, u = t / 32 * 7 - 9;
    CHECK(at(0, t) == x / 4);
    CHECK(at(1, t) == x % 8);
    CHECK(at(2, t) == x / 3 * 100 + x % 3);
    CHECK(at(3, t) == u / 4 * 100 + u % 4);
    CHECK(at(4, t) == (u - 64) / 16 * 100 + x);
    CHECK(at(6, t) == x / 64 * 100 + x % 64);
    if (t % 32 % 3 == 1)
      CHECK(at(5, t) == x / 2 * 100 + x % 2);
  }
}

TEST_CASE("fused stores: NaNs, infinities and signed zeros as the general path carries them") {
  // A signalling NaN (quieted by the general path's conversions), a quiet NaN
  // with a payload, both infinities, both zeros, the smallest subnormal.
  const std::vector<uint32_t> special = {0x7F800001u, 0xFFC12345u, 0x7F800000u, 0xFF800000u,
                                         0x00000000u, 0x80000000u, 0x00000001u, 0x7FA00000u};
  Outcome o = agree(R"(
kernel specials(A: global f32[32], B: global f32[32], C: global f32[32, 4])
  launch grid(1) threads(32) target(sm_80)
{
  reg r: f32[1]
  r[0] = A[laneid]
  C[laneid, 0] = A[laneid]
  C[laneid, 1] = r[0]
  C[laneid, 2] = A[laneid] * B[laneid]
  C[laneid, 3] = C[laneid, 2] + A[laneid] * B[31 - laneid]
}
)",
                    {}, special);
  REQUIRE(o.result.ok());
  // The copy of the signalling NaN is quiet, with its payload.
  CHECK(o.tensors[2].bitsAt(0 * 4 + 0) == 0x7FC00001u);
  CHECK(o.tensors[2].bitsAt(0 * 4 + 1) == 0x7FC00001u);
  CHECK(o.tensors[2].bitsAt(5 * 4 + 0) == 0x80000000u);
}

TEST_CASE("fused stores: literals and f32 scalars round to f32 next to an f32 operand") {
  const std::string text = R"(
kernel scaled(A: global f32[32], B: global f32[32], C: global f32[32, 8], alpha: f32)
  launch grid(1) threads(32) target(sm_80)
{
  reg r: f32[1]
  r[0] = 0.1
  C[laneid, 0] = A[laneid] * 0.1
  C[laneid, 1] = 1.0e-3 - B[laneid]
  C[laneid, 2] = alpha * A[laneid] + B[laneid]
  C[laneid, 3] = A[laneid] * B[laneid] - 0.3
  C[laneid, 4] = 2.5 * A[laneid] + 0.7
  C[laneid, 5] = r[0] / alpha
  C[laneid, 6] = 3.0e38
  C[laneid, 7] = 0.5 * 0.25
}
)";
  ArgValues args{{}, {{"alpha", 1.0 / 3.0}}};
  // Every store but the last (two literals: double-precision arithmetic).
  CHECK(fusedStores(text, args) == 8);
  Outcome o = agree(text, args);
  REQUIRE(o.result.ok());
  // 0.1 as an f32, not as a double rounded after the product.
  const float a0 = std::bit_cast<float>(static_cast<uint32_t>(o.tensors[0].bitsAt(0)));
  CHECK(o.tensors[2].bitsAt(0) == std::bit_cast<uint32_t>(a0 * 0.1f));
}

// --- fused loops (simulator/FusedLoop.cpp) ------------------------------------

TEST_CASE("fused loops: the naive GEMM's inner loop, under several schedules") {
  ArgValues args{{{"M", 32}, {"N", 48}, {"K", 37}}, {}};
  CHECK(fusedLoops(kGemm, args) == 1);
  Outcome o = agreeSeeds(kGemm, args);
  REQUIRE(o.result.ok());
  // 37 iterations of two steps each do not fit one quantum (at most 64 steps).
  const HostTensor &a = o.tensors[0], &b = o.tensors[1], &c = o.tensors[2];
  float acc = 0;
  for (int64_t k = 0; k < 37; ++k)
    acc = std::fmaf(static_cast<float>(decodeFloat(Dtype::f32, a.bitsAt(31 * 37 + k))),
                    static_cast<float>(decodeFloat(Dtype::f32, b.bitsAt(k * 48 + 47))), acc);
  CHECK(c.bitsAt(31 * 48 + 47) == std::bit_cast<uint32_t>(acc));
}

TEST_CASE("fused loops: every accumulating form, with the register as each operand") {
  const std::string text = R"(
kernel accumulate(A: global f32[32, 40], B: global f32[40, 32], C: global f32[32, 9])
  launch grid(1) threads(32) target(sm_80)
{
  reg acc: f32[9]
  for q in 0 .. 9 {
    acc[q] = A[laneid, q]
  }
  for k in 0 .. 40 {
    acc[0] = acc[0] + A[laneid, k] * B[k, laneid]
  }
  for k in 0 .. 40 {
    acc[1] = A[laneid, k] * B[k, laneid] - acc[1]
  }
  for k in 0 .. 40 {
    acc[2] = acc[2] * A[laneid, k] - B[k, laneid]
  }
  for k in 0 .. 40 {
    acc[3] = A[laneid, k] * acc[3] + B[k, 31 - laneid]
  }
  for k in 1 .. 40 step 3 {
    acc[4] = acc[4] * 0.5 + A[laneid, k]
  }
  for k in 0 .. 40 {
    acc[5] = acc[5] + A[laneid, k]
  }
  for k in 0 .. 40 {
    acc[6] = B[k, laneid] - acc[6]
  }
  for k in 0 .. 40 {
    acc[7] = acc[7] * A[laneid, k]
  }
  for k in 0 .. 40 {
    acc[8] = A[31 - laneid, k] / acc[8]
  }
  for q in 0 .. 9 {
    C[laneid, q] = acc[q]
  }
}
)";
  CHECK(fusedLoops(text) == 11);
  // NaNs and infinities among the inputs (A's first row, B's first row).
  agreeSeeds(text, {}, {0x7F800001u, 0xFFC12345u, 0x7F800000u, 0xFF800000u, 0x80000000u});
}

TEST_CASE("fused loops: bodies of several stores, global targets, registers read by others") {
  agreeSeeds(R"(
kernel several(A: global f32[64, 24], B: global f32[24, 64], C: global f32[64, 24])
  launch grid(1) threads(64) target(sm_80)
{
  reg r: f32[3]
  r[0] = 1.0
  r[1] = 0.0
  for k in 2 .. 23 step 2 {
    r[0] = r[0] * A[threadIdx.x, k] + B[k, threadIdx.x]
    C[threadIdx.x, k] = r[0] - A[threadIdx.x, k - 1]
    r[1] = r[0] * B[k + 1, threadIdx.x]
    C[63 - threadIdx.x, k + 1] = C[threadIdx.x, k] + r[1]
  }
  r[2] = 0.0
  for k in 0 .. 24 {
    r[2] = r[2] + C[threadIdx.x, k]
  }
  C[threadIdx.x, 0] = r[2]
}
)");
}

TEST_CASE("fused loops: partial warps, divergent lanes and nested loops") {
  agreeSeeds(R"(
kernel nested(A: global f32[48, 30], B: global f32[30, 48], C: global f32[48, 4])
  launch grid(1) threads(48) target(sm_80)
{
  reg acc: f32[4]
  if laneid % 3 != 1 {
    for q in 0 .. 4 {
      acc[q] = 0.0
      for k in q .. 30 {
        acc[q] = acc[q] + A[threadIdx.x, k] * B[k, 47 - threadIdx.x]
      }
      C[threadIdx.x, q] = acc[q]
    }
  }
}
)");
}

TEST_CASE("fused loops: a counter leaving a subscript's range stops before that iteration") {
  const std::string text = R"(
kernel overrun(A: global f32[32, 20], C: global f32[32])
  launch grid(1) threads(64) target(sm_80)
{
  reg acc: f32[1]
  acc[0] = 0.0
  for k in 0 .. 26 {
    acc[0] = acc[0] + A[laneid, k]
  }
  C[laneid] = acc[0]
}
)";
  CHECK(fusedLoops(text) == 1);
  for (uint64_t seed : {1, 5, 9}) {
    Outcome o = agree(text, {}, {}, seed);
    CHECK(o.result.outcome == RunResult::Outcome::RuntimeError);
    CHECK(o.result.message.find("index 20 is out of range for dimension 1 of 'A'") !=
          std::string::npos);
  }
}

TEST_CASE("fused loops: loops the fused loop leaves to the statements") {
  // The counter in a varying subscript, a let in the body, a counter in an
  // evaluated uniform subscript: not fused loops, and still the same bits.
  const std::string text = R"(
kernel others(A: global f32[32, 40], C: global f32[32, 40])
  launch grid(1) threads(32) target(sm_80)
{
  reg acc: f32[1]
  acc[0] = 0.0
  for k in 0 .. 8 {
    acc[0] = acc[0] + A[laneid, k + laneid]
  }
  for k in 0 .. 8 {
    let t = k * 2
    acc[0] = acc[0] + A[laneid, t]
  }
  for k in 0 .. 8 {
    acc[0] = acc[0] + A[laneid, k * 3]
  }
  C[laneid, 0] = acc[0]
}
)";
  CHECK(fusedLoops(text) == 0);
  agreeSeeds(text);
}

TEST_CASE("f32 operations with NaN operands give the first NaN operand, on every path") {
  // Lane 0 reads two different NaNs: A[0] and B[1] (Lanes.h, firstNaN).
  const uint32_t nanA = 0x7FC01111u, nanB = 0xFFC22222u;
  const std::string text = R"(
kernel nans(A: global f32[32], B: global f32[32], C: global f32[32, 5])
  launch grid(1) threads(32) target(sm_80)
{
  reg acc: f32[1]
  let next = (laneid + 1) % 32
  C[laneid, 0] = A[laneid] + B[next]
  C[laneid, 1] = B[next] * A[laneid]
  C[laneid, 2] = A[laneid] * B[next] + B[next]
  C[laneid, 3] = B[next] - A[laneid] * B[next]
  acc[0] = B[next]
  for k in 0 .. 3 {
    acc[0] = acc[0] * A[laneid] - B[next]
  }
  C[laneid, 4] = acc[0]
}
)";
  CHECK(fusedLoops(text) == 1);
  // A[0] and B[0] get nanA, A[1] and B[1] get nanB.
  Outcome o = agreeSeeds(text, {}, {nanA, nanB});
  REQUIRE(o.result.ok());
  const HostTensor &c = o.tensors[2];
  CHECK(c.bitsAt(0) == nanA); // A + B: the left operand's
  CHECK(c.bitsAt(1) == nanB); // B * A: the left operand's
  CHECK(c.bitsAt(2) == nanB); // p * q + r with p = A, q = r = B: q's
  CHECK(c.bitsAt(3) == nanB); // r - p * q, the same operands: q's
  CHECK(c.bitsAt(4) == nanA); // acc * A - B, acc holding B's: q's (A's), every iteration
}

// Register tiles with a layout (FusedAccess::owned): each lane's element is
// the register its own thread holds it in (filled and read out by the general
// path, so a wrong register shows). The accumulator's subscripts read
// only the uniform counters (offsets kept by value), the part's read a varying
// let (offsets kept by slot version); lanes off the layout's owner fail as the
// general path reports it. Operands computed from registers (`s[0] * s[2]`)
// are evaluated by the fused pass, which declines when they are no f32 (the
// general path then does not contract) and fails as the general path does.
TEST_CASE("fused stores: register tiles with a layout, owned by each lane's thread") {
  const char *body = R"(
kernel owned(A: global f32[64, 16], S: global f32[8], C: global f32[64, 16],
             D: global f32[64, 16])
  launch grid(1) threads(128) target(sm_90a)
{
  reg acc: f32[64, 16] layout(wgmma_acc(64, 16))
  reg part: f32[64, 16] layout(wgmma_acc(64, 16))
  reg s: f32[3]
  wg.fill(part, 1.0)
  s[0] = S[1]
  s[1] = S[2]
  s[2] = S[3]
  for j in 0 .. 8 {
    let r = warpid % 4 * 16 + laneid / 4 % 8 + j / 4 % 2 * 8
    let c = laneid % 4 * 2 + j / 2 % 2 * 8 + j % 2
    acc[r, c] = abs(A[(r + 1) % 64, c])
  }
  for k in 0 .. 3 {
    for j in 0 .. 8 {
      let r = warpid % 4 * 16 + laneid / 4 % 8 + j / 4 % 2 * 8
      let c = laneid % 4 * 2 + j / 2 % 2 * 8 + j % 2
      if laneid < LIVE {
        part[r, c] = A[r, c] * S[j]
      }
      acc[warpid % 4 * 16 + laneid / 4 % 8 + j / 4 % 2 * 8, laneid % 4 * 2 + j / 2 % 2 * 8 + j % 2] = part[r, c] * S[(j + k) % 8] + acc[warpid % 4 * 16 + laneid / 4 % 8 + j / 4 % 2 * 8, laneid % 4 * 2 + j / 2 % 2 * 8 + j % 2]
      acc[r, c] = part[r, c] * (s[j % 4 / 2] * s[2]) + acc[r, c]
      acc[r, c] = part[r, c] * (2 * 3) + acc[r, c]
      part[r, c] = acc[r, c] * (part[r, (c + SHIFT) % 16] * 0.0) - part[r, c]
      C[r, c] = acc[r, (c + SHIFT) % 16]
    }
  }
  for j in 0 .. 8 {
    let r = warpid % 4 * 16 + laneid / 4 % 8 + j / 4 % 2 * 8
    let c = laneid % 4 * 2 + j / 2 % 2 * 8 + j % 2
    D[r, c] = abs(acc[r, c])
  }
}
)";
  auto text = [&](int live, int shift) {
    std::string t = body;
    t.replace(t.find("LIVE"), 4, std::to_string(live));
    for (size_t at; (at = t.find("SHIFT")) != std::string::npos;)
      t.replace(at, 5, std::to_string(shift));
    return t;
  };
  CHECK(fusedStores(text(32, 0)) == 9);
  for (int live : {32, 20}) {
    INFO("live lanes " << live);
    Outcome o = agreeSeeds(text(live, 0));
    CHECK(o.result.outcome == RunResult::Outcome::Completed);
    // NaN, -0 and infinity in A's and S's first elements (S feeds `s`).
    o = agree(text(live, 0), {}, {0x7FC00001u, 0x80000000u, 0x7F800000u});
    CHECK(o.result.outcome == RunResult::Outcome::Completed);
  }
  // Column c + 1 of a pair is in the same thread, c + 2 is not.
  Outcome o = agree(text(32, 2));
  CHECK(o.result.outcome == RunResult::Outcome::RuntimeError);
  CHECK(o.result.message.find("layout places that element on none of them") != std::string::npos);
}
