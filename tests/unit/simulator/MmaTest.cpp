// Exact bits of the tensor-core MMA model on hand-worked cases: truncation
// where an fp32 FMA would round, per-term truncation below the largest
// exponent, cancellation, subnormal operands, fp8's 13-bit result, specials;
// and the instruction table's names and refusals.
#include "simulator/Mma.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>

using namespace tilescope;
using namespace tilescope::mma;
using namespace tilescope::numerics;

namespace {
constexpr FusedSumParams kBf16Sm90{25, 23};
constexpr FusedSumParams kFp8Sm90{13, 13};

float p2(int e) {
  return std::ldexp(1.0f, e);
}

ProductTerm product(float a, float b, Dtype type) {
  const FloatFormat &f = *floatFormat(type);
  REQUIRE(isRepresentable(a, f));
  REQUIRE(isRepresentable(b, f));
  return {decompose(encode(a, f), f), decompose(encode(b, f), f), f.manBits, f.manBits, 0, false};
}

uint32_t sum(float c, std::vector<ProductTerm> terms, FusedSumParams params = kBf16Sm90) {
  return fusedSum(bitsOf(c), terms, params);
}

MmaInstruction find(TargetKind target, std::string_view name) {
  std::string error;
  auto inst = findInstruction(target, name, &error);
  INFO(error);
  REQUIRE(inst.has_value());
  return *inst;
}
} // namespace

TEST_CASE("the result is truncated where an fp32 FMA would round up") {
  // 1 + 1.5 * 2^-24: fp32 rounds to 1 + 2^-23, the tensor core truncates to 1.
  uint32_t d = sum(1.0f, {product(1.5f * p2(-12), p2(-12), Dtype::bf16)});
  CHECK(d == bitsOf(1.0f));
  CHECK(bitsOf(std::fma(1.5f * p2(-12), p2(-12), 1.0f)) == bitsOf(1.0f + p2(-23)));
}

TEST_CASE("each term is truncated toward zero below the largest exponent") {
  // -2^-26 lies below the 2^-25 quantum fixed by C = 1: it vanishes, and the
  // result stays 1 (truncating the exact sum would give 1 - 2^-24).
  CHECK(sum(1.0f, {product(-p2(-13), p2(-13), Dtype::bf16)}) == bitsOf(1.0f));
  // A positive term of 2^-26 vanishes too.
  CHECK(sum(1.0f, {product(p2(-13), p2(-13), Dtype::bf16)}) == bitsOf(1.0f));
  // 3 * 2^-26 keeps its 2^-25 part only.
  CHECK(sum(1.0f, {product(1.5f * p2(-13), p2(-13), Dtype::bf16)}) == bitsOf(1.0f));
  CHECK(sum(2.0f, {product(1.5f * p2(-12), p2(-12), Dtype::bf16)}) == bitsOf(2.0f));
}

TEST_CASE("cancellation leaves a small term truncated to the large terms' quantum") {
  float a = 1.0078125f * p2(-10); // 1 + 2^-7 in bf16
  // (1 + 2^-7)^2 * 2^-20 = 2^-20 + 2^-26 + 2^-34: everything below 2^-25 is lost
  // although the exact remainder fits an fp32.
  uint32_t d = sum(1.0f, {product(1.0f, -1.0f, Dtype::bf16), product(a, a, Dtype::bf16)});
  CHECK(d == bitsOf(p2(-20)));
  // With no large terms, the same product is kept whole.
  CHECK(sum(0.0f, {product(a, a, Dtype::bf16)}) == bitsOf(p2(-20) + p2(-26) + p2(-34)));
}

TEST_CASE("a subnormal operand counts at its format's minimum exponent") {
  // p1 = 2^-133 * 2^10 = 2^-123 has the model exponent -126 + 10 = -116, so the
  // quantum is 2^-141 and 1.5 * 2^-141 loses its half.
  float subnormal = p2(-133); // bf16 code 0x0001
  uint32_t d = sum(0.0f, {product(subnormal, p2(10), Dtype::bf16),
                          product(1.5f * p2(-70), p2(-71), Dtype::bf16)});
  CHECK(d == bitsOf(p2(-123) + p2(-141)));
}

TEST_CASE("the largest exponent is a sum of exponents, not of the product's value") {
  // 1.5 * 1.5 = 2.25 has exponent 0 (not 1): the quantum is 2^-25 and a term
  // of 2^-25 survives; it is then lost in the 23-bit output (2.25 has ulp 2^-22).
  uint32_t d =
      sum(0.0f, {product(1.5f, 1.5f, Dtype::bf16), product(p2(-12), p2(-13), Dtype::bf16)});
  CHECK(d == bitsOf(2.25f));
  // At exponent 0 the 2^-23 term is kept exactly.
  CHECK(sum(0.0f, {product(1.0f, 1.0f, Dtype::bf16), product(p2(-11), p2(-12), Dtype::bf16)}) ==
        bitsOf(1.0f + p2(-23)));
}

TEST_CASE("fp8 on sm_90 keeps 13 fractional bits and a 13-bit result") {
  // 1 + 1 + 2^-13: the term survives the alignment (quantum 2^-13) but the
  // result 2 + 2^-13 needs 14 bits and is truncated to 2.
  uint32_t d = sum(
      1.0f, {product(1.0f, 1.0f, Dtype::f8e4m3), product(p2(-6), p2(-7), Dtype::f8e4m3)}, kFp8Sm90);
  CHECK(d == bitsOf(2.0f));
  // 128 + 2^-6 fits 13 bits; 256 + 2^-6 loses the term in the alignment.
  CHECK(sum(128.0f, {product(1.0f, p2(-6), Dtype::f8e4m3)}, kFp8Sm90) == bitsOf(128.0f + p2(-6)));
  CHECK(sum(256.0f, {product(1.0f, p2(-6), Dtype::f8e4m3)}, kFp8Sm90) == bitsOf(256.0f));
  // C itself is cut to 13 mantissa bits.
  CHECK(sum(1.0f + p2(-20), {product(0.0f, 1.0f, Dtype::f8e4m3)}, kFp8Sm90) == bitsOf(1.0f));
  CHECK(sum(-(1.0f + p2(-13)) * 2, {}, kFp8Sm90) == bitsOf(-2.0f - p2(-12)));
}

TEST_CASE("NaN, infinities and zeros") {
  CHECK(sum(floatOf(0xFFC00001u), {product(1.0f, 1.0f, Dtype::bf16)}) == kCanonicalNanF32);
  CHECK(sum(0.0f, {product(INFINITY, 0.0f, Dtype::bf16)}) == kCanonicalNanF32);
  CHECK(sum(-INFINITY, {product(INFINITY, 1.0f, Dtype::bf16)}) == kCanonicalNanF32);
  CHECK(sum(1.0f, {product(INFINITY, -2.0f, Dtype::bf16)}) == bitsOf(-INFINITY));
  CHECK(sum(INFINITY, {product(3.0f, -2.0f, Dtype::bf16)}) == bitsOf(INFINITY));
  const FloatFormat &e4m3 = *floatFormat(Dtype::f8e4m3);
  ProductTerm nanTerm{decompose(0x7F, e4m3), decompose(0x38, e4m3), 3, 3, 0, false};
  CHECK(fusedSum(bitsOf(1.0f), {&nanTerm, 1}, kFp8Sm90) == kCanonicalNanF32);
  CHECK(sum(-0.0f, {product(0.0f, -1.0f, Dtype::bf16)}) == 0x80000000u);
  CHECK(sum(0.0f, {product(0.0f, -1.0f, Dtype::bf16)}) == 0u);
  CHECK(sum(-1.0f, {product(1.0f, 1.0f, Dtype::bf16)}) == 0u);
  // Past f32's range: infinity of the sum's sign.
  CHECK(sum(floatOf(0x7F7FFFFFu), {product(p2(100), p2(100), Dtype::bf16)}) == bitsOf(INFINITY));
}

TEST_CASE("small integers sum exactly through a whole wgmma") {
  MmaInstruction inst = find(TargetKind::sm_90a, "wgmma.m64n8k16.f32.bf16.bf16");
  CHECK(inst.m == 64);
  CHECK(inst.n == 8);
  CHECK(inst.k == 16);
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> small(-16, 16), big(-1000, 1000);
  std::vector<uint32_t> a(64 * 16), b(16 * 8), c(64 * 8);
  std::vector<int> ai(a.size()), bi(b.size()), ci(c.size());
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = f32ToBf16(float(ai[i] = small(rng)));
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = f32ToBf16(float(bi[i] = small(rng)));
  for (size_t i = 0; i < c.size(); ++i)
    c[i] = bitsOf(float(ci[i] = big(rng)));
  MmaResult r = evaluate(inst, {a, b, c, {}, {}});
  REQUIRE(r.ok);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 8; ++j) {
      int exact = ci[i * 8 + j];
      for (int k = 0; k < 16; ++k)
        exact += ai[i * 16 + k] * bi[k * 8 + j];
      CHECK(r.d[i * 8 + j] == bitsOf(float(exact)));
    }
}

TEST_CASE("block-scaled fp4 applies the ue8m0 scale of each group of 16") {
  MmaInstruction inst =
      find(TargetKind::sm_100a, "tcgen05.mma.block_scale.m128n8k64.f32.e2m1.e2m1.ue8m0");
  std::vector<uint32_t> a(128 * 64, 0x2 /* 1.0 */), b(64 * 8, 0x3 /* 1.5 */), c(128 * 8, 0);
  std::vector<uint32_t> scaleA(128 * 4), scaleB(4 * 8, 0x7F /* 1 */);
  for (int i = 0; i < 128; ++i)
    for (int g = 0; g < 4; ++g)
      scaleA[i * 4 + g] = 0x7F + g; // 2^g for group g
  MmaResult r = evaluate(inst, {a, b, c, scaleA, scaleB});
  REQUIRE(r.ok);
  // 16 * 1.5 * (1 + 2 + 4 + 8) = 360
  CHECK(r.d[0] == bitsOf(360.0f));
  CHECK(r.d[128 * 8 - 1] == bitsOf(360.0f));
}

TEST_CASE("evaluation refuses an instruction whose numerics are unknown") {
  MmaInstruction inst = find(TargetKind::sm_80, "mma.sync.m16n8k16.f32.bf16.bf16");
  std::vector<uint32_t> a(16 * 16), b(16 * 8), c(16 * 8);
  MmaResult r = evaluate(inst, {a, b, c, {}, {}});
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("unknown") != std::string::npos);
}

TEST_CASE("evaluation refuses operands of the wrong size") {
  MmaInstruction inst = find(TargetKind::sm_90a, "mma.sync.m16n8k16.f32.bf16.bf16");
  std::vector<uint32_t> a(16 * 15), b(16 * 8), c(16 * 8);
  MmaResult r = evaluate(inst, {a, b, c, {}, {}});
  CHECK_FALSE(r.ok);
  CHECK(r.error == "A has 240 elements, mma.sync.m16n8k16.f32.bf16.bf16 needs 256");
}

TEST_CASE("every table row is found again by its own name") {
  for (const auto &row : instructionTable()) {
    for (int n : {row.nMin, row.nMax}) {
      std::string name = instructionName(row, n);
      INFO(name);
      MmaInstruction inst = find(row.target, name);
      CHECK(inst.row == &row);
      CHECK(inst.n == n);
    }
  }
}

TEST_CASE("instruction lookup explains what is wrong") {
  std::string error;
  CHECK_FALSE(findInstruction(TargetKind::sm_80, "wgmma.m64n8k16.f32.bf16.bf16", &error));
  CHECK(error == "'wgmma.m64n8k16.f32.bf16.bf16' is not an instruction of sm_80 (it is one of "
                 "sm_90a)");
  CHECK_FALSE(findInstruction(TargetKind::sm_90a, "wgmma.m64n12k16.f32.bf16.bf16", &error));
  CHECK(error == "'wgmma.m64n12k16.f32.bf16.bf16' has an N this instruction does not take "
                 "(wgmma.m64n{8..256/8}k16.f32.bf16.bf16)");
  CHECK_FALSE(findInstruction(TargetKind::sm_90a, "wgmma.f32.bf16", &error));
  CHECK(error == "'wgmma.f32.bf16' has no shape such as m64n8k16");
  CHECK_FALSE(findInstruction(TargetKind::sm_90a, "wgmma.m64n8k16.f32.f64.f64", &error));
  CHECK(error == "unknown MMA instruction 'wgmma.m64n8k16.f32.f64.f64' for sm_90a");
}
