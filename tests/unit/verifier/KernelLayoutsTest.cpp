// The kernel-level hook of `tilescope check`: every buffer, pair of buffers
// and instruction operand of a parsed kernel, reported at the layout's source
// location with the witness.
#include "verifier/KernelLayouts.h"
#include "ir/Parser.h"
#include "kernels/BundledKernels.h"

#include <doctest/doctest.h>

using namespace tilescope;

namespace {
struct Checked {
  std::vector<Diagnostic> diagnostics;
  unsigned findings = 0;
};

Checked checkText(const std::string &text) {
  llvm::SourceMgr sm;
  Diagnostics diag(sm, /*printImmediately=*/false);
  Module module = parseModuleText(text, "k.tile", diag);
  REQUIRE_MESSAGE(!diag.hasErrors(), (diag.all().empty() ? "" : diag.all()[0].message));
  REQUIRE(module.kernels.size() == 1);
  Checked out;
  out.findings = checkKernelLayouts(module.kernels[0], diag);
  out.diagnostics = diag.all();
  return out;
}

std::string readKernel(std::string_view name) {
  for (const BundledKernelFile &f : bundledKernelFiles())
    if (f.name == name)
      return std::string(f.text);
  return "";
}
} // namespace

TEST_CASE("the kernel library verifies clean") {
  REQUIRE(bundledKernelFiles().size() >= 3);
  for (const BundledKernelFile &f : bundledKernelFiles()) {
    INFO(f.name);
    llvm::SourceMgr sm;
    Diagnostics diag(sm, false);
    Module module = parseModuleText(f.text, f.name, diag);
    REQUIRE(!diag.hasErrors());
    for (const Kernel &k : module.kernels) {
      unsigned findings = checkKernelLayouts(k, diag);
      std::string first = diag.all().empty() ? "" : diag.all()[0].message;
      CHECK_MESSAGE(findings == 0, k.name << ": " << first);
    }
  }
}

TEST_CASE("the Hopper GEMM's operands are found: two TMA destinations, two wgmma operands") {
  // (The TMA stores' source Cs is not a checked use yet: docs/verifier.md.)
  llvm::SourceMgr sm;
  Diagnostics diag(sm, false);
  Module module = parseModuleText(readKernel("gemm_bf16_sm90.tile"), "gemm.tile", diag);
  REQUIRE(module.kernels.size() == 1);
  KernelLayoutInput in = collectKernelLayouts(module.kernels[0]);
  CHECK(in.buffers.size() == 5); // As, Bs, Cs, acc, out
  CHECK(in.launch.threads == 384);
  std::vector<std::string> uses;
  for (const auto &u : in.uses)
    uses.push_back(u.buffer + ":" + u.instruction + ":" + std::to_string(u.use.batchDims));
  CHECK(uses ==
        std::vector<std::string>{"As:tma:1", "Bs:tma:1", "As:wgmma.smem:0", "Bs:wgmma.smem:0"});
}

TEST_CASE("an aliasing layout is reported at the layout with both coordinates") {
  Checked c = checkText("kernel k(A: global f32[4, 8])\n"
                        "  launch grid(1) threads(128) target(sm_90a)\n"
                        "{\n"
                        "  shared S: f32[2, 2] layout(S[(2, 2):(1, 1)])\n"
                        "}\n");
  REQUIRE(c.findings == 1);
  CHECK(c.diagnostics[0].line == 4);
  CHECK(c.diagnostics[0].column == 30);
  CHECK(c.diagnostics[0].message == "layout maps (0, 1) and (1, 0) to the same owner {m: 1}");
}

TEST_CASE("a register layout on more warps than the launch has") {
  Checked c = checkText("kernel k(A: global f32[4, 8])\n"
                        "  launch grid(1) threads(64) target(sm_90a)\n"
                        "{\n"
                        "  reg r: f32[4, 32] layout(S[(4, 32):(1@warpid, 1@laneid)])\n"
                        "}\n");
  REQUIRE(c.findings == 1);
  CHECK(c.diagnostics[0].line == 4);
  CHECK(c.diagnostics[0].message.find("but warpid must stay below 2") != std::string::npos);
}

TEST_CASE("tensor-memory buffers whose columns overlap") {
  std::string head = "kernel k(A: global f32[4, 8])\n"
                     "  launch grid(1) threads(128) target(sm_100a)\n"
                     "{\n"
                     "  tmem T0: f32[128, 64] layout(S[(128, 64):(1@TLane, 1@TCol)])\n";
  Checked ok = checkText(head + "  tmem T1: f32[128, 64] layout(S[(128, 64):(1@TLane, 1@TCol)] + "
                                "64@TCol)\n}\n");
  CHECK(ok.findings == 0);
  Checked bad = checkText(head + "  tmem T1: f32[128, 64] layout(S[(128, 64):(1@TLane, 1@TCol)] + "
                                 "32@TCol)\n}\n");
  REQUIRE(bad.findings == 1);
  CHECK(bad.diagnostics[0].line == 5);
  CHECK(bad.diagnostics[0].message.rfind("buffers T0 and T1 overlap: T0(", 0) == 0);
}

TEST_CASE("a TMA destination with padded rows is reported at the copy") {
  Checked c = checkText("kernel k(A: global bf16[64, 64])\n"
                        "  launch grid(1) threads(128) target(sm_90a)\n"
                        "{\n"
                        "  shared S: bf16[64, 64] layout(S[(64, 64):(72, 1)] + R[1:0])\n"
                        "  mbarrier bar(count = 1)\n"
                        "  if tid_in_wg == 0 {\n"
                        "    copy_async(S, A[0 : +64, 0 : +64], mbar = bar)\n"
                        "  }\n"
                        "}\n");
  // The layout itself runs past its 4096 slots, and TMA would not write it.
  REQUIRE(c.findings == 2);
  CHECK(c.diagnostics[0].line == 4);
  CHECK(c.diagnostics[0].message.find("but m must stay below 4096") != std::string::npos);
  CHECK(c.diagnostics[1].line == 7);
  CHECK(c.diagnostics[1].message == "tma: TMA writes the box dense and row-major, but (1, 0) is "
                                    "at m 72 before the swizzle, not 64 (operand S)");
}

TEST_CASE("symbolic TMA rule: the global row stride must be 16 bytes for every admitted K") {
  auto kernel = [](const char *where) {
    return std::string("kernel k(A: global bf16[M, K])\n  where ") + where +
           "\n  launch grid(1) threads(128) target(sm_90a)\n"
           "{\n"
           "  shared S: bf16[64, 64] layout(S[(64, 64):(64, 1)])\n"
           "  mbarrier bar(count = 1)\n"
           "  if tid_in_wg == 0 {\n"
           "    copy_async(S, A[0 : +64, 0 : +64], mbar = bar)\n"
           "  }\n"
           "}\n";
  };
  CHECK(checkText(kernel("K % 64 == 0, M % 64 == 0")).findings == 0);
  Checked c = checkText(kernel("K % 4 == 0, M % 64 == 0"));
  REQUIRE(c.findings == 1);
  CHECK(c.diagnostics[0].line == 8);
  const std::string &msg = c.diagnostics[0].message;
  CHECK(msg.rfind("tma: global stride 0 of A is ", 0) == 0);
  CHECK(msg.find(" bytes for K = ") != std::string::npos);
  CHECK(msg.find("not a multiple of 16") != std::string::npos);
}
