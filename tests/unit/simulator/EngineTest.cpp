// The execution engine on tiny kernels with exact expectations: divergence
// masks, per-lane loop trip counts, swizzled shared memory, TMA transaction
// accounting, mbarrier errors and deadlock reports that name the warp, the
// source location and the barrier state.
#include "simulator/Engine.h"
#include "ir/Budget.h"
#include "ir/Checker.h"
#include "ir/Parser.h"
#include "simulator/Value.h"

#include <doctest/doctest.h>

#include <fmt/format.h>

#include <chrono>
#include <memory>

using namespace tilescope;
using namespace tilescope::sim;

namespace {

struct Sim {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag{sourceMgr, /*printImmediately=*/false};
  Module module;
  std::optional<Program> program;
  std::vector<HostTensor> tensors;
  RunResult result;

  HostTensor &tensor(const std::string &name) {
    for (HostTensor &t : tensors)
      if (t.name == name)
        return t;
    FAIL("no tensor " << name);
    return tensors.front();
  }
  std::string errors() const {
    std::string s;
    for (const Diagnostic &d : diag.all())
      s += fmt::format("{}:{}: {}\n", d.line, d.column, d.message);
    return s;
  }
};

// Parses (and, unless told otherwise, checks) `text`, binds `args` and
// prepares the tensors; `fill` may set inputs before the run.
std::unique_ptr<Sim> prepare(const std::string &text, ArgValues args = {}, bool check = true) {
  auto s = std::make_unique<Sim>();
  s->module = parseModuleText(text, "test.tile", s->diag);
  if (check && !s->diag.hasErrors())
    checkModule(s->module, s->diag);
  REQUIRE_MESSAGE(!s->diag.hasErrors(), s->errors());
  s->program = bindProgram(s->module.kernels.at(0), args, s->diag);
  REQUIRE_MESSAGE(s->program, s->errors());
  s->tensors = allocateTensors(*s->program);
  return s;
}

void run(Sim &s, uint64_t seed = 1) {
  EngineOptions o;
  o.seed = seed;
  o.where = [&s](llvm::SMLoc loc) {
    auto [line, col] = s.sourceMgr.getLineAndColumn(loc);
    return fmt::format("test.tile:{}:{}", line, col);
  };
  s.result = runProgram(*s.program, s.tensors, o);
}

int64_t intAt(HostTensor &t, int64_t i) {
  return decodeInt(t.dtype, t.bitsAt(i));
}

} // namespace

TEST_CASE("engine: divergent branches run with the lanes that took them") {
  auto s = prepare(R"(
kernel diverge(C: global i32[64])
  launch grid(1) threads(64) target(sm_80)
{
  if laneid < 5 {
    C[threadIdx.x] = 1
  } else {
    if laneid % 2 == 0 {
      C[threadIdx.x] = 2
    } else {
      C[threadIdx.x] = 3
    }
  }
}
)");
  run(*s);
  REQUIRE_MESSAGE(s->result.ok(), s->result.message);
  HostTensor &c = s->tensor("C");
  for (int t = 0; t < 64; ++t) {
    int lane = t % 32;
    CHECK(intAt(c, t) == (lane < 5 ? 1 : lane % 2 == 0 ? 2 : 3));
    CHECK(c.written[t] == 1);
  }
}

TEST_CASE("engine: loops with per-lane trip counts reconverge after the loop") {
  auto s = prepare(R"(
kernel trips(C: global i32[32])
  launch grid(1) threads(32) target(sm_80)
{
  reg acc: i32[1]
  acc[0] = 0
  for k in 0 .. laneid step 2 {
    acc[0] = acc[0] + k
  }
  C[laneid] = acc[0] * 100 + 7
}
)");
  run(*s);
  REQUIRE_MESSAGE(s->result.ok(), s->result.message);
  HostTensor &c = s->tensor("C");
  for (int lane = 0; lane < 32; ++lane) {
    int64_t sum = 0;
    for (int k = 0; k < lane; k += 2)
      sum += k;
    CHECK(intAt(c, lane) == sum * 100 + 7);
  }
}

TEST_CASE("engine: elect_sync picks the lowest active lane") {
  auto s = prepare(R"(
kernel elect(C: global i32[2])
  launch grid(1) threads(32) target(sm_90a)
{
  if laneid >= 3 {
    if elect_sync() {
      C[0] = laneid
    }
  }
  if elect_sync() {
    C[1] = laneid
  }
}
)",
                   {}, /*check=*/false);
  run(*s);
  REQUIRE_MESSAGE(s->result.ok(), s->result.message);
  CHECK(intAt(s->tensor("C"), 0) == 3);
  CHECK(intAt(s->tensor("C"), 1) == 0);
}

TEST_CASE("engine: swizzled shared memory places elements by the layout and round-trips") {
  auto s = prepare(R"(
kernel swizzle_trip(A: global bf16[8, 64], B: global bf16[8, 64], D: global bf16[8, 64])
  launch grid(1) threads(128) target(sm_90a)
{
  shared S: bf16[8, 64] layout(swizzle(128B, bf16, S[(8, 64):(64, 1)]))
  cta.copy(S, A)
  cta.sync()
  cta.copy(B, S)
  for i in 0 .. 4 {
    let e = threadIdx.x * 4 + i
    D[e / 64, e % 64] = S[e / 64, e % 64]
  }
}
)");
  // Row 1, column 0 (element 64): 16-byte chunk 8 -> 8 ^ 1 = 9, byte 144.
  const BufferPlan &plan = s->program->buffers[s->program->stmtBuffer.begin()->second];
  CHECK(plan.name == "S");
  CHECK(plan.sharedByte(64) == 144);
  CHECK(plan.sharedByte(0) == 0);
  CHECK(plan.sharedByte(7 * 64 + 8) == 7 * 128 + (1 ^ 7) * 16);
  HostTensor &a = s->tensor("A");
  for (int64_t i = 0; i < a.elements(); ++i)
    a.setBits(i, 0x3F80 + i); // distinct bf16 codes
  run(*s);
  REQUIRE_MESSAGE(s->result.ok(), s->result.message);
  for (int64_t i = 0; i < a.elements(); ++i) {
    CHECK(s->tensor("B").bitsAt(i) == a.bitsAt(i));
    CHECK(s->tensor("D").bitsAt(i) == a.bitsAt(i));
  }
}

namespace {
std::string tmaKernel(int bytes) {
  return fmt::format(R"(
kernel tma_tx(A: global bf16[64, 64], C: global bf16[64, 64])
  launch grid(1) threads(128) target(sm_90a)
{{
  shared S: bf16[64, 64]
  mbarrier full(count = 1)
  if threadIdx.x == 0 {{
    mbarrier.arrive_expect_tx(full, bytes = {})
    copy_async(S, A, mbar = full)
  }}
  mbarrier.wait(full, parity = 0)
  cta.copy(C, S)
}}
)",
                     bytes);
}
} // namespace

TEST_CASE("engine: TMA completes later and drains the expected transaction bytes") {
  for (uint64_t seed : {1, 2, 3, 4}) {
    auto s = prepare(tmaKernel(8192));
    HostTensor &a = s->tensor("A");
    for (int64_t i = 0; i < a.elements(); ++i)
      a.setBits(i, 0x4000 + i % 1000);
    run(*s, seed);
    REQUIRE_MESSAGE(s->result.ok(), s->result.message);
    CHECK(s->result.stats.asyncCopies == 1);
    for (int64_t i = 0; i < a.elements(); ++i)
      CHECK(s->tensor("C").bitsAt(i) == a.bitsAt(i));
  }
}

TEST_CASE("engine: expect_tx larger than the TMA delivers leaves the phase open: deadlock") {
  auto s = prepare(tmaKernel(16384));
  run(*s);
  REQUIRE(s->result.outcome == RunResult::Outcome::Deadlock);
  CHECK(s->result.message == "deadlock in CTA (0, 0, 0): every unfinished warp is blocked and "
                             "nothing is in flight");
  REQUIRE(s->result.notes.size() == 5);
  CHECK(s->result.notes[0] ==
        "warp 0 (threads 0..31) blocked at test.tile:11:3: mbarrier.wait on full parity 0");
  CHECK(s->result.notes[3] ==
        "warp 3 (threads 96..127) blocked at test.tile:11:3: mbarrier.wait on full parity 0");
  CHECK(s->result.notes[4] == "mbarrier full: phase 0 (parity 0), pending 0 of 1, tx 8192");
}

TEST_CASE("engine: expect_tx smaller than the TMA delivers drives tx negative: deadlock") {
  auto s = prepare(tmaKernel(4096));
  run(*s);
  REQUIRE(s->result.outcome == RunResult::Outcome::Deadlock);
  CHECK(s->result.notes.back() == "mbarrier full: phase 0 (parity 0), pending 0 of 1, tx -4096");
}

TEST_CASE("engine: a wait on the wrong parity deadlocks and names the warp and the location") {
  auto s = prepare(R"(
kernel wrong_parity(C: global f32[64])
  launch grid(1) threads(64) target(sm_90a)
{
  mbarrier bar(count = 64)
  mbarrier.arrive(bar)
  mbarrier.wait(bar, parity = 0)
  mbarrier.wait(bar, parity = 1)
  C[threadIdx.x] = 1.0
}
)");
  run(*s);
  REQUIRE(s->result.outcome == RunResult::Outcome::Deadlock);
  REQUIRE(s->result.notes.size() == 3);
  CHECK(s->result.notes[0] ==
        "warp 0 (threads 0..31) blocked at test.tile:8:3: mbarrier.wait on bar parity 1");
  CHECK(s->result.notes[1] ==
        "warp 1 (threads 32..63) blocked at test.tile:8:3: mbarrier.wait on bar parity 1");
  CHECK(s->result.notes[2] == "mbarrier bar: phase 1 (parity 1), pending 64 of 64, tx 0");
  CHECK(s->tensor("C").written[0] == 0);
}

TEST_CASE("engine: the right parity passes for every seed") {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    auto s = prepare(R"(
kernel right_parity(C: global f32[64])
  launch grid(1) threads(64) target(sm_90a)
{
  mbarrier bar(count = 64)
  mbarrier.arrive(bar)
  mbarrier.wait(bar, parity = 0)
  C[threadIdx.x] = 1.0
}
)");
    run(*s, seed);
    REQUIRE_MESSAGE(s->result.ok(), s->result.message);
    CHECK(decodeFloat(Dtype::f32, s->tensor("C").bitsAt(63)) == 1.0);
  }
}

TEST_CASE("engine: arriving more often than the count in one phase is a runtime error") {
  auto s = prepare(R"(
kernel over(C: global f32[32])
  launch grid(1) threads(32) target(sm_90a)
{
  mbarrier bar(count = 1)
  if laneid == 0 {
    mbarrier.expect_tx(bar, bytes = 16)
    mbarrier.arrive(bar)
    mbarrier.arrive(bar)
  }
}
)");
  run(*s);
  REQUIRE(s->result.outcome == RunResult::Outcome::RuntimeError);
  CHECK(s->result.message ==
        "test.tile:9:5: error: more arrivals than the mbarrier's count in one phase (bar: phase 0 "
        "(parity 0), pending 0 of 1, tx 16) (CTA (0, 0, 0))");
}

TEST_CASE("engine: a collective reached by part of its scope is an error") {
  auto s = prepare(R"(
kernel partial(C: global f32[32])
  launch grid(1) threads(32) target(sm_90a)
{
  if laneid < 16 {
    warp.sync()
  }
}
)",
                   {}, /*check=*/false);
  run(*s);
  REQUIRE(s->result.outcome == RunResult::Outcome::RuntimeError);
  CHECK(s->result.message == "test.tile:6:5: error: 'sync' must be executed by a whole warp, but "
                             "warp 0 reaches it with active mask 0x0000ffff (CTA (0, 0, 0))");
}

TEST_CASE("engine: a CTA barrier that one warp never reaches deadlocks") {
  auto s = prepare(R"(
kernel missing(C: global f32[64])
  launch grid(1) threads(64) target(sm_90a)
{
  if warpid == 0 {
    cta.sync()
  }
}
)",
                   {}, /*check=*/false);
  run(*s);
  REQUIRE(s->result.outcome == RunResult::Outcome::Deadlock);
  REQUIRE(s->result.notes.size() == 2);
  CHECK(s->result.notes[0] == "warp 0 (threads 0..31) blocked at test.tile:6:5: cta.sync waiting "
                              "for its scope (1 of 2 warps arrived)");
  CHECK(s->result.notes[1] == "finished warps: 1");
}

TEST_CASE("engine: register tiles live in the threads their layout names") {
  auto s = prepare(R"(
kernel regs(X: global f32[256], Y: global f32[256])
  launch grid(1) threads(64) target(sm_90a)
{
  reg x: f32[256] layout(S[(64, 4):(1@tx, 1)])
  cta.copy(x, X)
  cta.mul(x, x, 2.0)
  Y[threadIdx.x * 4 + 1] = x[threadIdx.x * 4 + 1]
}
)");
  HostTensor &x = s->tensor("X");
  for (int64_t i = 0; i < 256; ++i)
    x.setBits(i, encodeFloat(Dtype::f32, static_cast<double>(i)));
  run(*s);
  REQUIRE_MESSAGE(s->result.ok(), s->result.message);
  for (int64_t t = 0; t < 64; ++t) {
    CHECK(decodeFloat(Dtype::f32, s->tensor("Y").bitsAt(t * 4 + 1)) == 2.0 * (t * 4 + 1));
    CHECK(s->tensor("Y").written[t * 4] == 0);
  }
}

TEST_CASE("engine: a thread reading a register element its layout does not give it is an error") {
  auto s = prepare(R"(
kernel notmine(X: global f32[256], Y: global f32[64])
  launch grid(1) threads(64) target(sm_90a)
{
  reg x: f32[256] layout(S[(64, 4):(1@tx, 1)])
  cta.copy(x, X)
  Y[threadIdx.x] = x[0]
}
)");
  run(*s);
  REQUIRE(s->result.outcome == RunResult::Outcome::RuntimeError);
  INFO(s->result.message);
  CHECK(s->result.message.rfind("test.tile:7:20: error: threads [", 0) == 0);
  CHECK(s->result.message.find(") read element [0] of register tile 'x', but its layout places "
                               "that element on none of them") != std::string::npos);
}

TEST_CASE("engine: out-of-range element access names the index, dimension and thread") {
  auto s = prepare(R"(
kernel oob(C: global f32[32])
  launch grid(1) threads(32) target(sm_80)
{
  C[laneid + 1] = 1.0
}
)");
  run(*s);
  REQUIRE(s->result.outcome == RunResult::Outcome::RuntimeError);
  CHECK(s->result.message == "test.tile:5:12: error: index 32 is out of range for dimension 0 of "
                             "'C' (extent 32) in thread 31 (CTA (0, 0, 0))");
}

TEST_CASE("engine: a loop that never ends runs into the step budget") {
  auto s = prepare(R"(
kernel forever(C: global f32[32])
  launch grid(1) threads(32) target(sm_90a)
{
  mbarrier bar(count = 1)
  for k in 0 .. 1000000000 {
    C[laneid] = 1.0
  }
}
)");
  EngineOptions o;
  o.maxSteps = 10000;
  s->result = runProgram(*s->program, s->tensors, o);
  CHECK(s->result.outcome == RunResult::Outcome::StepBudget);
}

TEST_CASE("engine: a loop that never ends runs into the deadline and the command's budget") {
  auto s = prepare(R"(
kernel forever(C: global f32[32])
  launch grid(1) threads(32) target(sm_90a)
{
  for k in 0 .. 1000000000 {
    C[laneid] = 1.0
  }
}
)");
  EngineOptions o;
  o.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  s->result = runProgram(*s->program, s->tensors, o);
  CHECK(s->result.outcome == RunResult::Outcome::TimeBudget);
  CHECK(s->result.stoppedByBudget());

  Budget budget(BudgetLimits{/*timeoutMs=*/20, 0, 0});
  ActiveBudget active(budget);
  s->result = runProgram(*s->program, s->tensors, EngineOptions{});
  CHECK(s->result.outcome == RunResult::Outcome::TimeBudget);
  CHECK(s->result.message.find("CPU-time budget of 20 ms exhausted in CTA (0, 0, 0)") == 0);
  CHECK(budget.exceeded() == BudgetKind::CpuTime);
}

TEST_CASE("engine: CTA sampling takes the grid's corners first, opposite ones leading") {
  auto ctas = sampleCtas({4, 3, 1}, 5, 7);
  REQUIRE(ctas.size() == 5);
  CHECK(ctas[0] == std::array<int64_t, 3>{0, 0, 0});
  CHECK(ctas[1] == std::array<int64_t, 3>{3, 2, 0});
  CHECK(ctas[2] == std::array<int64_t, 3>{3, 0, 0});
  CHECK(ctas[3] == std::array<int64_t, 3>{0, 2, 0});
  CHECK(sampleCtas({4, 3, 1}, 0, 7).size() == 12);
}

TEST_CASE("engine: the seed-independent CTAs of a sample are the corners it starts with") {
  auto fixed = fixedSampleCtas({4, 3, 1}, 2);
  REQUIRE(fixed.size() == 2);
  CHECK(fixed[0] == std::array<int64_t, 3>{0, 0, 0});
  CHECK(fixed[1] == std::array<int64_t, 3>{3, 2, 0});
  for (uint64_t seed : {1u, 2u, 99u}) {
    auto drawn = sampleCtas({4, 3, 1}, 7, seed);
    REQUIRE(drawn.size() == 7);
    auto fixed7 = fixedSampleCtas({4, 3, 1}, 7);
    REQUIRE(fixed7.size() == 4); // the grid has four corners
    CHECK(std::equal(fixed7.begin(), fixed7.end(), drawn.begin()));
  }
  CHECK(fixedSampleCtas({4, 3, 1}, 12).size() == 12);
  CHECK(fixedSampleCtas({132, 1, 1}, 1) == std::vector<std::array<int64_t, 3>>{{0, 0, 0}});
}

TEST_CASE("engine: tensor memory must be allocated before use and freed by its allocator") {
  auto s = prepare(R"(
kernel tmem_use(C: global f32[128, 32])
  launch grid(1) threads(128) target(sm_100a)
{
  tmem acc: f32[128, 32] layout(tmem_m128(32))
  reg frag: f32[128, 32] layout(tcgen05_32x32b(32))
  tcgen05.ld(frag[warpid * 32 : +32, :], acc[warpid * 32 : +32, :], shape = "32x32b")
}
)");
  run(*s);
  REQUIRE(s->result.outcome == RunResult::Outcome::RuntimeError);
  CHECK(s->result.message.find("error: tensor memory 'acc' used while not allocated "
                               "(tcgen05.alloc)") != std::string::npos);

  auto t = prepare(R"(
kernel tmem_free(C: global f32[128, 32])
  launch grid(1) threads(128) target(sm_100a)
{
  tmem acc: f32[128, 32] layout(tmem_m128(32))
  if warpid == 0 {
    tcgen05.alloc(acc, cols = 32)
  }
  cta.sync()
  if warpid == 1 {
    tcgen05.dealloc(acc)
  }
}
)");
  run(*t);
  REQUIRE(t->result.outcome == RunResult::Outcome::RuntimeError);
  CHECK(t->result.message == "test.tile:11:5: error: warp 1 frees tensor memory 'acc' that warp 0 "
                             "allocated (CTA (0, 0, 0))");
}

TEST_CASE("engine: no alloc after relinquish_alloc_permit; every allocation freed before exit") {
  auto s = prepare(R"(
kernel tmem_permit(C: global f32[128, 32])
  launch grid(1) threads(128) target(sm_100a)
{
  tmem acc: f32[128, 32] layout(tmem_m128(32))
  if warpid == 1 {
    tcgen05.relinquish_alloc_permit()
  }
  cta.sync()
  if warpid == 0 {
    tcgen05.alloc(acc, cols = 32)
    tcgen05.dealloc(acc)
  }
}
)");
  run(*s);
  REQUIRE(s->result.outcome == RunResult::Outcome::RuntimeError);
  CHECK(s->result.message == "test.tile:11:5: error: tcgen05.alloc after warp 1 gave up the CTA's "
                             "right to allocate tensor memory (tcgen05.relinquish_alloc_permit at "
                             "test.tile:7:5) (CTA (0, 0, 0))");

  auto t = prepare(R"(
kernel tmem_leak(C: global f32[128, 32])
  launch grid(1) threads(128) target(sm_100a)
{
  tmem acc: f32[128, 32] layout(tmem_m128(32))
  if warpid == 0 {
    tcgen05.alloc(acc, cols = 32)
    tcgen05.relinquish_alloc_permit()
  }
}
)");
  run(*t);
  REQUIRE(t->result.outcome == RunResult::Outcome::RuntimeError);
  CHECK(t->result.message == "test.tile:7:5: error: the CTA exits with tensor memory 'acc' (32 "
                             "columns, allocated by warp 0) never freed: every tcgen05.alloc needs "
                             "a tcgen05.dealloc before exit (CTA (0, 0, 0))");
}

TEST_CASE("engine: tensor memory round trip through tcgen05.st and tcgen05.ld") {
  auto s = prepare(R"(
kernel tmem_trip(X: global f32[128, 32], Y: global f32[128, 32])
  launch grid(1) threads(128) target(sm_100a)
{
  tmem acc: f32[128, 32] layout(tmem_m128(32))
  reg frag: f32[128, 32] layout(tcgen05_32x32b(32))
  if warpid == 0 {
    tcgen05.alloc(acc, cols = 64)
  }
  cta.sync()
  warp.copy(frag[warpid * 32 : +32, :], X[warpid * 32 : +32, :])
  tcgen05.st(acc[warpid * 32 : +32, :], frag[warpid * 32 : +32, :], shape = "32x32b")
  warp.fill(frag[warpid * 32 : +32, :], 0.0)
  tcgen05.ld(frag[warpid * 32 : +32, :], acc[warpid * 32 : +32, :], shape = "32x32b")
  tcgen05.wait_ld()
  warp.copy(Y[warpid * 32 : +32, :], frag[warpid * 32 : +32, :])
  cta.sync()
  if warpid == 0 {
    tcgen05.dealloc(acc)
  }
}
)");
  HostTensor &x = s->tensor("X");
  for (int64_t i = 0; i < x.elements(); ++i)
    x.setBits(i, encodeFloat(Dtype::f32, 0.5 * static_cast<double>(i)));
  run(*s);
  REQUIRE_MESSAGE(s->result.ok(), s->result.message);
  for (int64_t i = 0; i < x.elements(); ++i)
    CHECK(s->tensor("Y").bitsAt(i) == x.bitsAt(i));
}

TEST_CASE("engine: the tensor-core gemm primitive is the MMA model chunk by chunk") {
  // One 64x8 tile with K = 32: two k16 chunks, each one fused sum (truncation
  // toward zero), differs from a plain fp32 fma chain on these inputs.
  auto s = prepare(R"(
kernel one_gemm(A: global bf16[64, 32], B: global bf16[8, 32], C: global f32[64, 8])
  launch grid(1) threads(128) target(sm_90a)
{
  shared As: bf16[64, 32]
  shared Bs: bf16[8, 32]
  reg acc: f32[64, 8] layout(wgmma_acc(64, 8))
  cta.copy(As, A)
  cta.copy(Bs, B)
  wg.fill(acc, 0.0)
  wg.gemm(acc, As, Bs, transpose_b = true)
  wg.copy(C, acc)
}
)");
  HostTensor &a = s->tensor("A"), &b = s->tensor("B");
  // Row 0 of A: 1.0 then 2^-24 in every other place; B all ones.
  for (int64_t i = 0; i < a.elements(); ++i)
    a.setBits(i, encodeFloat(Dtype::bf16, i % 32 == 0 ? 1.0 : std::ldexp(1.0, -24)));
  for (int64_t i = 0; i < b.elements(); ++i)
    b.setBits(i, encodeFloat(Dtype::bf16, 1.0));
  run(*s);
  REQUIRE_MESSAGE(s->result.ok(), s->result.message);
  // Chunk 0: 1 + 15 * 2^-24, kept to 25 bits below 2^0 -> truncated to
  // 1 + 14 * 2^-24 ... then to 23 mantissa bits: 1 + 7 * 2^-23.
  // Chunk 1: that + 16 * 2^-24 = 1 + 15 * 2^-23.
  float got = static_cast<float>(decodeFloat(Dtype::f32, s->tensor("C").bitsAt(0)));
  CHECK(got == 1.0f + 15.0f * std::ldexp(1.0f, -23));
  CHECK(s->result.stats.mmaSums == 64 * 8 * 2);
}

namespace {
RunResult runRacing(Sim &s, uint64_t seed = 1) {
  EngineOptions o;
  o.seed = seed;
  o.detectRaces = true;
  o.where = [&s](llvm::SMLoc loc) {
    auto [line, col] = s.sourceMgr.getLineAndColumn(loc);
    return fmt::format("test.tile:{}:{}", line, col);
  };
  return runProgram(*s.program, s.tensors, o);
}

std::string exchangeKernel(bool sync) {
  return fmt::format(R"(
kernel exchange(X: global f32[128], Y: global f32[128])
  launch grid(1) threads(128) target(sm_90a)
{{
  shared S: f32[128]
  S[threadIdx.x] = X[threadIdx.x]
  {}
  Y[threadIdx.x] = S[127 - threadIdx.x]
}}
)",
                     sync ? "cta.sync()" : "");
}
} // namespace

TEST_CASE("race detection: a shared exchange without cta.sync races, with it does not") {
  for (uint64_t seed : {1, 2, 3}) {
    auto racy = prepare(exchangeKernel(false));
    RunResult r = runRacing(*racy, seed);
    REQUIRE(r.ok());
    REQUIRE_FALSE(r.races.empty());
    CHECK(r.races[0].text.find("data race on shared S[") == 0);
    CHECK(r.races[0].text.find("test.tile:6:") != std::string::npos);
    CHECK(r.races[0].text.find("test.tile:8:") != std::string::npos);
    auto fixed = prepare(exchangeKernel(true));
    RunResult f = runRacing(*fixed, seed);
    REQUIRE(f.ok());
    CHECK(f.races.empty());
  }
}

TEST_CASE("race detection: TMA writes are ordered by the mbarrier wait that observes them") {
  for (uint64_t seed : {1, 2, 3, 4}) {
    auto s = prepare(tmaKernel(8192));
    RunResult r = runRacing(*s, seed);
    REQUIRE(r.ok());
    CHECK(r.races.empty());
  }
  // Reading the tile before waiting races with the copy.
  auto bad = prepare(R"(
kernel early(A: global bf16[64, 64], C: global bf16[64, 64])
  launch grid(1) threads(128) target(sm_90a)
{
  shared S: bf16[64, 64]
  mbarrier full(count = 1)
  if threadIdx.x == 0 {
    mbarrier.arrive_expect_tx(full, bytes = 8192)
    copy_async(S, A, mbar = full)
  }
  cta.copy(C, S)
  mbarrier.wait(full, parity = 0)
}
)");
  bool found = false;
  for (uint64_t seed : {1, 2, 3, 4, 5, 6}) {
    RunResult r = runRacing(*bad, seed);
    REQUIRE(r.ok());
    for (const DetectedRace &race : r.races)
      found |= race.kind == "async race" &&
               race.text.find("TMA copy issued by thread 0 at test.tile:9:5") != std::string::npos;
  }
  CHECK(found);
}

TEST_CASE("race detection: the bundled-style pipelines are race-free") {
  auto s = prepare(R"(
kernel ring(A: global bf16[256, 64], C: global bf16[256, 64])
  launch grid(1) threads(256) target(sm_90a)
{
  shared S: bf16[2, 64, 64]
  mbarrier full[2](count = 1), empty[2](count = 4)
  if warpid == 0 {
    for k in 0 .. 4 {
      let s = k % 2
      mbarrier.wait(empty[s], parity = (k / 2 + 1) % 2)
      if elect_sync() {
        mbarrier.arrive_expect_tx(full[s], bytes = 8192)
        copy_async(S[s], A[k * 64 : +64, :], mbar = full[s])
      }
    }
  }
  if warpid >= 4 {
    for k in 0 .. 4 {
      let s = k % 2
      mbarrier.wait(full[s], parity = (k / 2) % 2)
      for i in 0 .. 32 {
        let e = (warpid - 4) * 1024 + i * 32 + laneid
        C[k * 64 + e / 64, e % 64] = S[s, e / 64, e % 64]
      }
      warp.sync()
      if laneid == 0 {
        mbarrier.arrive(empty[s])
      }
    }
  }
}
)",
                   {}, /*check=*/false);
  for (uint64_t seed : {1, 2, 3, 4, 5}) {
    RunResult r = runRacing(*s, seed);
    REQUIRE_MESSAGE(r.ok(), r.message);
    CHECK(r.races.empty());
    if (!r.races.empty())
      MESSAGE(r.races[0].text);
  }
}

TEST_CASE("race detection: lanes of one warp are separate threads") {
  // One statement in which every lane of warp 0 writes the same element: the
  // lanes' stores are not ordered with each other, and which value lands is
  // undefined, so it is a race; so is a read by another lane with no
  // warp.sync after a write by lane 0.
  auto s = prepare(R"(
kernel lanes(X: global f32[32], Y: global f32[32])
  launch grid(1) threads(32) target(sm_90a)
{
  shared S: f32[2]
  S[0] = X[laneid]
  if laneid == 0 {
    S[1] = X[0]
  }
  Y[laneid] = S[1]
}
)");
  RunResult r = runRacing(*s);
  REQUIRE(r.ok());
  REQUIRE(r.races.size() == 2);
  CHECK(r.races[0].text.find("data race on shared S[0]") == 0);
  CHECK(r.races[0].first.location == "test.tile:6:3");
  CHECK(r.races[0].second.location == "test.tile:6:3");
  CHECK(r.races[1].text.find("data race on shared S[1]") == 0);
  CHECK(r.races[1].first.agent == "thread 0 (warp 0, lane 0)");
}

TEST_CASE("engine: a named barrier waits for its thread count, arrive does not wait") {
  auto s = prepare(R"(
kernel named(C: global i32[4])
  launch grid(1) threads(128) target(sm_90a)
{
  shared S: i32[4]
  if warpid == 0 {
    if laneid == 0 {
      S[0] = 7
    }
    barrier.arrive(1, threads = 64)
  }
  if warpid == 1 {
    barrier.sync(1, threads = 64)
    if laneid < 4 {
      C[laneid] = S[0]
    }
  }
}
)");
  for (uint64_t seed : {1, 2, 3}) {
    run(*s, seed);
    REQUIRE_MESSAGE(s->result.ok(), s->result.message);
    CHECK(intAt(s->tensor("C"), 3) == 7);
    RunResult r = runRacing(*s, seed);
    CHECK(r.races.empty());
  }
  auto bad = prepare(R"(
kernel named_bad(C: global i32[4])
  launch grid(1) threads(128) target(sm_90a)
{
  barrier.sync(1, threads = 48)
}
)");
  run(*bad);
  REQUIRE(bad->result.outcome == RunResult::Outcome::RuntimeError);
  CHECK(bad->result.message.find("named barrier thread count must be a positive multiple of 32") !=
        std::string::npos);
}

TEST_CASE("engine: a TMA box that is not 16-byte aligned in global memory is an error") {
  auto s = prepare(R"(
kernel misaligned(A: global bf16[64, 128], C: global bf16[64, 64])
  launch grid(1) threads(128) target(sm_90a)
{
  shared S: bf16[64, 64]
  mbarrier full(count = 1)
  if threadIdx.x == 0 {
    mbarrier.arrive_expect_tx(full, bytes = 8192)
    copy_async(S, A[:, 3 : +64], mbar = full)
  }
  mbarrier.wait(full, parity = 0)
}
)");
  run(*s);
  REQUIRE(s->result.outcome == RunResult::Outcome::RuntimeError);
  CHECK(s->result.message ==
        "test.tile:9:5: error: misaligned TMA: the box starts 6 bytes into a "
        "row of 'A'; global addresses must be 16-byte aligned (CTA (0, 0, 0))");
}
