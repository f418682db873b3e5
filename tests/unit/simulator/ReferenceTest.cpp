// Problem annotations and the double-precision references on hand-computed
// cases: the parser's pieces and error offsets, which annotation belongs to
// which kernel, and exact expected values for scaled gemm, softmax and
// attention (with its mask and log-sum-exp), including the element the
// comparison flags once an output is off.
#include "simulator/Reference.h"
#include "simulator/ReferenceRules.h"
#include "ir/Parser.h"
#include "simulator/Value.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <memory>

using namespace tilescope;
using namespace tilescope::sim;

namespace {

// A kernel header bound to `args`, its tensors set from `values` (row-major),
// and its annotation bound to them.
struct Bound {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag{sourceMgr, /*printImmediately=*/false};
  Module module;
  std::optional<Program> program;
  std::vector<HostTensor> tensors;
  std::optional<BoundProblem> problem;
  ProblemError error;

  HostTensor &at(const std::string &name) {
    for (HostTensor &t : tensors)
      if (t.name == name)
        return t;
    FAIL("no tensor " << name);
    return tensors.front();
  }
  void set(const std::string &name, const std::vector<double> &values) {
    HostTensor &t = at(name);
    REQUIRE(static_cast<int64_t>(values.size()) == t.elements());
    for (size_t i = 0; i < values.size(); ++i)
      t.setBits(static_cast<int64_t>(i), encodeFloat(t.dtype, values[i]));
  }
  // Stores `values` as the kernel's output (written).
  void store(const std::string &name, const std::vector<double> &values) {
    set(name, values);
    std::fill(at(name).written.begin(), at(name).written.end(), 1);
  }
};

std::unique_ptr<Bound> bind(const std::string &problem, const std::string &params,
                            ArgValues args = {}) {
  auto b = std::make_unique<Bound>();
  b->module =
      parseModuleText("kernel k(" + params + ") launch grid(1) threads(32) target(sm_80) { }",
                      "test.tile", b->diag);
  REQUIRE(!b->diag.hasErrors());
  b->program = bindProgram(b->module.kernels.at(0), args, b->diag);
  REQUIRE(b->program);
  b->tensors = allocateTensors(*b->program);
  ProblemSyntaxError syntax;
  auto spec = parseProblem(problem, &syntax);
  REQUIRE_MESSAGE(spec, syntax.message);
  b->problem = bindProblem(*spec, *b->program, b->tensors, &b->error);
  return b;
}

} // namespace

TEST_CASE("problem: the parser keeps every piece and its offset") {
  ProblemSyntaxError e;
  auto p = parseProblem("  gemm(A^T, B -> C, scale_a = SA, block = 32)  ", &e);
  REQUIRE(p);
  CHECK(p->text == "gemm(A^T, B -> C, scale_a = SA, block = 32)");
  CHECK(p->kind == "gemm");
  REQUIRE(p->inputs.size() == 2);
  CHECK(p->inputs[0].name == "A");
  CHECK(p->inputs[0].transposed);
  CHECK(!p->inputs[1].transposed);
  CHECK(p->inputs[1].offset == 10);
  REQUIRE(p->outputs.size() == 1);
  CHECK(p->outputs[0].offset == 15);
  REQUIRE(p->options.size() == 2);
  CHECK(p->options[0].key == "scale_a");
  CHECK(p->options[0].value == "SA");
  CHECK(p->options[0].valueOffset == 28);
  CHECK(p->options[1].value == "32");

  CHECK(!parseProblem("gemm(A, B -> C, block = )", &e));
  CHECK(e.offset == 24);
  CHECK(!parseProblem("gemm(A, B -> C, block = 1, D)", &e));
  CHECK(e.message == "output 'D' after options; outputs come first");
  CHECK(e.offset == 27);
  CHECK(!parseProblem("softmax(X -> Y) extra", &e));
  CHECK(e.offset == 16);
  CHECK(!parseProblem("softmax(X, -> Y)", &e));
  CHECK(e.offset == 11);
  CHECK(!parseProblem("rmsnorm(X, W, eps -> Y, eps = 1e-5, eps = 2)", &e));
  CHECK(e.message == "option 'eps' given twice");

  auto t = parseProblem("gemm(A, scale_a = SA^T, B^T -> C, scale_b = SB^T, block = 128)", &e);
  REQUIRE(t);
  REQUIRE(t->options.size() == 3);
  CHECK(t->options[0].value == "SA");
  CHECK(t->options[0].transposed);
  CHECK(t->inputs[1].transposed);
  CHECK(t->options[1].transposed);
  CHECK(!t->options[2].transposed);
}

TEST_CASE("problem: each kernel gets the annotation right before it") {
  std::string source = "// problem: softmax(X -> Y)\n"
                       "// another comment\n"
                       "kernel first(X: global f32[4]) {}\n"
                       "kernel second(X: global f32[4]) {}\n"
                       "  // problem:   gemm(A, B -> C)\n"
                       "kernel third(A: global f32[4]) {}\n";
  auto first = findProblemAnnotation(source, "first");
  REQUIRE(first);
  CHECK(first->text == "softmax(X -> Y)");
  CHECK(first->offset == 12);
  CHECK(!findProblemAnnotation(source, "second"));
  auto third = findProblemAnnotation(source, "third");
  REQUIRE(third);
  CHECK(third->text == "gemm(A, B -> C)");
  CHECK(source.substr(third->offset, 4) == "gemm");
  CHECK(!findProblemAnnotation(source, "fourth"));
}

TEST_CASE("reference: block-scaled gemm applies each block's scales") {
  // K = 4 in two blocks of 2: C = (1*3 + 2*4) * 2 * 4 + (1*1 + 1*1) * 0.5 * 1 = 89.
  auto b = bind("gemm(A, B^T -> C, scale_a = SA, scale_b = SB, block = 2)",
                "A: global f8e4m3[1, 4], B: global f8e4m3[1, 4], SA: global ue8m0[1, 2], "
                "SB: global ue8m0[1, 2], C: global f32[1, 1]");
  REQUIRE_MESSAGE(b->problem, b->error.message);
  CHECK(b->problem->scales.size() == 2);
  b->set("A", {1, 2, 1, 1});
  b->set("B", {3, 4, 1, 1});
  b->set("SA", {2, 0.5});
  b->set("SB", {4, 1});
  b->store("C", {89});
  auto r = compareWithReference(*b->problem, b->tensors, true);
  REQUIRE(r.size() == 1);
  CHECK(r[0].mismatches == 0);
  b->store("C", {89.01});
  r = compareWithReference(*b->problem, b->tensors, true);
  CHECK(r[0].mismatches == 1);
  CHECK(r[0].first.at(0).expected == 89);
}

TEST_CASE("reference: DeepGEMM's scale layout, A's scales stored transposed, B's per block") {
  // M = 2, N = 3, K = 4 in K-blocks of 2; B's scales cover 2 columns
  // (block_n = 2: columns 0-1 and column 2). SA is stored [K / 2, M]: SA[b, i].
  auto b = bind("gemm(A, B^T -> C, scale_a = SA^T, scale_b = SB, block = 2, block_n = 2)",
                "A: global f8e4m3[2, 4], B: global f8e4m3[3, 4], SA: global f32[2, 2], "
                "SB: global f32[2, 2], C: global f32[2, 3]");
  REQUIRE_MESSAGE(b->problem, b->error.message);
  b->set("A", {1, 2, 1, 1, 2, 0, 0, 1});
  b->set("B", {1, 1, 1, 1, 0, 1, 2, 0, 1, 0, 0, 1});
  b->set("SA", {2, 3, 0.5, 0.25}); // block 0: rows 2, 3; block 1: rows 0.5, 0.25
  b->set("SB", {4, 1, 8, 2});      // column block 0: 4, 1; column block 1: 8, 2
  // C[i, j] = sum_b SA[b, i] SB[j / 2, b] (A_b . B_b)[i, j]
  //   C[0, 0] = 2 * 4 * (1 + 2) + 0.5 * 1 * (1 + 1) = 25
  //   C[0, 1] = 2 * 4 * 2 + 0.5 * 1 * 2 = 17
  //   C[0, 2] = 2 * 8 * 1 + 0.5 * 2 * 1 = 17
  //   C[1, 0] = 3 * 4 * 2 + 0.25 * 1 * 1 = 24.25
  //   C[1, 1] = 3 * 4 * 0 + 0.25 * 1 * 0 = 0
  //   C[1, 2] = 3 * 8 * 2 + 0.25 * 2 * 1 = 48.5
  b->store("C", {25, 17, 17, 24.25, 0, 48.5});
  auto r = compareWithReference(*b->problem, b->tensors, true);
  REQUIRE(r.size() == 1);
  CHECK(r[0].mismatches == 0);
  // SA read untransposed (SA[i, b]) would give C[0, 0] = 2 * 4 * 3 + 3 * 1 * 2 = 30.
  b->store("C", {30, 17, 17, 24.25, 0, 48.5});
  r = compareWithReference(*b->problem, b->tensors, true);
  CHECK(r[0].mismatches == 1);
  CHECK(r[0].first.at(0).expected == 25);

  auto wrong = bind("gemm(A, B^T -> C, scale_a = SA^T, scale_b = SB, block = 2, block_n = 2)",
                    "A: global f8e4m3[2, 4], B: global f8e4m3[3, 4], SA: global f32[2, 2], "
                    "SB: global f32[3, 2], C: global f32[2, 3]");
  CHECK(!wrong->problem);
  CHECK(wrong->error.message == "scale tensor 'SB' is [3, 2]; scale_b = ... of 'B' [3, 4] with "
                                "block 2 and block_n = 2 needs [2, 2]");
}

TEST_CASE("reference: softmax over the last axis") {
  auto b = bind("softmax(X -> Y)", "X: global f32[2, 2], Y: global f32[2, 2]");
  REQUIRE(b->problem);
  b->set("X", {0, 0, 0, 1});
  double e = std::exp(1.0);
  b->store("Y", {0.5, 0.5, 1 / (1 + e), e / (1 + e)});
  auto r = compareWithReference(*b->problem, b->tensors, true);
  CHECK(r[0].mismatches == 0);
  CHECK(r[0].maxAbsError < 1e-7);
  b->store("Y", {0.5, 0.5, e / (1 + e), 1 / (1 + e)});
  r = compareWithReference(*b->problem, b->tensors, true);
  CHECK(r[0].mismatches == 2);
  CHECK(r[0].first.at(0).index == 2);
}

TEST_CASE("reference: causal attention with log-sum-exp") {
  // Two queries, two keys, scale 1: row 0 sees key 0 only (O = V[0],
  // L = s_00 = 1); row 1 sees both with s = (0, 1).
  auto b = bind("attention(Q, K, V -> O, scale = 1, causal = true, lse = L)",
                "Q: global f32[2, 2], K: global f32[2, 2], V: global f32[2, 2], "
                "O: global f32[2, 2], L: global f32[2]");
  REQUIRE_MESSAGE(b->problem, b->error.message);
  REQUIRE(b->problem->outputs.size() == 2);
  b->set("Q", {1, 0, 0, 1});
  b->set("K", {1, 0, 0, 1});
  b->set("V", {1, 2, 3, 4});
  double e = std::exp(1.0), p0 = 1 / (1 + e), p1 = e / (1 + e);
  b->store("O", {1, 2, p0 * 1 + p1 * 3, p0 * 2 + p1 * 4});
  b->store("L", {1, std::log(1 + e)});
  auto r = compareWithReference(*b->problem, b->tensors, true);
  REQUIRE(r.size() == 2);
  CHECK(r[0].mismatches == 0);
  CHECK(r[1].mismatches == 0);
  // Without the mask row 0 would be a mix of both keys: flagged.
  b->store("O", {p0 * 3 + p1 * 1, p0 * 4 + p1 * 2, p0 * 1 + p1 * 3, p0 * 2 + p1 * 4});
  r = compareWithReference(*b->problem, b->tensors, true);
  CHECK(r[0].mismatches == 2);
  CHECK(r[0].first.at(0).index == 0);
}

TEST_CASE("reference: attention's default scale is 1 / sqrt(D), and rows see all keys") {
  auto b = bind("attention(Q, K, V -> O)", "Q: global f32[1, 4], K: global f32[2, 4], "
                                           "V: global f32[2, 1], O: global f32[1, 1]");
  REQUIRE(b->problem);
  b->set("Q", {1, 1, 1, 1});
  b->set("K", {1, 1, 1, 1, 0, 0, 0, 0});
  b->set("V", {1, 0});
  // s = (4 / 2, 0) = (2, 0).
  b->store("O", {std::exp(2.0) / (std::exp(2.0) + 1)});
  CHECK(compareWithReference(*b->problem, b->tensors, true)[0].mismatches == 0);
}

TEST_CASE("reference: binding errors name the operand") {
  auto b = bind("attention(Q, K, V -> O, scale = s2)",
                "Q: global f32[2, 4], K: global f32[3, 4], V: global f32[3, 2], "
                "O: global f32[2, 2], s: f32",
                ArgValues{{}, {{"s", 0.5}}});
  CHECK(!b->problem);
  CHECK(b->error.message == "'s2' (scale = ...) is neither a number nor a scalar parameter of "
                            "the kernel");
  CHECK(b->error.offset == 32);
  auto c = bind("gemm(A, B -> C, block = 32)",
                "A: global f32[2, 64], B: global f32[64, 2], C: global f32[2, 2]");
  CHECK(!c->problem);
  CHECK(c->error.message == "block without scale_a or scale_b");
  auto d = bind("rmsnorm(X, W, eps -> Y)",
                "X: global f32[2, 8], W: global f32[4], Y: global f32[2, 8], eps: f32",
                ArgValues{{}, {{"eps", 1e-5}}});
  CHECK(!d->problem);
  CHECK(d->error.message == "weight 'W' is [4]; 'X' [2, 8] needs [8]");
  CHECK(d->error.offset == 11);
}

TEST_CASE("reference: random inputs are nonzero, scales are powers of two near one") {
  auto b = bind("gemm(A, B^T -> C, scale_a = SA, block = 32)",
                "A: global bf16[4, 64], B: global bf16[4, 64], SA: global ue8m0[4, 2], "
                "C: global f32[4, 4]");
  REQUIRE(b->problem);
  fillRandomInput(b->at("A"), 7, false);
  fillRandomInput(b->at("SA"), 7, true);
  bool anyNegative = false;
  for (int64_t i = 0; i < b->at("A").elements(); ++i) {
    double v = decodeFloat(Dtype::bf16, b->at("A").bitsAt(i));
    CHECK(v != 0);
    CHECK(std::fabs(v) <= 1);
    anyNegative |= v < 0;
  }
  CHECK(anyNegative);
  for (int64_t i = 0; i < b->at("SA").elements(); ++i) {
    double s = decodeFloat(Dtype::ue8m0, b->at("SA").bitsAt(i));
    int exponent = 0;
    CHECK(std::frexp(s, &exponent) == 0.5); // a power of two
    CHECK(s >= 0.125);
    CHECK(s <= 8);
  }
  // The same seed and name give the same values.
  HostTensor again = b->at("A");
  fillRandomInput(again, 7, false);
  CHECK(again.bytes == b->at("A").bytes);
}

// The gemm reference's eight-column sums against one column at a time, the
// loops of its per-element path written out here: every bit of every sum,
// magnitude and fp8 chunk bound, for both instantiations (the 512-bit one
// where the processor has AVX-512), with NaNs, infinities, signed zeros and
// random bit patterns among the operands, and blocks that do and do not
// divide the 32-term chunks (built by clang, any NaN for a NaN).
TEST_CASE("reference: the gemm's eight-column sums give the per-column loops' bits") {
  std::mt19937_64 rng(25);
  auto draw = [&]() -> double {
    const uint64_t r = rng();
    switch (r % 50) {
    case 0: return std::nan("");
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return -0.0;
    case 4: return 0.0;
    case 5: {
      const uint64_t bits = rng();
      double d;
      std::memcpy(&d, &bits, sizeof d);
      return d;
    }
    default:
      return std::ldexp(static_cast<double>(static_cast<int64_t>(rng() % 2001) - 1000),
                        static_cast<int>(rng() % 40) - 20);
    }
  };
  auto same = [](double x, double y) {
#ifdef __clang__
    // clang 14 commutes some of the additions, so a sum of two NaNs may keep
    // the other one's sign or payload (docs/reward.md, "Session 25").
    if (std::isnan(x) && std::isnan(y))
      return true;
#endif
    return std::memcmp(&x, &y, sizeof x) == 0;
  };
  int64_t differ = 0, lanes = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const int64_t K = 1 + static_cast<int64_t>(rng() % 300);
    const int64_t blocks[] = {128, 32, 48, 16, 1, 7, 33, 0, -1, K, 64, 200};
    const int64_t sumBlock = blocks[rng() % 12], aStep = 1 + static_cast<int64_t>(rng() % 3);
    const int64_t n = 8 + static_cast<int64_t>(rng() % 5);
    std::vector<double> a(K * aStep), b8(K * 8), bn(K * n);
    for (std::vector<double> *v : {&a, &b8, &bn})
      for (double &x : *v)
        x = draw();
    for (bool wide : {false, true}) {
      if (wide && !gemmWideLanes())
        continue;
      double s[8], m[8], bound[8];
      gemmEightColumnFp8Sums(wide, a.data(), aStep, b8.data(), K, sumBlock, s, m, bound);
      for (int l = 0; l < 8; ++l) {
        // fp8Elements' loop for one column.
        double rs = 0, part = 0, abs = 0, fp8Bound = 0, largest = 0, chunkAbs = 0;
        for (int64_t k = 0, inBlock = 0, inChunk = 0; k < K; ++k) {
          if (inBlock == 0)
            part = 0;
          if (inChunk == 0)
            largest = chunkAbs = std::fabs(part);
          const double xy = a[k * aStep] * b8[k * 8 + l];
          rs += xy;
          part += xy;
          abs += std::fabs(xy);
          largest = std::max(largest, std::fabs(xy));
          chunkAbs += std::fabs(xy);
          if (++inChunk == 32 || k == K - 1)
            fp8Bound += 0x1p-13 * (33.0 * largest + chunkAbs);
          inChunk %= 32;
          if (++inBlock == sumBlock)
            inBlock = 0;
        }
        differ += !same(s[l], rs) + !same(m[l], abs) + !same(bound[l], fp8Bound);
        ++lanes;
      }
      // The plain sums read A's values one apart.
      gemmEightColumnSums(wide, a.data(), bn.data(), K, n, s, m);
      for (int l = 0; l < 8; ++l) {
        double rs = 0, abs = 0;
        for (int64_t k = 0; k < K; ++k) {
          const double xy = a[k] * bn[k * n + l];
          rs += xy;
          abs += std::fabs(xy);
        }
        differ += !same(s[l], rs) + !same(m[l], abs);
        ++lanes;
      }
    }
  }
  CHECK(lanes >= 600 * 16);
  CHECK(differ == 0);
}
