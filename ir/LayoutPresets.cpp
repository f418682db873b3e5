#include "ir/LayoutPresets.h"

#include <fmt/format.h>

namespace tilescope {

namespace {
using Args = std::vector<int64_t>;

std::optional<Layout> build(std::vector<Iter> shard, std::string *error) {
  return Layout::make(std::move(shard), {}, {}, std::nullopt, error);
}
constexpr Axis lane = Axis::laneid, reg = Axis::m;

// PTX ISA, "Matrix fragments for mma.m16n8k16" (f16/bf16): groupID = lane / 4,
// threadID_in_group = lane % 4. A (16x16): row = groupID (+8 for a2,a3,a6,a7),
// col = 2*tig + (i & 1) (+8 for a4..a7), so register i = 4*colHalf + 2*rowHalf + j.
std::optional<Layout> mmaA(const Args &, std::string *e) {
  return build({{2, 2, reg}, {8, 4, lane}, {2, 4, reg}, {4, 1, lane}, {2, 1, reg}}, e);
}
// B (16x8, k by n): k = 2*tig + (i & 1) (+8 for b2,b3), n = groupID.
std::optional<Layout> mmaB(const Args &, std::string *e) {
  return build({{2, 2, reg}, {4, 1, lane}, {2, 1, reg}, {8, 4, lane}}, e);
}
// C/D (16x8 f32): row = groupID (+8 for c2,c3), col = 2*tig + (i & 1).
std::optional<Layout> mmaC(const Args &, std::string *e) {
  return build({{2, 2, reg}, {8, 4, lane}, {4, 1, lane}, {2, 1, reg}}, e);
}
// wgmma m64nNk16 accumulator (f32): warp w of the warpgroup holds rows
// 16w..16w+15; within it the m16n8 C fragment repeats over N/8 column blocks,
// register index 4*block + 2*rowHalf + j.
std::optional<Layout> wgmmaAcc(const Args &a, std::string *e) {
  if (a[0] != 64) {
    if (e)
      *e = fmt::format("wgmma accumulators have M = 64, not {}", a[0]);
    return std::nullopt;
  }
  if (a[1] < 8 || a[1] > 256 || a[1] % 8 != 0) {
    if (e)
      *e = fmt::format("wgmma N must be a multiple of 8 in [8, 256], not {}", a[1]);
    return std::nullopt;
  }
  return build({{4, 1, Axis::wid_in_wg},
                {2, 2, reg},
                {8, 4, lane},
                {a[1] / 8, 4, reg},
                {4, 1, lane},
                {2, 1, reg}},
               e);
}
} // namespace

const std::vector<LayoutPreset> &layoutPresets() {
  static const std::vector<LayoutPreset> presets = {
      {"mma_m16n8k16_a", "", "mma.sync m16n8k16 A fragment (16x16, f16/bf16) per warp", 0, {},
       mmaA, [](const Args &) { return Args{16, 16}; }},
      {"mma_m16n8k16_b", "", "mma.sync m16n8k16 B fragment (16x8, k by n, f16/bf16) per warp", 0,
       {}, mmaB, [](const Args &) { return Args{16, 8}; }},
      {"mma_m16n8k16_c", "", "mma.sync m16n8k16 C/D fragment (16x8, f32) per warp", 0, {}, mmaC,
       [](const Args &) { return Args{16, 8}; }},
      {"wgmma_acc", "M, N", "wgmma m64nNk16 f32 accumulator per warpgroup", 2, {64, 128},
       wgmmaAcc, [](const Args &a) { return Args{a[0], a[1]}; }},
  };
  return presets;
}

const LayoutPreset *findLayoutPreset(std::string_view name) {
  for (const LayoutPreset &p : layoutPresets())
    if (p.name == name)
      return &p;
  return nullptr;
}

} // namespace tilescope
