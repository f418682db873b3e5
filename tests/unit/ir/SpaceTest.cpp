// Kernel parameters (ir/Space.h) and instantiation (ir/Instantiate.h): the
// parameterised kernel parses, prints canonically and round-trips; a point
// instantiates to a kernel without parameters whose text and hash are those
// of the same kernel written by hand; constraints prune points with reasons.
#include "ir/Checker.h"
#include "ir/Instantiate.h"
#include "ir/Parser.h"
#include "ir/Printer.h"

#include <doctest/doctest.h>

#include <string>

using namespace tilescope;

namespace {

const char *kFamily = R"(kernel tiles(A: global f32[M, N])
  param BM in {64, 128}
  param STAGES in 2 .. 5
  param ORDER in {row, column}
  param FAST in {false, true}
  point big(BM = 128, STAGES = 3, ORDER = column, FAST = true)
  where STAGES * BM <= 384, M % BM == 0, M > 0
  launch grid((M + BM - 1) / BM) threads(32 * (STAGES + 1)) target(sm_90a)
{
  shared S: f32[STAGES, BM] layout(S[(STAGES,BM):(BM,1)])
  if ORDER == row {
    let r = blockIdx.x * BM
  } else {
    let r = blockIdx.x * BM + 1
  }
  if FAST && threadIdx.x == 0 {
    A[r, 0] = 1.0
  }
  for k in 0 .. select(FAST, STAGES, 1) {
    A[0, k] = 2.0
  }
}
)";

struct Parsed {
  llvm::SourceMgr sm;
  Diagnostics diag{sm, false};
  Module module;
};

std::unique_ptr<Parsed> parse(const std::string &text) {
  auto p = std::make_unique<Parsed>();
  p->module = parseModuleText(text, "t.tile", p->diag);
  return p;
}

std::string firstError(const Diagnostics &d) {
  for (const Diagnostic &x : d.all())
    if (x.kind == Diagnostic::Error)
      return x.message;
  return "";
}

// Parses `text` (no parse error) and runs the checker, which must report
// exactly one error; its diagnostics.
std::unique_ptr<Parsed> parseWithOneCheckError(const std::string &text) {
  auto p = parse(text);
  REQUIRE_FALSE(p->diag.hasErrors());
  CHECK(checkModule(p->module, p->diag) == 1);
  return p;
}

// The one error the checker reports on `text`.
std::string checkError(const std::string &text) {
  return firstError(parseWithOneCheckError(text)->diag);
}

} // namespace

TEST_CASE("a parameterised kernel prints canonically and round-trips") {
  auto p = parse(kFamily);
  REQUIRE_FALSE(p->diag.hasErrors());
  const Kernel &k = p->module.kernels[0];
  REQUIRE(k.space.params.size() == 4);
  CHECK(k.space.params[1].domainText() == "2 .. 5");
  CHECK(k.space.size() == 2 * 3 * 2 * 2);
  std::string text = print(p->module);
  CHECK(text.find("  param ORDER in {row, column}\n") != std::string::npos);
  CHECK(text.find("  point big(BM = 128, STAGES = 3, ORDER = column, FAST = true)\n") !=
        std::string::npos);
  CHECK(text.find("threads(32 * (STAGES + 1))") != std::string::npos);
  CHECK(text.find("layout(S[(STAGES,BM):(BM,1)])") != std::string::npos);
  auto again = parse(text);
  REQUIRE_FALSE(again->diag.hasErrors());
  CHECK(equal(p->module, again->module));
  CHECK(print(again->module) == text);
}

TEST_CASE("a point instantiates to the kernel written by hand") {
  auto p = parse(kFamily);
  REQUIRE_FALSE(p->diag.hasErrors());
  const Kernel &k = p->module.kernels[0];
  Instance inst = instantiate(k, k.space.points[0].values);
  REQUIRE(inst.kernel);
  const char *expected = R"(kernel tiles(A: global f32[M, N])
  where M % 128 == 0, M > 0
  launch grid((M + 127) / 128) threads(128) target(sm_90a)
{
  shared S: f32[3, 128] layout(S[(3,128):(128,1)])
  let r = blockIdx.x * 128 + 1
  if threadIdx.x == 0 {
    A[r, 0] = 1.0
  }
  for k in 0 .. 3 {
    A[0, k] = 2.0
  }
}
)";
  auto hand = parse(expected);
  REQUIRE_FALSE(hand->diag.hasErrors());
  CHECK(print(*inst.kernel) == expected);
  CHECK(structuralHash(*inst.kernel) == structuralHash(hand->module.kernels[0]));
  CHECK(inst.kernel->space.empty());
  Module one;
  one.kernels.push_back(*inst.kernel);
  Diagnostics diag(p->sm, false);
  CHECK(checkModule(one, diag) == 0);
}

TEST_CASE("a constraint over parameters rejects a point with its reason") {
  auto p = parse(kFamily);
  const Kernel &k = p->module.kernels[0];
  Diagnostics diag(p->sm, false);
  auto point = parsePoint(k, "big,STAGES=4", diag);
  REQUIRE(point);
  CHECK(pointText(*point) == "BM=128,STAGES=4,ORDER=column,FAST=true");
  Instance rejected = instantiate(k, *point); // 4 * 128 > 384
  CHECK_FALSE(rejected.kernel);
  CHECK(rejected.byConstraint);
  CHECK(rejected.reason == "constraint 'STAGES * BM <= 384' is false");
  SpaceEnumeration all = enumerateSpace(k, 1000);
  CHECK(all.total == 24);
  int valid = 0;
  for (const SpacePoint &sp : all.points) {
    if (sp.instance.kernel)
      ++valid;
    else
      CHECK(sp.instance.reason == "constraint 'STAGES * BM <= 384' is false");
  }
  // BM=64: every STAGES (3 x 2 x 2 = 12); BM=128: STAGES 2 and 3 (8).
  CHECK(valid == 20);
  CHECK(all.points.size() == 24);
}

TEST_CASE("--set errors name the parameter and its domain") {
  auto p = parse(kFamily);
  const Kernel &k = p->module.kernels[0];
  {
    Diagnostics diag(p->sm, false);
    CHECK_FALSE(parsePoint(k, "BN=64", diag));
    CHECK(firstError(diag) ==
          "--set gives 'BN', but kernel 'tiles' has no parameter of that name (its parameters: "
          "BM, STAGES, ORDER, FAST); did you mean 'BM'?");
  }
  {
    Diagnostics diag(p->sm, false);
    CHECK_FALSE(parsePoint(k, "big,STAGES=5", diag));
    CHECK(firstError(diag) == "--set gives STAGES=5, which is not a value of parameter 'STAGES' "
                              "(its values: 2 .. 5)");
  }
  {
    Diagnostics diag(p->sm, false);
    CHECK_FALSE(parsePoint(k, "BM=64", diag));
    CHECK(firstError(diag) == "--set gives no value for parameter 'STAGES' (its values: 2 .. 5)");
  }
}

TEST_CASE("declarations that cannot be right are errors") {
  SUBCASE("a parameter named like a shape symbol") {
    CHECK(
        checkError("kernel k(A: global f32[M])\n  param M in {1, 2}\n  launch grid(1) threads(32) "
                   "target(sm_90a)\n{\n}\n") ==
        "parameter 'M' is named like a tensor, scalar or shape symbol "
        "of the kernel");
  }
  SUBCASE("a named point outside the constraints") {
    CHECK(checkError("kernel k(A: global f32[M])\n  param X in {1, 2}\n  point p(X = 2)\n  where X "
                     "< 2\n  launch grid(1) threads(32) target(sm_90a)\n{\n}\n") ==
          "point 'p' (X=2) is not in the space: constraint 'X < 2' is "
          "false");
  }
  SUBCASE("a parameter in a kernel without parameters") {
    CHECK(
        checkError("kernel k(A: global f32[M])\n  launch grid(1) threads(32) target(sm_90a)\n{\n  "
                   "shared S: f32[4] layout(S[4:Q])\n}\n") ==
        "the layout of 'S' must have constant numbers in a kernel without parameters");
  }
  SUBCASE("an empty range") {
    auto p = parse("kernel k(A: global f32[M])\n  param S in 4 .. 4\n  launch grid(1) threads(32) "
                   "target(sm_90a)\n{\n}\n");
    CHECK(firstError(p->diag) == "the range 4 .. 4 of parameter 'S' is empty (ranges are "
                                 "half-open, like a loop's: 2 .. 9 is 2 to 8)");
  }
}

TEST_CASE("a point whose instance does not check is reported with the point") {
  // The store index is X, inside the 64-element buffer only when X < 64.
  auto p = parseWithOneCheckError("kernel k(A: global f32[M])\n  param X in {32, 64}\n  "
                                  "launch grid(1) threads(32) target(sm_90a)\n{\n  shared S: "
                                  "f32[64]\n  S[X] = 1.0\n}\n");
  bool noted = false;
  for (const Diagnostic &d : p->diag.all())
    noted |= d.kind == Diagnostic::Note && d.message == "at point X=64 of kernel 'k'";
  CHECK(noted);
}
