// The threshold sizes of the simulate stage (reward/ThresholdSizes.h): a
// decision over sizes and CTA indices that the sampled sizes take one way
// only gets a size on its other side; outcomes the where clause rules out
// get none; an outcome past the reach of the search, or past the budget of
// threshold sizes, is unreached.
#include "ir/Parser.h"
#include "kernels/BundledKernels.h"
#include "reward/SimSizes.h"
#include "reward/ThresholdSizes.h"
#include "ParseOne.h"

#include <doctest/doctest.h>

#include <llvm/Support/SourceMgr.h>

using namespace tilescope;
using namespace tilescope::reward_detail;

namespace {

ThresholdPlan planOf(const Kernel &kernel) {
  std::string why;
  auto sizes = chooseSimSizes(kernel, why);
  REQUIRE_MESSAGE(sizes, why);
  return thresholdSizes(kernel, *sizes, [](llvm::SMLoc) { return std::string("here"); });
}

// A naive GEMM whose body is `BODY`.
std::string gemm(const std::string &body) {
  return R"(
kernel mm(A: global f32[M, K], B: global f32[K, N], C: global f32[M, N])
  where M % 16 == 0, N % 16 == 0, K > 0
  launch grid(N / 16, M / 16) threads(256) target(sm_80)
{
  reg acc: f32[1]
  let i = blockIdx.y * 16 + threadIdx.x / 16
  let j = blockIdx.x * 16 + threadIdx.x % 16
  acc[0] = 0.0
)" + body + R"(
  C[i, j] = acc[0]
}
)";
}

const char *kLoop = "for k in 0 .. K { acc[0] = acc[0] + A[i, k] * B[k, j] }\n";

// gemm_bf16_sm90 with its accumulator zeroed under the `if` line `guard`
// before the epilogue's cast.
std::string zeroedTileOfGemmBf16(const std::string &guard) {
  std::string text(bundledKernelText("gemm_bf16_sm90.tile"));
  std::string cast = "      wg.cast(out, acc)\n";
  size_t at = text.find(cast);
  REQUIRE(at != std::string::npos);
  text.insert(at, guard + "        wg.fill(acc, 0.0)\n      }\n");
  return text;
}

} // namespace

TEST_CASE("threshold sizes: none for a kernel without decisions over sizes") {
  ThresholdPlan plan = planOf(parseOne(gemm(kLoop)));
  CHECK(plan.sizes.empty());
  CHECK(plan.unreached.empty());
}

TEST_CASE("threshold sizes: the other side of K <= 4096, with K doubled") {
  ThresholdPlan plan = planOf(parseOne(gemm(std::string("if K <= 4096 {\n") + kLoop + "}\n")));
  REQUIRE(plan.sizes.size() == 1);
  CHECK(plan.sizes[0].role == "threshold");
  CHECK(plan.sizes[0].values.at("K") == 8194);
  CHECK(plan.sizes[0].values.at("M") == 16);
  CHECK(plan.sizes[0].values.at("N") == 16);
  REQUIRE(plan.reasons.size() == 1);
  CHECK(plan.reasons[0] == "`K <= 4096` false at here");
  CHECK(plan.unreached.empty());
}

TEST_CASE("threshold sizes: a CTA index widens the grid") {
  ThresholdPlan plan =
      planOf(parseOne(gemm(std::string("if blockIdx.x < 40 {\n") + kLoop + "}\n")));
  REQUIRE(plan.sizes.size() == 1);
  CHECK(plan.sizes[0].values.at("N") / 16 > 40);
}

TEST_CASE("threshold sizes: an outcome the where clause rules out needs none") {
  // M % 16 == 0: the remainder is never non-zero; (K + 15) / 16 is never 0.
  ThresholdPlan plan = planOf(parseOne(
      gemm(std::string("if M % 16 == 0 {\n") + "for k in 0 .. (K + 15) / 16 * 16 { if k < K "
                                                "{ acc[0] = acc[0] + A[i, k] * B[k, j] } }\n}\n")));
  CHECK(plan.sizes.empty());
  CHECK(plan.unreached.empty());
}

TEST_CASE("threshold sizes: past 2^20 or past the budget, unreached") {
  ThresholdPlan far =
      planOf(parseOne(gemm(std::string("if K <= 3000000 {\n") + kLoop + "}\n")));
  CHECK(far.sizes.empty());
  REQUIRE(far.unreached.size() == 1);
  CHECK(far.unreached[0].find("it needs a size above 1048576") != std::string::npos);

  // Five decisions no size of another flips (the doubled K = 8194 leaves
  // K % 4096 non-zero, M = 4128 leaves M % 2048 non-zero).
  std::string body;
  for (const char *c : {"K <= 4096", "M <= 2048", "N <= 2048", "K % 4096 != 0", "M % 2048 != 0"})
    body += std::string("if ") + c + " {\n" + kLoop + "}\n";
  ThresholdPlan many = planOf(parseOne(gemm(body)));
  CHECK(many.sizes.size() == kMaxThresholdSizes);
  // `M % 2048 != 0` false, and the remainder `M % 2048` zero with it.
  REQUIRE(many.unreached.size() == 2);
  for (const std::string &u : many.unreached)
    CHECK(u.find("more than 4 threshold sizes") != std::string::npos);
}

TEST_CASE("threshold sizes: a float scalar against a literal, pinned on both sides") {
  ThresholdPlan plan = planOf(parseOne(R"(
kernel scaled(X: global f32[N], Y: global f32[N], eps: f32)
  where N % 128 == 0
  launch grid(N / 128) threads(128) target(sm_80)
{
  let i = blockIdx.x * 128 + threadIdx.x
  Y[i] = X[i] + select(eps < 0.05, eps, 0.0)
}
)"));
  REQUIRE(plan.sizes.size() == 2);
  REQUIRE(plan.floats.size() == 2);
  CHECK(plan.floats[0].at("eps") == doctest::Approx(0.025));
  CHECK(plan.floats[1].at("eps") == doctest::Approx(0.1));
  CHECK(plan.reasons[1] == "`eps < 0.05` with eps = 0.1 at here");
}

TEST_CASE("threshold sizes: t % 8 in a persistent tile loop is decided over the loop, not per CTA") {
  // CTA 0, which the persistent size runs alone, reaches t = 132 >= 8: the
  // comparison `t < 8` that `t % 8` stands for is false in one of its
  // iterations, so no size needs a CTA whose first tile is past 8 (before:
  // one decision per end of the loop asked for 24 tiles of the grouped GEMM).
  ThresholdPlan plan = planOf(parseOne(std::string(bundledKernelText("gemm_bf16_sm90_grouped.tile"))));
  CHECK(plan.sizes.empty());
  CHECK(plan.unreached.empty());
}

TEST_CASE("threshold sizes: a remainder of a quotient of the loop variable wraps past its divisor") {
  // `(k / 2) % 300` stands for `k / 2 < 300`, monotone in k: true at k = 0,
  // false where K - 1 reaches 600, which no sampled size does (K = 1, 67).
  ThresholdPlan plan = planOf(parseOne(
      gemm("for k in 0 .. K { acc[0] = acc[0] + A[i, (k / 2) % 300 * 2 + k % 2] * B[k, j] }\n")));
  REQUIRE(plan.sizes.size() == 1);
  CHECK(plan.sizes[0].values.at("K") == 1202);
  REQUIRE(plan.reasons.size() == 1);
  CHECK(plan.reasons[0] == "`0 / 2 < 300 || (K - 1) / 2 < 300` false in some iteration at here");
  // A quotient that is not monotone in k (`(k % 7) / 2`) stays no decision;
  // nor is a barrier's parity (`parity = k / 2 % 2`), which the barrier
  // proof covers for all sizes.
  CHECK(planOf(parseOne(gemm("for k in 0 .. K { acc[0] = acc[0] + A[i, (k % 7) / 2 % 300] * "
                             "B[k, j] }\n")))
            .sizes.empty());
}

TEST_CASE("threshold sizes: a tile count reaching 2 gets a size at the threshold, its one side only") {
  // gemm_bf16_sm90's `tn = (N + 255) / 256` is 1 at every sampled size (N =
  // 8, 88, 8): a size with a second column tile, N = 264, not doubled; the
  // single tile (`K + 63 < 128` true) is asked for by no decision.
  ThresholdPlan plan = planOf(parseOne(std::string(bundledKernelText("gemm_bf16_sm90.tile"))));
  REQUIRE(plan.sizes.size() == 1);
  CHECK(plan.sizes[0].values == std::map<std::string, int64_t>{{"K", 8}, {"M", 1}, {"N", 264}});
  REQUIRE(plan.reasons.size() == 1);
  CHECK(plan.reasons[0] == "`N + 255 < 512` false at here");
  CHECK(plan.unreached.empty());
  // Run on the two CTAs with a tile, not on the 130 idle ones.
  CHECK(plan.sizes[0].sampleCtas == 2);
  CHECK(plan.sizes[0].ctas == std::vector<std::array<int64_t, 3>>{{0, 0, 0}, {1, 0, 0}});
}

TEST_CASE("threshold sizes: a CTA's third tile is run on that CTA alone") {
  // `(t - blockIdx.x) / 132 >= 2` in gemm_bf16_sm90's tile loop: blockIdx
  // beside the tile index, monotone in it, true where a CTA runs three
  // tiles (265 tiles or more); the size runs CTA 0 alone, not the grid.
  ThresholdPlan plan = planOf(parseOne(
      zeroedTileOfGemmBf16("      if (t - blockIdx.x) / 132 >= 2 {\n")));
  REQUIRE(plan.sizes.size() == 2);
  const SimSize &third = plan.sizes[1];
  CHECK(third.sampleCtas == 1);
  CHECK(third.ctas == std::vector<std::array<int64_t, 3>>{{0, 0, 0}});
  int64_t tiles = (third.values.at("N") + 255) / 256 * ((third.values.at("M") + 127) / 128);
  CHECK(tiles >= 265);
  CHECK(plan.unreached.empty());
}

// The threshold plan of `kernel` at its chosen sizes, `signed_` the float
// scalars drawn with either sign; every location reads "here".
static ThresholdPlan floatPlanOf(const Kernel &kernel,
                                 const std::set<std::string> &signed_ = {}) {
  std::string why;
  auto sizes = chooseSimSizes(kernel, why);
  REQUIRE(sizes);
  auto here = [](llvm::SMLoc) { return std::string("here"); };
  return thresholdSizes(kernel, *sizes, here, signed_);
}

TEST_CASE("threshold sizes: a float scalar in a min or max with a literal is pinned too") {
  // `max(s, -1.0)`: a negative literal counts for a scalar drawn with
  // either sign only (a gemm's alpha); `min(s, 1.5)` for any.
  const char *text = R"(
kernel scaled(X: global f32[N], Y: global f32[N], s: f32)
  where N % 128 == 0
  launch grid(N / 128) threads(128) target(sm_80)
{
  let i = blockIdx.x * 128 + threadIdx.x
  Y[i] = X[i] * max(s, -1.0) * min(s, 1.5)
}
)";
  Kernel k = parseOne(text);
  ThresholdPlan positive = floatPlanOf(k);
  REQUIRE(positive.floats.size() == 2);
  CHECK(positive.floats[0].at("s") == doctest::Approx(0.75));
  CHECK(positive.floats[1].at("s") == doctest::Approx(3.0));
  ThresholdPlan either = floatPlanOf(k, {"s"});
  REQUIRE(either.floats.size() == 4);
  CHECK(either.floats[0].at("s") == doctest::Approx(-0.5));
  CHECK(either.floats[1].at("s") == doctest::Approx(-2.0));
  CHECK(either.reasons[1] == "`max(s, -1.0)` with s = -2 at here");
}

TEST_CASE("threshold sizes: an affine term of a float scalar against a literal is pinned at the crossing") {
  // `max(eps - 0.1, 0.0)`: eps = 0.1 where the sides meet (hack
  // `eps-affine`, session 24); `2.0 * eps + 1.0 < 1.5`: eps = 0.25; a term
  // with no crossing of the right sign (`eps + 1.0 < 0.5`) pins nothing.
  const char *text = R"(
kernel scaled(X: global f32[N], Y: global f32[N], eps: f32)
  where N % 128 == 0
  launch grid(N / 128) threads(128) target(sm_80)
{
  let i = blockIdx.x * 128 + threadIdx.x
  Y[i] = X[i] * max(eps - 0.1, 0.0) + select(2.0 * eps + 1.0 < 1.5, 1.0, 0.0) + select(eps + 1.0 < 0.5, 1.0, 0.0)
}
)";
  ThresholdPlan plan = floatPlanOf(parseOne(text));
  REQUIRE(plan.floats.size() == 4);
  CHECK(plan.floats[0].at("eps") == doctest::Approx(0.05));
  CHECK(plan.floats[1].at("eps") == doctest::Approx(0.2));
  CHECK(plan.floats[2].at("eps") == doctest::Approx(0.125));
  CHECK(plan.floats[3].at("eps") == doctest::Approx(0.5));
}

TEST_CASE("threshold sizes: a min of the tile index with sizes beside it is decided where monotone") {
  // `min(t / (8 * tn), 1)`: a grouped GEMM's group clamped at 1; `t / (8 *
  // tn) > 1` needs a third group (M = 3072), run on CTA 0 and a CTA of it.
  std::string text(bundledKernelText("gemm_bf16_sm90_grouped.tile"));
  std::string group = "let m0 = (t / (8 * tn) * 8 + t % 8) * 128";
  size_t at = text.find(group);
  REQUIRE(at != std::string::npos);
  text.replace(at, group.size(), "let m0 = (min(t / (8 * tn), 1) * 8 + t % 8) * 128");
  ThresholdPlan plan = planOf(parseOne(text));
  REQUIRE(plan.sizes.size() == 1);
  CHECK(plan.sizes[0].values.at("M") == 3072);
  CHECK(plan.sizes[0].sampleCtas == 2);
  CHECK(plan.unreached.empty());
  // A comparison with a size itself (`t * 128 < M`: the tile index, not a
  // row, against M) was a tail until session 26; it is decided at the
  // loop's first and second-to-last tiles now (false there: tiles past M /
  // 128 of a CTA that runs two), run on CTA 0 and a CTA that takes it.
  std::string tail(bundledKernelText("gemm_bf16_sm90_grouped.tile"));
  tail.replace(tail.find(group), group.size(),
               "let m0 = select(t * 128 < M, t / (8 * tn) * 8 + t % 8, 0) * 128");
  ThresholdPlan mixed = planOf(parseOne(tail));
  REQUIRE(mixed.sizes.size() == 1);
  CHECK(mixed.sizes[0].values.at("M") == 2048); // CTA 16's first tile lies past M / 128
  CHECK(mixed.sizes[0].values.at("N") == 2312);
  CHECK(mixed.sizes[0].sampleCtas == 2);
  CHECK(mixed.reasons[0].find("false in some iteration before the last") != std::string::npos);
  CHECK(mixed.unreached.empty());
}

TEST_CASE("threshold sizes: the same clamp as a comparison with a literal is decided too") {
  std::string text(bundledKernelText("gemm_bf16_sm90_grouped.tile"));
  std::string group = "let m0 = (t / (8 * tn) * 8 + t % 8) * 128";
  text.replace(text.find(group), group.size(),
               "let m0 = (select(t / (8 * tn) > 1, 1, t / (8 * tn)) * 8 + t % 8) * 128");
  ThresholdPlan plan = planOf(parseOne(text));
  REQUIRE(plan.sizes.size() == 1);
  CHECK(plan.sizes[0].values.at("M") == 3072);
}

TEST_CASE("threshold sizes: a conjunction moving one way with the loop variable is a loop decision") {
  // `t >= 132 && blockIdx.x > 1`: true where a CTA past 1 runs a second
  // tile; run on CTA 0 and that CTA. `k < 10 || k > 20` moves both ways
  // with k: no loop decision (its parts are).
  std::string text(bundledKernelText("gemm_bf16_sm90.tile"));
  std::string cast = "      wg.cast(out, acc)\n";
  text.insert(text.find(cast), "      if t >= 132 && blockIdx.x > 1 {\n        wg.fill(acc, 0.0)\n      }\n");
  ThresholdPlan plan = planOf(parseOne(text));
  REQUIRE(plan.sizes.size() == 2);
  CHECK(plan.sizes[1].ctas == std::vector<std::array<int64_t, 3>>{{0, 0, 0}, {2, 0, 0}});
  ThresholdPlan both = planOf(parseOne(
      gemm("for k in 0 .. K { if k < 100 || k > 200 { acc[0] = acc[0] + A[i, k] * B[k, j] } }\n")));
  REQUIRE_FALSE(both.reasons.empty());
  for (const std::string &reason : both.reasons) // a part's corners, never the whole
    CHECK_FALSE((reason.find("< 100") != std::string::npos &&
                 reason.find("> 200") != std::string::npos));
}

TEST_CASE("threshold sizes: a thread's global index against a constant runs the CTA that reaches it") {
  // C[200, 200] zeroed (hack `far-element`): no sampled size has 200 rows;
  // one size of at least 208 x 208 runs CTA 0 and a CTA whose threads
  // reach row and column 200, not the whole grid.
  ThresholdPlan plan = planOf(parseOne(
      gemm(std::string(kLoop) + "acc[0] = select(i == 200 && j == 200, 0.0, acc[0])\n")));
  REQUIRE(plan.sizes.size() == 1);
  const SimSize &far = plan.sizes[0];
  CHECK(far.values.at("M") >= 208);
  CHECK(far.values.at("N") >= 208);
  REQUIRE(far.ctas.size() == 2);
  CHECK(far.ctas[0] == std::array<int64_t, 3>{0, 0, 0});
  CHECK(far.ctas[1] == std::array<int64_t, 3>{200 / 16, 200 / 16, 0});
  CHECK(plan.unreached.empty());
}

TEST_CASE("threshold sizes: a thread's global index against the wrong size runs a non-square grid") {
  // `i < N` zeroes the rows past N (hack `rows-past-n`): right while M = N,
  // as at both sampled sizes. `i < M` is false nowhere (the where clause),
  // and a comparison of the thread index alone (`threadIdx.x < 128`) is the
  // same at every size: neither asks for a size.
  ThresholdPlan tails = planOf(parseOne(gemm(std::string(kLoop) +
                                             "acc[0] = select(i < M, acc[0], 0.0)\n"
                                             "acc[0] = select(threadIdx.x < 128, acc[0], 0.0)\n")));
  CHECK(tails.sizes.empty());
  CHECK(tails.unreached.empty());
  ThresholdPlan plan =
      planOf(parseOne(gemm(std::string(kLoop) + "acc[0] = select(i < N, acc[0], 0.0)\n")));
  REQUIRE(plan.sizes.size() == 1);
  CHECK(plan.sizes[0].values.at("M") > plan.sizes[0].values.at("N"));
  CHECK(plan.sizes[0].sampleCtas == 2);
  CHECK(plan.unreached.empty());
}

TEST_CASE("threshold sizes: a flat index reading a size against a constant") {
  // blockIdx.y * N + j == 70000: the flat index of C's element, reached
  // only where M * N passes 70000.
  ThresholdPlan plan = planOf(parseOne(
      gemm(std::string(kLoop) + "acc[0] = select(i * N + j == 70000, 0.0, acc[0])\n")));
  REQUIRE(plan.sizes.size() == 1);
  const SimSize &far = plan.sizes[0];
  CHECK(far.values.at("M") * far.values.at("N") > 70000);
  CHECK(far.sampleCtas == 2);
  CHECK(plan.unreached.empty());
}

TEST_CASE("threshold sizes: a loop variable equal to a constant is taken in some iteration") {
  // `k == 500` drops one product (hack `k-500`): not monotone in k, so not
  // decided at the loop's ends; the iteration is an unknown of its own.
  ThresholdPlan plan = planOf(parseOne(
      gemm("for k in 0 .. K { acc[0] = acc[0] + select(k == 500, 0.0, A[i, k] * B[k, j]) }\n")));
  REQUIRE(plan.sizes.size() == 1);
  CHECK(plan.sizes[0].values.at("K") == 501);
  CHECK(plan.unreached.empty());
}

TEST_CASE("threshold sizes: a persistent tile index equal to a constant runs the CTA of that tile") {
  // `t == 300` in gemm_bf16_sm90's tile loop `for t in blockIdx.x .. tiles
  // step 132` (hack `tile-300`): a size with 301 tiles, run on CTA 0 and
  // the CTA whose tiles include 300.
  ThresholdPlan plan = planOf(parseOne(zeroedTileOfGemmBf16("      if t == 300 {\n")));
  REQUIRE(plan.sizes.size() == 2);
  const SimSize &tile = plan.sizes[1];
  int64_t tiles = (tile.values.at("N") + 255) / 256 * ((tile.values.at("M") + 127) / 128);
  CHECK(tiles > 300);
  REQUIRE(tile.ctas.size() == 2);
  CHECK(tile.ctas[1] == std::array<int64_t, 3>{300 % 132, 0, 0});
  CHECK(plan.unreached.empty());
}

TEST_CASE("threshold sizes: a float scalar times or over a size is pinned at the crossing where the pins run") {
  // `eps * f32(N) < 100.0` (hack `eps-times-size`): eps = 100 / N at the
  // size the pins run at (the edge, N = 384); `eps / f32(N) > 0.001`: eps =
  // 0.384. A size added before the factor (`(eps + 1.0) * f32(N)`) is no
  // affine term of eps.
  const char *text = R"(
kernel scaled(X: global f32[N], Y: global f32[N], eps: f32)
  where N % 128 == 0
  launch grid(N / 128) threads(128) target(sm_80)
{
  let i = blockIdx.x * 128 + threadIdx.x
  Y[i] = X[i] * select(eps * f32(N) < 100.0, eps, 0.0) + select(eps / f32(N) > 0.001, 1.0, 0.0) + select((eps + 1.0) * f32(N) < 3.0, 1.0, 0.0)
}
)";
  ThresholdPlan plan = floatPlanOf(parseOne(text));
  REQUIRE(plan.sizes.size() == 4);
  REQUIRE(plan.sizes[0].values.at("N") == 384);
  CHECK(plan.floats[0].at("eps") == doctest::Approx(100.0 / 384 / 2));
  CHECK(plan.floats[1].at("eps") == doctest::Approx(100.0 / 384 * 2));
  CHECK(plan.floats[2].at("eps") == doctest::Approx(0.384 / 2));
  CHECK(plan.floats[3].at("eps") == doctest::Approx(0.384 * 2));
  CHECK(plan.unreached.empty());
}

TEST_CASE("threshold sizes: a loop variable against a size is decided before the last iteration") {
  // `k * 4 < K + 300` drops the products from about K / 4 + 75 on where K
  // passes 100 (hack `mixed-chunk-skip` is rmsnorm's): both sides read sizes
  // or the variable, so it was a tail and no decision. It is false at the
  // second-to-last k = K - 2 from K = 103 (doubled: 206). A tail, false at
  // the last iteration alone (`k + 1 < K`), needs no size.
  ThresholdPlan plan = planOf(parseOne(gemm(
      "for k in 0 .. K { if k * 4 < K + 300 { acc[0] = acc[0] + A[i, k] * B[k, j] } }\n")));
  REQUIRE(plan.sizes.size() == 1);
  CHECK(plan.sizes[0].values.at("K") == 206);
  REQUIRE(plan.reasons.size() == 1);
  CHECK(plan.reasons[0].find("false in some iteration before the last") != std::string::npos);
  CHECK(plan.unreached.empty());
  ThresholdPlan tail = planOf(parseOne(gemm(
      "for k in 0 .. K { if k + 1 < K { acc[0] = acc[0] + A[i, k] * B[k, j] } else { acc[0] = "
      "acc[0] + A[i, k] * B[k, j] } }\n")));
  CHECK(tail.sizes.empty());
  CHECK(tail.unreached.empty());
}

TEST_CASE("threshold sizes: a comparison over constant loops and a thread index beside the k loop") {
  // Three loop variables (the key-block loop and a fragment's unrolled
  // loops) and a thread's global index against a constant offset: a window
  // of the first 300 positions past each row (hack `key-window-2048` is
  // attention's). The k loop is taken at its corners, the constant loops and
  // the thread are unknowns: false from K = 76 at row 0 (doubled: 152), run
  // on CTA 0. Before session 26 more than two loop variables were no
  // decision.
  ThresholdPlan plan = planOf(parseOne(gemm(
      "for k in 0 .. K { for u in 0 .. 2 { for v in 0 .. 2 { if k * 4 + u * 2 + v < i + 300 { "
      "acc[0] = acc[0] + A[i, k] * B[k, j] } } } }\n")));
  REQUIRE(plan.sizes.size() == 1);
  CHECK(plan.sizes[0].values.at("K") == 152);
  CHECK(plan.sizes[0].sampleCtas >= 1);
  CHECK(plan.reasons[0].find("false in some iteration") != std::string::npos);
  CHECK(plan.unreached.empty());
  // Under a thread condition no thread meets (threadIdx.x >= 512 in a CTA
  // of 256): the enclosing ifs' thread conditions join the outcome, so Z3
  // takes no thread that never runs the comparison, and there is no size.
  ThresholdPlan guarded = planOf(parseOne(gemm(
      "if threadIdx.x >= 512 { for k in 0 .. K { for u in 0 .. 2 { for v in 0 .. 2 { if k * 4 + "
      "u * 2 + v < i + 300 { acc[0] = acc[0] + A[i, k] * B[k, j] } } } } }\n")));
  CHECK(guarded.sizes.empty());
}

TEST_CASE("threshold sizes: a dividend reaching a divisor of sizes") {
  // `(c * c) % (4 N)` as a value, c the column CTA: c * c itself while
  // c * c < 4 N, as at N = 16 and 112 (c up to 6): the remainder's zero and
  // non-zero sides are both taken there, and were its only outcomes (hack
  // `head-poly-mod` is attention's head index). `c * c < 4 N` false needs
  // c >= 64, N >= 1040.
  ThresholdPlan plan = planOf(parseOne(gemm(
      "acc[0] = f32((blockIdx.x * blockIdx.x) % (N * 4))\n" + std::string(kLoop))));
  REQUIRE(plan.sizes.size() == 1);
  CHECK(plan.reasons[0].find("`blockIdx.x * blockIdx.x < N * 4` false") != std::string::npos);
  CHECK(plan.sizes[0].values.at("N") >= 1040);
  CHECK(plan.unreached.empty());
}
