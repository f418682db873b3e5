// The simulate stage's size search (reward/SimSizes.h) where the where
// clause ties symbols together (reward/SizeRelations.h): a symbol an
// equality defines moves with its definition, and a relation a change
// breaks in another free symbol is repaired by raising that symbol.
#include "ir/Parser.h"
#include "kernels/BundledKernels.h"
#include "reward/SimSizes.h"
#include "reward/SizeRelations.h"
#include "sync/BarrierSkeleton.h"
#include "ParseOne.h"

#include <doctest/doctest.h>

#include <llvm/Support/SourceMgr.h>

using namespace tilescope;
using namespace tilescope::reward_detail;

namespace {

std::vector<SimSize> sizesOf(const Kernel &kernel) {
  std::string why;
  auto sizes = chooseSimSizes(kernel, why);
  REQUIRE_MESSAGE(sizes, why);
  return *sizes;
}

// A persistent loop of 16-row tiles over 2 CTAs, each tile a loop of KB
// k-blocks through a ring of two barriers; KB == K / 4 and N == 16 are
// definitions (tests/lit/reward/Inputs/defined_symbols.tile).
const char *kRing = R"(
kernel ring_gemm(A: global f32[M, K], B: global f32[K, N], C: global f32[M, N], KB: i32)
  where M > 0, M % 16 == 0, N == 16, K > 0, K % 4 == 0, KB == K / 4
  launch grid(2) threads(256) target(sm_90a)
{
  mbarrier bar[2](count = 256)
  let tiles = M / 16
  for t in blockIdx.x .. tiles step 2 {
    for kb in 0 .. KB {
      let it = (t - blockIdx.x) / 2 * KB + kb
      mbarrier.arrive(bar[it % 2])
      mbarrier.wait(bar[it % 2], parity = it / 2 % 2)
    }
  }
}
)";

} // namespace

TEST_CASE("sizes: a symbol the where clause defines moves with its definition") {
  // Before, K could not move without KB (and KB is no free symbol), so the
  // small size kept the solver's M = 112 and K = 4: the ring wrapped by
  // tiles, and the edge size's K stayed 4.
  std::vector<SimSize> sizes = sizesOf(parseOne(kRing));
  REQUIRE(sizes.size() == 3);
  const SimSize &small = sizes[0], &edge = sizes[1], &persistent = sizes[2];
  // One tile; four k-blocks wrap the ring of two twice.
  CHECK(small.values == SizeAssignment{{"K", 16}, {"KB", 4}, {"M", 16}, {"N", 16}});
  // K ragged within the edge window (K % 4 == 0: 84 has two trailing zero
  // bits), KB = K / 4 with it; N stays the constant it is defined as.
  CHECK(edge.values == SizeAssignment{{"K", 84}, {"KB", 21}, {"M", 112}, {"N", 16}});
  // Four tiles (CTA 0 runs tiles 0 and 2, CTA 1 tiles 1 and 3): two k-blocks
  // a tile suffice. Both CTAs run (a second tile of a CTA other than 0; it
  // was M = 48, CTA 0 alone, until session 22).
  CHECK(persistent.role == "persistent");
  CHECK(persistent.values == SizeAssignment{{"K", 8}, {"KB", 2}, {"M", 64}, {"N", 16}});
  CHECK(persistent.sampleCtas == 2);
  CHECK(persistent.ctas == std::vector<std::array<int64_t, 3>>{{0, 0, 0}, {1, 0, 0}});
}

TEST_CASE("sizes: the block-scaled GEMM's rings wrap by K, not by a huge M") {
  // KB == K / 128 and NB == (N + 127) / 128: the small size was M = 168,964,
  // K = 128 (all 132 CTAs running ten tiles each, 27-30 s a reward).
  Kernel k = parseOne(std::string(bundledKernelText("gemm_fp8_blockscaled_sm90.tile")));
  std::vector<SimSize> sizes = sizesOf(k);
  REQUIRE(sizes.size() == 3);
  // A ring of 5 stages, one tile: 10 k-blocks.
  CHECK(sizes[0].values ==
        SizeAssignment{{"K", 1280}, {"KB", 10}, {"M", 4}, {"N", 8}, {"NB", 1}});
  // M raised to 260 (three row tiles): CTA 2 of the constant grid runs a
  // tile (spreadTiles; it was M = 76, one tile, until session 21).
  CHECK(sizes[1].values ==
        SizeAssignment{{"K", 1408}, {"KB", 11}, {"M", 260}, {"N", 88}, {"NB", 1}});
  // 134 column tiles (CTA 0 runs tiles 0 and 132, CTA 1 tiles 1 and 133),
  // five k-blocks each.
  CHECK(sizes[2].values ==
        SizeAssignment{{"K", 640}, {"KB", 5}, {"M", 4}, {"N", 17032}, {"NB", 134}});
  CHECK(sizes[2].sampleCtas == 2);
  CHECK(sizes[2].ctas == std::vector<std::array<int64_t, 3>>{{0, 0, 0}, {1, 0, 0}});

  // _bn192 (M a multiple of 1024, a ring of 4) was M = 169,984, K = 128 and
  // ran out of its time budget. Its `reg sc: f32[5]`, written as sc[0] ...
  // sc[4] in the k-loop, is no ring (a constant subscript): 8 k-blocks wrap
  // the ring of 4 twice (it was 10 until session 16).
  Kernel bn192 =
      parseOne(std::string(bundledKernelText("gemm_fp8_blockscaled_sm90_bn192.tile")));
  std::vector<SimSize> wide = sizesOf(bn192);
  REQUIRE(wide.size() == 3);
  CHECK(wide[0].values ==
        SizeAssignment{{"K", 1024}, {"KB", 8}, {"M", 1024}, {"N", 8}, {"NB", 1}});
  // M % 1024 == 0: the edge's M = 2048 could not be ragged; it moved to
  // the persistent size (session 20), and the edge keeps M = 1024.
  CHECK(wide[1].values ==
        SizeAssignment{{"K", 1152}, {"KB", 9}, {"M", 1024}, {"N", 88}, {"NB", 1}});
  // Two tiles on CTA 0, four k-blocks each, at M = 2048: 9 column tiles of
  // 192 in 16 row blocks, 144 tiles.
  CHECK(wide[2].values ==
        SizeAssignment{{"K", 512}, {"KB", 4}, {"M", 2048}, {"N", 1544}, {"NB", 13}});
  // CTA 0's second tile, 132, is in the second group of 8 row blocks
  // (`m0 = (t / (8 * tn) * 8 + t % 8) * 128`): the rows the edge's M = 2048
  // reached before.
  int64_t tn = (wide[2].values.at("N") + 191) / 192;
  CHECK(132 / (8 * tn) == 1);
  // The other CTA is the last with two tiles: 11, whose second tile is the
  // last tile, 143 (the column tile past 1536, 8 columns wide).
  CHECK(wide[2].ctas == std::vector<std::array<int64_t, 3>>{{0, 0, 0}, {11, 0, 0}});
  CHECK((132 / (8 * tn) * 8 + 132 % 8) * 128 >= 1024);
}

TEST_CASE("sizes: a raise that cannot be ragged stays in the edge without a persistent size") {
  // H % 1024 == 0 under a grid that follows the sizes: no persistent size
  // takes the raise over, so the edge still runs H = 2048.
  Kernel k = parseOne(R"(
kernel rows(X: global f32[R, H])
  where R > 0, H >= 1024, H % 1024 == 0
  launch grid(R) threads(32) target(sm_90a)
{
}
)");
  std::vector<SimSize> sizes = sizesOf(k);
  REQUIRE(sizes.size() == 2);
  CHECK(sizes[1].role == "edge");
  CHECK(sizes[1].values.at("H") == 2048);
}

TEST_CASE("sizes: relations between free symbols are repaired by raising the other one") {
  Kernel k = parseOne(R"(
kernel rel(A: global f32[M], B: global f32[N], C: global f32[G])
  where N > 0, N % 16 == 0, M % N == 0, M >= 2 * N, G == M / N
  launch grid(1) threads(32) target(sm_90a)
{
}
)");
  BarrierSkeleton sk = extractBarrierSkeleton(k);
  SizeRelations rel(k, sk, shapeSymbols(k));
  CHECK(rel.defined("G"));
  CHECK(rel.free() == std::vector<std::string>{"M", "N"});
  CHECK(rel.freeBehind({"G"}) == std::vector<std::string>{"M", "N"});

  // N raised to 48: M (was 64) up to the next multiple, 96, which also
  // meets M >= 2 * N; G follows.
  SizeAssignment trial{{"M", 64}, {"N", 48}};
  CHECK(rel.admits(trial, "N"));
  CHECK(trial == SizeAssignment{{"G", 2}, {"M", 96}, {"N", 48}});
  // N raised to 64: M % N holds at 64, M >= 2 * N raises M to 128.
  trial = {{"M", 64}, {"N", 64}};
  CHECK(rel.admits(trial, "N"));
  CHECK(trial == SizeAssignment{{"G", 2}, {"M", 128}, {"N", 64}});
  // The symbol being varied is never what is repaired: M = 40 is no
  // multiple of 16 or more, so nothing admits it.
  trial = {{"M", 40}, {"N", 16}};
  CHECK_FALSE(rel.admits(trial, "M"));
  // A constraint on the varied symbol alone is not repaired either.
  trial = {{"M", 64}, {"N", 24}};
  CHECK_FALSE(rel.admits(trial, "N"));
}

TEST_CASE("sizes: a task's sizes need not spell out the defined symbols") {
  Kernel k = parseOne(kRing);
  SizeAssignment given{{"M", 32}, {"K", 12}};
  defineSymbols(k, given, false);
  CHECK(given == SizeAssignment{{"K", 12}, {"KB", 3}, {"M", 32}, {"N", 16}});
  // Given values are kept (the where clause then judges them).
  SizeAssignment wrong{{"M", 32}, {"K", 12}, {"KB", 5}};
  defineSymbols(k, wrong, false);
  CHECK(wrong.at("KB") == 5);
}

TEST_CASE("sizes: the edge keeps its tensors within its element budget") {
  // attention_fwd_sm90 (Q, K, V, O of B x H x S x 128): raising B and H by
  // 65 each made the edge B = H = 67, S = 472 — 2.1 billion elements, over
  // every memory budget, so the edge ended as memory-budget for every
  // candidate and a kernel reading K and V of head 0 scored as its twin.
  // A raise past the budget becomes the least one that fits, ragged where
  // it can be (3), and the grid still spreads to 3 CTAs a dimension.
  static llvm::SourceMgr sm;
  Diagnostics diag(sm, false);
  Module m = parseModuleText(std::string(bundledKernelText("attention_fwd_sm90.tile")), "f.tile",
                             diag);
  REQUIRE_FALSE(diag.hasErrors());
  const Kernel *attention = nullptr;
  for (const Kernel &k : m.kernels)
    if (k.name == "attention_fwd_sm90")
      attention = &k;
  REQUIRE(attention);
  std::vector<SimSize> sizes = sizesOf(*attention);
  REQUIRE(sizes.size() == 2);
  CHECK(sizes[0].values == SizeAssignment{{"B", 1}, {"H", 1}, {"S", 392}});
  CHECK(sizes[1].values == SizeAssignment{{"B", 3}, {"H", 3}, {"S", 472}});
  CHECK(tensorElements(*attention, sizes[1].values) <= double(int64_t{1} << 22));
}
