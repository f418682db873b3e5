// The static resource check (verifier/Resources.h): the summary of the
// library kernels (shared memory as the lowering allocates it, registers
// under setmaxnreg, occupancy) and the findings of budgets exceeded.
#include "verifier/Resources.h"
#include "ir/Instantiate.h"

#include "ir/Parser.h"
#include "kernels/BundledKernels.h"

#include <doctest/doctest.h>

using namespace tilescope;

namespace {
Kernel parseKernel(std::string_view text, const std::string &name) {
  static llvm::SourceMgr sm; // buffers must outlive the nodes' locations
  Diagnostics diag(sm, false);
  Module m = parseModuleText(std::string(text), name, diag);
  REQUIRE(!diag.hasErrors());
  REQUIRE(!m.kernels.empty());
  return m.kernels[0];
}
Kernel libraryKernel(std::string_view file) {
  for (const BundledKernelFile &f : bundledKernelFiles())
    if (f.name == file)
      return parseKernel(f.text, std::string(f.name));
  FAIL("no bundled kernel " << file);
  return {};
}
} // namespace

TEST_CASE("the Hopper GEMM: 209 KiB of shared memory, 40 / 232 / 232 registers, one CTA") {
  ResourceReport r = checkResources(libraryKernel("gemm_bf16_sm90.tile"));
  CHECK(r.findings.empty());
  // 3 x 16 KiB + 3 x 32 KiB + 64 KiB of tiles, 48 bytes of mbarriers and
  // 1024 of base alignment: the lowering's cudaFuncSetAttribute value.
  CHECK(r.summary.sharedBytes == 214064);
  CHECK(r.summary.setmaxnreg);
  CHECK(r.summary.registersPerWarpgroup == std::vector<int64_t>{40, 232, 232});
  CHECK(r.summary.registersPerThread == 232);
  CHECK(r.summary.registersPerCta == 168 * 384);
  CHECK(r.summary.ctasPerSm == 1);
  CHECK(r.summary.warpsPerSm == 12);
  CHECK(r.summary.str() == "shared 209.0 KiB (214064 bytes), 232 registers/thread (setmaxnreg: 40, "
                           "232, 232), tensor memory 0 columns, 384 threads, 1 CTA/SM (limited by "
                           "registers), occupancy 12/64 warps");
}

TEST_CASE("the Blackwell GEMM: 128 tensor-memory columns, three CTAs by shared memory") {
  ResourceReport r = checkResources(libraryKernel("gemm_bf16_sm100.tile"));
  CHECK(r.findings.empty());
  CHECK(r.summary.sharedBytes == 66616);
  CHECK(r.summary.tmemColumns == 128);
  CHECK(!r.summary.setmaxnreg);
  CHECK(r.summary.ctasPerSm == 3);
  CHECK(r.summary.limitedBy == "shared memory");
}

TEST_CASE("every library kernel fits its target") {
  for (const BundledKernelFile &f : bundledKernelFiles()) {
    CAPTURE(f.name);
    Kernel k = parseKernel(f.text, std::string(f.name));
    // A kernel with parameters fits at each of its named points.
    std::vector<Kernel> instances;
    if (k.space.empty())
      instances.push_back(k);
    for (const NamedPoint &p : k.space.points) {
      Instance inst = instantiate(k, p.values);
      REQUIRE_MESSAGE(inst.kernel, inst.reason);
      instances.push_back(*inst.kernel);
    }
    for (const Kernel &one : instances) {
      ResourceReport r = checkResources(one);
      CHECK(r.findings.empty());
      CHECK(r.summary.ctasPerSm >= 1);
    }
  }
}

TEST_CASE("shared buffers that fit alone but not together") {
  Kernel k = parseKernel("kernel k(A: global f32[4, 8])\n"
                         "  launch grid(1) threads(128) target(sm_90a)\n"
                         "{\n"
                         "  shared S0: f32[32768] layout(S[32768:1])\n"
                         "  shared S1: f32[32768] layout(S[32768:1])\n"
                         "}\n",
                         "s.tile");
  ResourceReport r = checkResources(k);
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].message.find("the CTA needs 263168 bytes") != std::string::npos);
  CHECK(r.findings[0].notes.size() == 2);
  CHECK(r.summary.ctasPerSm == 0);
}

TEST_CASE("tensor-memory columns past 512 and operand ranges") {
  Kernel k = parseKernel("kernel k(A: global f32[4, 8])\n"
                         "  launch grid(1) threads(128) target(sm_100a)\n"
                         "{\n"
                         "  tmem a: f32[128, 256]\n"
                         "  tmem b: f32[128, 512]\n"
                         "  mbarrier bar(count = 1)\n"
                         "  if warpid == 0 {\n"
                         "    tcgen05.alloc(a, cols = 256)\n"
                         "    tcgen05.alloc(b, cols = 512)\n"
                         "  }\n"
                         "  mbarrier.wait(bar, parity = 2)\n"
                         "  barrier.sync(16, threads = 128)\n"
                         "}\n",
                         "t.tile");
  ResourceReport r = checkResources(k);
  REQUIRE(r.findings.size() == 3);
  CHECK(r.findings[0].message == "operand range: argument 'parity' of 'mbarrier.wait' must be a "
                                 "value in [0, 1], not 2");
  CHECK(r.findings[1].message == "operand range: argument 'id' of 'barrier.sync' must be a value "
                                 "in [0, 15], not 16");
  CHECK(r.findings[2].message.find("allocated columns to 768") != std::string::npos);
  CHECK(r.summary.tmemColumns == 768);
}

TEST_CASE("cluster ranks and masks are bounded by the launch's cluster") {
  Kernel k = parseKernel("kernel k(A: global f32[4, 8])\n"
                         "  launch grid(2) cluster(2) threads(128) target(sm_90a)\n"
                         "{\n"
                         "  shared S: f32[4]\n"
                         "  shared T: f32[4]\n"
                         "  mbarrier bar(count = 1)\n"
                         "  dsmem.load(T, S, cta = 2)\n"
                         "  mbarrier.arrive(bar, cta = 1)\n"
                         "}\n",
                         "c.tile");
  ResourceReport r = checkResources(k);
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].message == "operand range: argument 'cta' of 'dsmem.load' must be a CTA "
                                 "rank of the cluster, in [0, 1], not 2");
}

TEST_CASE("setmaxnreg in a loop: counted as maybe run, and ordered by a warpgroup barrier") {
  // The producer lowers its registers only inside a loop that runs no
  // iteration on the CTAs past the last tile: there it keeps the launch's 168
  // and the consumers' 232 do not fit the pool.
  auto kernel = [](const std::string &producer, const std::string &consumer) {
    return "kernel k(A: global f32[8], T: i32)\n"
           "  launch grid(132) threads(384) target(sm_90a)\n"
           "{\n"
           "  if wgid == 0 {\n" +
           producer + "  } else {\n" + consumer + "  }\n}\n";
  };
  ResourceReport lowered = checkResources(
      parseKernel(kernel("    for t in blockIdx.x .. T step 132 {\n      setmaxnreg.dec(40)\n"
                         "      barrier.sync(2, threads = 128)\n    }\n",
                         "    setmaxnreg.inc(232)\n"),
                  "loop.tile"));
  REQUIRE(lowered.findings.size() == 1);
  CHECK(lowered.findings[0].message.find("168 x 128 + 232 x 128 + 232 x 128") != std::string::npos);
  // A constant loop of one iteration runs: the library's split fits.
  CHECK(
      checkResources(parseKernel(kernel("    for t in 0 .. 1 {\n      setmaxnreg.dec(40)\n    }\n",
                                        "    setmaxnreg.inc(232)\n"),
                                 "once.tile"))
          .findings.empty());
  // The same setmaxnreg on every iteration: ordered only when the loop has a
  // barrier that all four warps of each consumer warpgroup run.
  std::string loop = "    for t in blockIdx.x .. T step 132 {\n      setmaxnreg.inc(232)\n%s"
                     "    }\n";
  auto consumer = [&](const std::string &between) {
    std::string s = loop;
    return s.replace(s.find("%s"), 2, between);
  };
  ResourceReport unordered = checkResources(
      parseKernel(kernel("    setmaxnreg.dec(40)\n", consumer("")), "unordered.tile"));
  REQUIRE(unordered.findings.size() == 1);
  CHECK(unordered.findings[0].message.find("setmaxnreg.inc(232) may run in warpgroups 1, 2 again "
                                           "on the next iteration of its loop") !=
        std::string::npos);
  CHECK(checkResources(parseKernel(kernel("    setmaxnreg.dec(40)\n",
                                          consumer("      barrier.sync(1, threads = 256)\n")),
                                   "ordered.tile"))
            .findings.empty());
  // A barrier only warp 1 of each warpgroup runs orders nothing.
  ResourceReport partial = checkResources(parseKernel(
      kernel(
          "    setmaxnreg.dec(40)\n",
          consumer("      if wid_in_wg == 1 {\n        barrier.sync(1, threads = 64)\n      }\n")),
      "partial.tile"));
  CHECK(partial.findings.size() == 1);
}
