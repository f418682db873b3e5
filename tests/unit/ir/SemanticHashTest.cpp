// The semantic hash (ir/SemanticHash.h): pairs of kernels that mean the same
// and must collide, and pairs that differ in meaning and must not; and the
// "did you mean" of unknown names (ir/Suggest.h).
#include "ir/SemanticHash.h"
#include "ir/Checker.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Suggest.h"

#include <doctest/doctest.h>

#include <string>

using namespace tilescope;

namespace {

// A small kernel around `body`, named `name`, with the where clause `where`.
std::string kernelText(const std::string &body, const std::string &name = "k",
                       const std::string &where = "M % 64 == 0, N > 0") {
  return "kernel " + name + "(A: global f32[M, N], B: global f32[M, N])\n  where " + where +
         "\n  launch grid(M / 64) threads(64) target(sm_90a)\n{\n" + body + "}\n";
}

uint64_t hashOf(const std::string &text) {
  llvm::SourceMgr sm;
  Diagnostics diag(sm, false);
  Module m = parseModuleText(text, "t.tile", diag);
  if (!diag.hasErrors())
    checkModule(m, diag);
  for (const Diagnostic &d : diag.all())
    INFO(d.line << ":" << d.column << ": " << d.message);
  REQUIRE(!diag.hasErrors());
  REQUIRE(m.kernels.size() == 1);
  return semanticHash(m.kernels[0]);
}

const char *kBase = "  let i = blockIdx.x * 64 + threadIdx.x\n"
                    "  for j in 0 .. N {\n"
                    "    B[i, j] = A[i, j] * 2.0\n"
                    "  }\n";

} // namespace

TEST_CASE("semantic hash: spellings that mean the same collide") {
  uint64_t base = hashOf(kernelText(kBase));
  SUBCASE("commutative operands: 64 * bx == bx * 64") {
    CHECK(hashOf(kernelText("  let i = threadIdx.x + 64 * blockIdx.x\n"
                            "  for j in 0 .. N {\n    B[i, j] = A[i, j] * 2.0\n  }\n")) == base);
  }
  SUBCASE("a renamed let and loop variable") {
    CHECK(hashOf(kernelText("  let row = blockIdx.x * 64 + threadIdx.x\n"
                            "  for col in 0 .. N {\n    B[row, col] = A[row, col] * 2.0\n  }\n")) ==
          base);
  }
  SUBCASE("the kernel's name, comments and spacing") {
    CHECK(hashOf("// a comment\n" + kernelText(std::string("  // inside\n") + kBase, "other")) ==
          base);
  }
  SUBCASE("the where clause's order") {
    CHECK(hashOf(kernelText(kBase, "k", "N > 0, M % 64 == 0")) == base);
  }
  SUBCASE("a > b written as b < a") {
    std::string a = "  if threadIdx.x > 3 {\n    B[0, 0] = 1.0\n  }\n";
    std::string b = "  if 3 < threadIdx.x {\n    B[0, 0] = 1.0\n  }\n";
    CHECK(hashOf(kernelText(a)) == hashOf(kernelText(b)));
  }
  SUBCASE("independent lets and buffers in another order, renamed") {
    std::string a = "  shared S: f32[64]\n  reg r: f32[4]\n  let x = threadIdx.x\n"
                    "  let y = blockIdx.x * 64\n  S[x] = A[y + x, 0]\n  r[0] = S[x]\n"
                    "  B[y + x, 0] = r[0]\n";
    std::string b = "  let base = 64 * blockIdx.x\n  reg acc: f32[4]\n  let t = threadIdx.x\n"
                    "  shared tile: f32[64]\n  tile[t] = A[t + base, 0]\n  acc[0] = tile[t]\n"
                    "  B[t + base, 0] = acc[0]\n";
    CHECK(hashOf(kernelText(a)) == hashOf(kernelText(b)));
  }
}

TEST_CASE("semantic hash: changes of meaning do not collide") {
  uint64_t base = hashOf(kernelText(kBase));
  SUBCASE("a different constant") {
    CHECK(hashOf(kernelText("  let i = blockIdx.x * 64 + threadIdx.x\n"
                            "  for j in 0 .. N {\n    B[i, j] = A[i, j] * 3.0\n  }\n")) != base);
  }
  SUBCASE("a non-commutative operator's operands swapped") {
    std::string a = "  B[threadIdx.x, 0] = A[threadIdx.x, 0] - 1.0\n";
    std::string b = "  B[threadIdx.x, 0] = 1.0 - A[threadIdx.x, 0]\n";
    CHECK(hashOf(kernelText(a)) != hashOf(kernelText(b)));
  }
  SUBCASE("parameters swapped (the problem names them)") {
    std::string a = "  B[threadIdx.x, 0] = A[threadIdx.x, 0]\n";
    std::string b = "  A[threadIdx.x, 0] = B[threadIdx.x, 0]\n";
    CHECK(hashOf(kernelText(a)) != hashOf(kernelText(b)));
  }
  SUBCASE("dependent statements keep their order") {
    std::string a = "  reg r: f32[1]\n  r[0] = 1.0\n  r[0] = r[0] + 1.0\n  B[0, 0] = r[0]\n";
    std::string b = "  reg r: f32[1]\n  r[0] = r[0] + 1.0\n  r[0] = 1.0\n  B[0, 0] = r[0]\n";
    CHECK(hashOf(kernelText(a)) != hashOf(kernelText(b)));
  }
  SUBCASE("two buffers of different shapes swapped in their uses") {
    std::string a = "  shared S: f32[64]\n  shared T: f32[128]\n  S[threadIdx.x] = 1.0\n"
                    "  B[0, 0] = T[threadIdx.x]\n";
    std::string b = "  shared S: f32[64]\n  shared T: f32[128]\n  T[threadIdx.x] = 1.0\n"
                    "  B[0, 0] = S[threadIdx.x]\n";
    CHECK(hashOf(kernelText(a)) != hashOf(kernelText(b)));
  }
  SUBCASE("a different where clause") {
    CHECK(hashOf(kernelText(kBase, "k", "M % 128 == 0, N > 0")) != base);
  }
}

TEST_CASE("did you mean: the closest known name within a third of the length") {
  std::vector<std::string_view> known = {"mbarrier.wait", "mbarrier.arrive", "mbarrier.init"};
  CHECK(editDistance("wiat", "wait") == 1);
  CHECK(editDistance("kitten", "sitting") == 3);
  CHECK(closestName("mbarrier.wiat", known) == std::optional<std::string>("mbarrier.wait"));
  CHECK(didYouMean("mbarrier.arive", known) == "; did you mean 'mbarrier.arrive'?");
  CHECK(didYouMean("tma.store", known) == "");

  llvm::SourceMgr sm;
  Diagnostics diag(sm, false);
  Module m = parseModuleText(kernelText("  mbarrier bar(count = 1)\n"
                                        "  mbarrier.wiat(bar, parity = 0)\n"
                                        "  B[0, 0] = A[0, 0] + idx\n"),
                             "t.tile", diag);
  REQUIRE(!diag.hasErrors());
  checkModule(m, diag);
  std::vector<std::string> messages;
  for (const Diagnostic &d : diag.all())
    messages.push_back(d.message);
  REQUIRE(messages.size() == 2);
  CHECK(messages[0] == "unknown call 'mbarrier.wiat'; did you mean 'mbarrier.wait'?");
  CHECK(messages[1].find("use of undefined name 'idx'") == 0);
}
