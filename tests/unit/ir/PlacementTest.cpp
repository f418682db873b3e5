// Placements of tensor parameters over the devices (ir/Placement.h,
// docs/scales.md): the readings, the polynomial comparison of extents, the
// text round trip, JSON and equality.
#include "ir/Placement.h"
#include "ir/Checker.h"
#include "ir/ConcreteEval.h"
#include "ir/IrJson.h"
#include "ir/Parser.h"
#include "ir/Printer.h"

#include <doctest/doctest.h>

#include <string>

using namespace tilescope;

namespace {

// One kernel over N devices with the tensor parameters `params`.
Module parsed(const std::string &params, std::string *errors) {
  std::string text = "kernel k(" + params +
                     ")\n  where N >= 1, N <= 8\n  launch devices(N) grid(1) threads(32) "
                     "target(sm_90a)\n{\n}\n";
  llvm::SourceMgr sm;
  Diagnostics diag(sm, false);
  Module m = parseModuleText(text, "t.tile", diag);
  if (!diag.hasErrors())
    checkModule(m, diag);
  for (const auto &d : diag.all())
    *errors += d.message + "\n";
  return m;
}

std::optional<PlacementReading> readingOf(const std::string &params, std::string *errors) {
  Module m = parsed(params, errors);
  if (!errors->empty())
    return std::nullopt;
  const Kernel &k = m.kernels.at(0);
  std::string why;
  llvm::SMLoc at;
  for (const Param &p : k.params)
    if (p.isTensor)
      return readPlacement(k, p, &why, &at);
  return std::nullopt;
}

} // namespace

TEST_CASE("a placement reads blocked along the dimension its device iter stands before") {
  std::string errors;
  auto rows = readingOf("A: global f32[MD, K] placement(S[(N,MD,K):(1@pid,K,1)])", &errors);
  REQUIRE(rows);
  CHECK(rows->kind == PlacementReading::Kind::Blocked);
  CHECK(rows->dim == 0);
  CHECK(rows->str() == "blocked along dimension 0 (rows)");
  auto cols = readingOf("A: global f32[M, KD] placement(S[(M,ndev,KD):(KD,1@pid,1)])", &errors);
  REQUIRE(cols);
  CHECK(cols->dim == 1);
  // The instance's elements may be enumerated by other iters than its
  // dimensions, as long as they are row-major: the extents are compared as
  // polynomials (K * H written H * K).
  auto flat = readingOf(
      "H: i32, K: i32, A: global f32[2, H * K] placement(S[(2,N,K * H):(H * K,1@pid,1)])", &errors);
  REQUIRE(flat);
  CHECK(flat->dim == 1);
  auto replicated =
      readingOf("A: global f32[M, K] placement(S[(M,K):(K,1)] + R[N:1@pid])", &errors);
  REQUIRE(replicated);
  CHECK(replicated->kind == PlacementReading::Kind::Replicated);
  CHECK(replicated->str() == "replicated");
  CHECK(errors.empty());
}

TEST_CASE("the checker refuses a placement that is not one block per device or a replica") {
  std::string errors;
  readingOf("A: global f32[M, K] placement(S[(N,M,K):(1@pid,(K + 1),1)])", &errors);
  CHECK(errors == "placement of 'A': the m iters must enumerate the instance [M, K] row-major: "
                  "iter 0 has stride K + 1, the product of the later extents is needed\n");
  errors.clear();
  readingOf("A: global f32[M, K] placement(S[(N,M,K,N):(1@pid,K,1,1@pid)])", &errors);
  CHECK(errors.find("one device iter") != std::string::npos);
}

TEST_CASE("a placement prints back, reads back from JSON, and takes part in equality") {
  std::string errors;
  Module m = parsed("A: global f32[MD, K] placement(S[(N,MD,K):(1@pid,K,1)]), B: global f32[4] "
                    "placement(S[(N,4):(1@pid,1)])",
                    &errors);
  REQUIRE(errors.empty());
  std::string printed = print(m);
  CHECK(printed.find("A: global f32[MD, K] placement(S[(N,MD,K):(1@pid,K,1)]), B: global f32[4] "
                     "placement(S[(N,4):(1@pid,1)])") != std::string::npos);
  IrJsonError error;
  auto back = moduleFromJson(moduleToJson(m), &error);
  REQUIRE(back);
  CHECK(equal(*back, m));
  Module other = parsed("A: global f32[MD, K] placement(S[(MD,K):(K,1)] + R[N:1@pid]), B: global "
                        "f32[4] placement(S[(N,4):(1@pid,1)])",
                        &errors);
  REQUIRE(errors.empty());
  CHECK(!equal(other, m));
}

TEST_CASE("at concrete sizes a placement is a layout over pid and m") {
  std::string errors;
  Module m = parsed("A: global f32[MD, K] placement(S[(N,MD,K):(1@pid,K,1)])", &errors);
  REQUIRE(errors.empty());
  const Param &a = m.kernels.at(0).params.at(0);
  auto layout = placementLayout(
      a,
      [](const Expr &e) {
        return evalConcrete(e, [](const Expr &leaf) -> std::optional<int64_t> {
          if (leaf->kind != ExprKind::Var)
            return std::nullopt;
          const std::string &n = as<Var>(leaf).name;
          return n == "N" ? 2 : n == "MD" ? 4 : n == "K" ? 8 : std::optional<int64_t>();
        });
      },
      &errors);
  REQUIRE(layout);
  PhysCoord owner = layout->base(5 * 8 + 3); // row 5, column 3 of the logical [8, 8]
  CHECK(owner.get(Axis::pid) == 1);
  CHECK(owner.get(Axis::m) == 11);
  CHECK(logicalShape({PlacementReading::Kind::Blocked, 0}, {4, 8}, 2) ==
        std::vector<int64_t>{8, 8});
}
