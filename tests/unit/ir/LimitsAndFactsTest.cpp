// The where clause's equalities as a substitution (WhereFacts.h) and the
// size arithmetic of the declared-size limits (SizeLimits.h).
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/SizeLimits.h"
#include "ir/WhereFacts.h"

#include <doctest/doctest.h>

using namespace tilescope;

namespace {
std::vector<Expr> whereOf(const std::string &clause) {
  static llvm::SourceMgr sm; // buffers must outlive the nodes' locations
  Diagnostics diag(sm, false);
  Module m = parseModuleText("kernel k(A: global f32[M, N, C, D])\n  where " + clause +
                                 "\n  launch grid(1) threads(128) target(sm_90a)\n{\n}\n",
                             "w.tile", diag);
  REQUIRE(!diag.hasErrors());
  return m.kernels[0].constraints;
}
std::map<std::string, std::string> printed(const std::map<std::string, Expr> &facts) {
  std::map<std::string, std::string> out;
  for (const auto &[name, e] : facts)
    out[name] = print(e);
  return out;
}
} // namespace

TEST_CASE("where equalities bind a name to what it equals, either side") {
  auto f = printed(whereEqualities(whereOf("C == 1024, 64 == D, M % 128 == 0, N > 0")));
  CHECK(f == std::map<std::string, std::string>{{"C", "1024"}, {"D", "64"}});
}

TEST_CASE("where equalities compose and split conjunctions") {
  auto f = printed(whereEqualities(whereOf("N == 2 * M && M == C, C == 16")));
  CHECK(f == std::map<std::string, std::string>{{"C", "16"}, {"M", "16"}, {"N", "2 * 16"}});
}

TEST_CASE("where equalities ignore self-reference and second definitions") {
  auto f = printed(whereEqualities(whereOf("N == N + 0, M == 4, M == 8, C == M || D == 1")));
  CHECK(f == std::map<std::string, std::string>{{"M", "4"}});
}

TEST_CASE("where facts linear in one name, and bounds that meet, bind it too") {
  auto f = printed(whereEqualities(
      whereOf("C - 1024 == 0, 2 * D == 128, 1024 <= E, E < 1025, F >= 8, F <= 16, 3 * G == 7")));
  CHECK(f == std::map<std::string, std::string>{{"C", "1024"}, {"D", "64"}, {"E", "1024"}});
}

TEST_CASE("checked products detect int64 overflow") {
  CHECK(checkedProduct({4, 8, 2}) == 64);
  CHECK(checkedProduct({}) == 1);
  CHECK(!checkedProduct({int64_t{1} << 32, int64_t{1} << 31}));
  CHECK(checkedProduct({int64_t{1} << 31, int64_t{1} << 31}) == int64_t{1} << 62);
}

TEST_CASE("a layout's reach on an axis: strides, replicas, offsets and swizzle") {
  std::string error;
  auto l = Layout::make({{4, 64, Axis::m}, {32, 1, Axis::laneid}, {2, 1, Axis::m}},
                        {{2, 8, Axis::m}}, {{Axis::m, 3}}, std::nullopt, &error);
  REQUIRE(l);
  CHECK(layoutAxisReach(*l, Axis::m) == 3 * 64 + 1 + 8 + 3 + 1);
  CHECK(layoutAxisReach(*l, Axis::laneid) == 32);
  CHECK(layoutAxisReach(*l, Axis::warpid) == 0);
  // 128B swizzle of bf16 (M = 3, B = 3): whole blocks of 64 elements.
  auto s = Layout::make({{100, 1, Axis::m}}, {}, {}, Swizzle{3, 3, 3}, &error);
  REQUIRE(s);
  CHECK(layoutAxisReach(*s, Axis::m) == 128);
  auto ring = Layout::make({{3, 8192, Axis::m}, {128, 64, Axis::m}, {64, 1, Axis::m}}, {}, {},
                           Swizzle{3, 3, 3}, &error);
  REQUIRE(ring);
  CHECK(layoutAxisReach(*ring, Axis::m) == 3 * 8192);
}

TEST_CASE("buffer footprints: shared bytes, registers per thread, tensor-memory columns") {
  auto shared = bufferFootprint(MemScope::Shared, Dtype::bf16, {128, 64}, nullptr);
  REQUIRE(shared);
  CHECK(shared->sharedBytes == 128 * 64 * 2);
  auto reg = bufferFootprint(MemScope::Reg, Dtype::f32, {8}, nullptr);
  REQUIRE(reg);
  CHECK(reg->registersPerThread == 8); // the whole tile in every thread
  std::string error;
  auto spread = Layout::make({{128, 1, Axis::tx}, {16, 1, Axis::m}}, {}, {}, std::nullopt, &error);
  REQUIRE(spread);
  auto half = bufferFootprint(MemScope::Reg, Dtype::bf16, {128, 16}, &*spread);
  REQUIRE(half);
  CHECK(half->registersPerThread == 8); // 16 bf16 values in 8 registers
  auto tmem = bufferFootprint(MemScope::Tmem, Dtype::f32, {128, 256}, nullptr);
  REQUIRE(tmem);
  CHECK(tmem->tmemColumns == 256);
  CHECK(tmem->tmemLanes == 128);
  CHECK(!bufferFootprint(MemScope::Reg, Dtype::f32, {int64_t{1} << 40, int64_t{1} << 40}, nullptr));
}

// fuzz_parser under UBSan (2026-11-25): `reg acc: f32[9223372036854775807]`
// saturated the bit count and then added 31 to it, a signed overflow.
TEST_CASE("a register tile past 2^63 bits per thread saturates the register count") {
  auto huge = bufferFootprint(MemScope::Reg, Dtype::f32, {INT64_MAX}, nullptr);
  REQUIRE(huge);
  CHECK(huge->registersPerThread == INT64_MAX);
  auto bytes = bufferFootprint(MemScope::Reg, Dtype::u8, {INT64_MAX}, nullptr);
  REQUIRE(bytes);
  CHECK(bytes->registersPerThread == INT64_MAX);
}

TEST_CASE("a power of one name equal to a constant binds its one root") {
  // Odd powers have one integer root whatever the sign; an even power's
  // root is taken only for a name known to be non-negative.
  auto f = printed(whereEqualities(whereOf("C * C == 1048576, 2 * D * D * D == 54, "
                                           "M * M == 1000, N * N * N == -8"),
                                   {"C"}));
  CHECK(f == std::map<std::string, std::string>{{"C", "1024"}, {"D", "3"}, {"N", "-2"}});
  // Without knowing C >= 0, C * C == 1048576 has the roots 1024 and -1024.
  CHECK(whereEqualities(whereOf("C * C == 1048576"), {}).empty());
}

TEST_CASE("divisibility facts: exact divisions cancel, others stay") {
  static llvm::SourceMgr sm;
  Diagnostics diag(sm, false);
  Module m = parseModuleText("kernel k(A: global f32[M, N, C])\n"
                             "  where C % 1024 == 0, N % 64 == 0, N % 96 == 0, M == 2 * C\n"
                             "  launch grid(1) threads(128) target(sm_90a)\n{\n}\n",
                             "d.tile", diag);
  REQUIRE(!diag.hasErrors());
  WhereFacts facts = whereFacts(m.kernels[0]);
  CHECK(facts.multipleOf == std::map<std::string, int64_t>{{"C", 1024}, {"N", 192}});
  auto parsed = [&](const std::string &e) {
    Module k = parseModuleText("kernel k(A: global f32[M, N, C])\n  where " + e +
                                   " > 0\n  launch grid(1) threads(128) target(sm_90a)\n{\n}\n",
                               "e.tile", diag);
    REQUIRE(!diag.hasErrors());
    return as<Binary>(k.kernels[0].constraints[0]).lhs;
  };
  auto text = [&](const std::string &e) { return facts.affine(parsed(e)).str(); };
  CHECK(text("C / 1024 * 1024") == "C");
  CHECK(text("C / 256 * 256") == "C");
  CHECK(text("C % 512") == "0");
  CHECK(text("C / 1024") == "C / 1024");
  CHECK(text("C / 2048 * 2048") == "2048 * (C / 2048)");
  CHECK(text("N / 192 * 192 - N") == "0");
  CHECK(text("N / 64") == "3 * (N / 192)");
  // M is bound to 2 * C by the equality, then C's divisibility applies.
  CHECK(text("M / 2048 * 2048") == "2 * C");
  CHECK(text("C + 1") == "C + 1");
}
