// Uniformity of conditions decided from their values over the threads of a
// CTA (ir/ThreadUniformity.h), with exact witnesses.
#include "ir/ThreadUniformity.h"
#include "ir/Parser.h"

#include <doctest/doctest.h>

using namespace tilescope;

namespace {
// The condition of the kernel's first `if`, over a CTA of 256 threads.
Expr condition(const std::string &cond) {
  static llvm::SourceMgr sm; // buffers must outlive the nodes' locations
  Diagnostics diag(sm, false);
  Module m = parseModuleText("kernel k(A: global f32[M])\n  launch grid(1) threads(256) "
                             "target(sm_90a)\n{\n  if " +
                                 cond + " {\n  }\n}\n",
                             "u.tile", diag);
  REQUIRE(!diag.hasErrors());
  return as<If>(m.kernels[0].body[0]).cond;
}
} // namespace

TEST_CASE("conditions on per-thread builtins that whole warps agree on are warp-uniform") {
  CHECK(threadUniformity(condition("tid_in_wg < 64"), 256) == Convergence::Warp);
  CHECK(threadUniformity(condition("threadIdx.x / 32 < 2"), 256) == Convergence::Warp);
  CHECK(threadUniformity(condition("threadIdx.x % 64 < 32"), 256) == Convergence::Warp);
  CHECK(threadUniformity(condition("threadIdx.x < 128"), 256) == Convergence::Warpgroup);
  CHECK(threadUniformity(condition("threadIdx.x < 4096"), 256) == Convergence::Grid);
}

TEST_CASE("conditions that split a warp are thread-level, with two lanes as the witness") {
  CHECK(threadUniformity(condition("tid_in_wg < 48"), 256) == Convergence::Thread);
  CHECK(threadUniformity(condition("laneid == 0"), 256) == Convergence::Thread);
  CHECK(divergenceWitness(condition("tid_in_wg < 48"), 256, 32) ==
        "thread 32 (warp 1, lane 0) gives 1, thread 48 (warp 1, lane 16) gives 0");
  CHECK(divergenceWitness(condition("threadIdx.x < 192"), 256, 128) ==
        "thread 128 (warp 4, lane 0) gives 1, thread 192 (warp 6, lane 0) gives 0");
  CHECK_FALSE(divergenceWitness(condition("tid_in_wg < 64"), 256, 32));
}

TEST_CASE("conditions reading anything but thread builtins are not decided by values") {
  CHECK_FALSE(threadUniformity(condition("tid_in_wg < M"), 256));
  CHECK_FALSE(threadUniformity(condition("elect_sync()"), 256));
  CHECK_FALSE(threadUniformity(condition("blockIdx.x == 0"), 256));
}
