// Visitors and mutators: traversal order, sharing of unchanged subtrees, and
// the passes built on them (substitute, foldConstants, namesUsed).
#include "ir/Visitor.h"
#include "ir/Parser.h"
#include "ir/Printer.h"

#include <doctest/doctest.h>

using namespace tilescope;

namespace {
Kernel parseKernel(const std::string &body) {
  static llvm::SourceMgr sm; // buffers must outlive the nodes' locations
  Diagnostics diag(sm, false);
  Module m = parseModuleText("kernel k(A: global f32[M, N])\n  launch grid(1) threads(128) "
                             "target(sm_90a)\n{\n" +
                                 body + "}\n",
                             "v.tile", diag);
  REQUIRE(!diag.hasErrors());
  return m.kernels[0];
}
Expr firstLetValue(const Kernel &k) {
  return as<Let>(k.body[0]).value;
}
} // namespace

TEST_CASE("a visitor sees every node; overriding one kind counts just those") {
  struct CountIndices : IRVisitor {
    int indices = 0, vars = 0;
    void visitIndex(const Index &x) override {
      ++indices;
      IRVisitor::visitIndex(x);
    }
    void visitVar(const Var &) override { ++vars; }
  } v;
  Kernel k = parseKernel("  for i in 0 .. M {\n    A[i, 0] = A[i, 1] + A[0, i]\n  }\n");
  v.visit(k);
  CHECK(v.indices == 3);
  CHECK(v.vars == 1 /*M in shape*/ + 1 /*N*/ + 1 /*loop end*/ + 6 /*A x3, i x3*/);
}

TEST_CASE("a mutator shares every subtree it did not change") {
  Kernel k = parseKernel("  let x = (1 + 2) * M\n  let y = M\n");
  Kernel same = IRMutator().mutate(k);
  CHECK(same.body[0] == k.body[0]);
  CHECK(same.body[1] == k.body[1]);
  Kernel folded = foldConstants(k);
  CHECK(folded.body[0] != k.body[0]);
  CHECK(folded.body[1] == k.body[1]);
  CHECK(print(firstLetValue(folded)) == "3 * M");
}

TEST_CASE("foldConstants folds integer arithmetic and drops identities") {
  Kernel k =
      parseKernel("  let a = M * 1 + 0\n  let b = (4 + 4) / 2 - M / 1\n  let c = 0 + M * (2 - 1)\n"
                  "  let d = 7 % 4 * N\n");
  Kernel f = foldConstants(k);
  CHECK(print(as<Let>(f.body[0]).value) == "M");
  CHECK(print(as<Let>(f.body[1]).value) == "4 - M");
  CHECK(print(as<Let>(f.body[2]).value) == "M");
  CHECK(print(as<Let>(f.body[3]).value) == "3 * N");
}

TEST_CASE("substitute replaces free names and respects rebinding") {
  Kernel k = parseKernel("  let a = i + 1\n  for i in 0 .. 4 {\n    let b = i\n  }\n  let i = 3\n"
                         "  let c = i\n");
  Block out = substitute(k.body, {{"i", IntImm::make(10)}});
  CHECK(print(as<Let>(out[0]).value) == "10 + 1");
  CHECK(print(as<Let>(as<For>(out[1]).body[0]).value) == "i"); // the loop's own i
  CHECK(print(as<Let>(out[3]).value) == "i");                  // after `let i = 3`
}

TEST_CASE("namesUsed lists variables and buffers once, sorted") {
  Kernel k = parseKernel("  let a = A[M - 1, N] + A[0, 0] * f32(M)\n");
  CHECK(namesUsed(firstLetValue(k)) == std::set<std::string>{"A", "M", "N"});
}
