// Stages answered from the cache (reward/RewardCache.h) carry the current
// candidate's lines, columns, file and kernel name, not those of the
// candidate that filled the cache (reward/SourceAnchors.h).
#include "reward/Reward.h"
#include "reward/RewardCache.h"

#include <doctest/doctest.h>

#include <llvm/Support/FileSystem.h>

using namespace tilescope;

namespace {

// Shares values through shared memory without a barrier: a race between
// lines 11 and 12 (tests/reward/hacks/schedule-race.tile).
const char *kRacy = R"(kernel mm(A: global f32[M, K], B: global f32[K, N], C: global f32[M, N])
  where M % 16 == 0, N % 16 == 0, K > 0
  launch grid(N / 16, M / 16) threads(256) target(sm_80)
{
  shared S: f32[256]
  reg acc: f32[1]
  acc[0] = 0.0
  for k in 0 .. K {
    acc[0] = acc[0] + A[blockIdx.y * 16 + threadIdx.x / 16, k] * B[k, blockIdx.x * 16 + threadIdx.x % 16]
  }
  S[threadIdx.x] = acc[0]
  C[blockIdx.y * 16 + threadIdx.x / 16, blockIdx.x * 16 + threadIdx.x % 16] = S[255 - threadIdx.x]
}
)";

// The same kernel, renamed, with comments and blank lines: 3 lines more
// above the loop, 4 above the second access, and the last line indented.
std::string shifted() {
  std::string text = std::string("// a candidate\n\n") + kRacy;
  text.replace(text.find("kernel mm"), 9, "kernel other");
  text.replace(text.find("  acc[0] = 0.0"), 0, "  // the accumulator\n");
  text.replace(text.find("  C["), 2, "\n    ");
  return text;
}

const StageResult &races(const RewardResult &r) {
  for (const StageResult &s : r.kernels.at(0).stages)
    if (s.name == "races")
      return s;
  FAIL("no races stage");
  return r.kernels[0].stages[0];
}

void checkMoved(const RewardResult &first, const RewardResult &second) {
  CHECK(first.kernels[0].candidate == second.kernels[0].candidate);
  const StageResult &a = races(first), &b = races(second);
  CHECK(!a.cached);
  CHECK(b.cached);
  REQUIRE(a.status == StageStatus::Fail);
  REQUIRE(b.status == StageStatus::Fail);
  REQUIRE(a.diagnostics.size() == 2);
  REQUIRE(b.diagnostics.size() == 2);
  CHECK(a.diagnostics[0].line == 11);
  CHECK(a.diagnostics[0].column == 3);
  CHECK(a.diagnostics[0].witness == "the other access at 12:3");
  CHECK(a.diagnostics[0].kernel == "mm");
  CHECK(b.diagnostics[0].line == 14);
  CHECK(b.diagnostics[0].column == 3);
  CHECK(b.diagnostics[0].witness == "the other access at 16:5");
  CHECK(b.diagnostics[0].kernel == "other");
  CHECK(b.diagnostics[0].file == "second.tile");
  CHECK(b.diagnostics[1].line == 16);
  CHECK(b.diagnostics[1].column == 5);
  REQUIRE(first.kernels[0].firstFailure);
  REQUIRE(second.kernels[0].firstFailure);
  CHECK(second.kernels[0].firstFailure->line == 14);
}

} // namespace

TEST_CASE("reward cache: a duplicate's diagnostics are at its own lines (in memory)") {
  RewardCache cache;
  RewardOptions o;
  o.staticOnly = true;
  o.cache = &cache;
  o.fileName = "first.tile";
  RewardResult first = reward(kRacy, o);
  o.fileName = "second.tile";
  RewardResult second = reward(shifted(), o);
  checkMoved(first, second);
}

TEST_CASE("reward cache: a duplicate's diagnostics are at its own lines (on disk)") {
  llvm::SmallString<128> dir;
  REQUIRE(!llvm::sys::fs::createUniqueDirectory("reward-cache", dir));
  RewardOptions o;
  o.staticOnly = true;
  RewardResult first, second;
  {
    RewardCache cache(std::string(dir.str()));
    o.cache = &cache;
    o.fileName = "first.tile";
    first = reward(kRacy, o);
  }
  {
    RewardCache cache(std::string(dir.str())); // a new process's view: disk only
    o.cache = &cache;
    o.fileName = "second.tile";
    second = reward(shifted(), o);
  }
  checkMoved(first, second);
  llvm::sys::fs::remove_directories(dir);
}
