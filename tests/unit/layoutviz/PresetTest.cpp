// Exact owners of the presets added for the visualizer (ir/LayoutPresets.cpp:
// ldmatrix, tcgen05 ld/st shapes, TMEM datapaths, shared-memory swizzles),
// worked out by hand from the PTX ISA and CuTe, then checked against the
// engine.
#include "ir/LayoutPresets.h"
#include "ir/LayoutText.h"

#include <doctest/doctest.h>

using namespace tilescope;

namespace {
// The single owner of `index` under the preset call `text`.
std::string ownerOf(const std::string &text, std::vector<int64_t> index) {
  llvm::SourceMgr sm;
  Diagnostics diag(sm, false);
  auto spec = parseLayoutText(text, "<test>", diag);
  REQUIRE_MESSAGE(spec.has_value(), text);
  const LayoutPreset *p = findLayoutPreset(spec->preset);
  REQUIRE(p);
  auto flat = flattenIndex(p->shape(spec->presetArgs), index);
  REQUIRE(flat.has_value());
  return spec->layout.base(*flat).str();
}
std::string errorOf(const std::string &text) {
  llvm::SourceMgr sm;
  Diagnostics diag(sm, false);
  auto spec = parseLayoutText(text, "<test>", diag);
  CHECK_FALSE(spec.has_value());
  return diag.all().empty() ? "" : diag.all().front().message;
}
} // namespace

TEST_CASE("ldmatrix x4: matrix 2, row 5, column 3 is lane 21, half 5 (register 2, high)") {
  CHECK(ownerOf("ldmatrix_x4()", {2, 5, 3}) == "{laneid: 21, m: 5}");
  CHECK(ownerOf("ldmatrix_x4()", {0, 0, 0}) == "{laneid: 0, m: 0}");
}

TEST_CASE("tcgen05 32x32b: TMEM lane 70 is warp 2 of the warpgroup, lane 6; column = register") {
  CHECK(ownerOf("tcgen05_32x32b(16)", {70, 9}) == "{laneid: 6, wid_in_wg: 2, m: 9}");
}

TEST_CASE("tcgen05 16x64b: row 9, column 5 is thread 7, repetition 2") {
  // Thread 7: 8 * (7 % 2) + 7 / 4 = row 9; column (7 / 2) % 2 + 2 * 2 = 5.
  CHECK(ownerOf("tcgen05_16x64b(4)", {9, 5}) == "{laneid: 7, m: 2}");
  CHECK(ownerOf("tcgen05_16x64b(4)", {8, 0}) == "{laneid: 1, m: 0}");
  CHECK(errorOf("tcgen05_16x64b(3)").find("x1, x2") != std::string::npos);
}

TEST_CASE("TMEM datapaths: M=128 identity, M=64 16 rows per sub-partition, 2-CTA folds") {
  CHECK(ownerOf("tmem_m128(64)", {100, 7}) == "{TLane: 100, TCol: 7}");
  CHECK(ownerOf("tmem_m64(64)", {37, 5}) == "{TLane: 69, TCol: 5}");
  CHECK(ownerOf("tmem_m64_2cta(64)", {10, 40}) == "{TLane: 74, TCol: 8}");
  CHECK(ownerOf("tmem_m64_2cta(64)", {10, 31}) == "{TLane: 10, TCol: 31}");
  CHECK(errorOf("tmem_m64_2cta(63)").find("even") != std::string::npos);
}

TEST_CASE("shared-memory swizzles: 128B bf16 row 9 column 0 moves to chunk 1 of its line") {
  // m = 576, 16-byte chunk 72 = 8 * 9 + 0; 128B swizzle XORs in row % 8 = 1.
  CHECK(ownerOf("smem_swizzle(128, 16, 32, 64)", {9, 0}) == "{m: 584}");
  // 64B, two atoms across: (3, 40) is atom 1, m = 3*32 + 16*32 + 8 = 616,
  // chunk 77 XOR ((77 >> 3) & 3) = 76, so m = 608.
  CHECK(ownerOf("smem_swizzle(64, 16, 16, 64)", {3, 40}) == "{m: 608}");
  // 32B of 8-bit elements: chunk bit 0 flips every 4 rows: row 4, column 0
  // (chunk 8) moves to chunk 9.
  CHECK(ownerOf("smem_swizzle(32, 8, 8, 32)", {4, 0}) == "{m: 144}");
  CHECK(errorOf("smem_swizzle(128, 16, 12, 64)").find("multiple of 8") != std::string::npos);
  CHECK(errorOf("smem_swizzle(128, 16, 16, 48)").find("multiple of 64") != std::string::npos);
  CHECK(errorOf("smem_swizzle(96, 16, 16, 64)").find("32B, 64B or 128B") != std::string::npos);
}
