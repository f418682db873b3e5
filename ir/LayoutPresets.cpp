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

// --- Added for the visualizer's preset list (issue 7) ----------------------

bool fail(std::string *e, std::string message) {
  if (e)
    *e = std::move(message);
  return false;
}
bool isPowerOfTwo(int64_t v) {
  return v > 0 && (v & (v - 1)) == 0;
}

// ldmatrix.sync.aligned.m8n8.x4.b16 (PTX ISA, "Warp-level matrix load
// instruction: ldmatrix"): four 8x8 matrices, one destination register each;
// in every matrix thread t receives row t / 4, columns 2 * (t % 4) + {0, 1}.
// Logical shape (matrix, row, column); m counts 16-bit halves, so register q
// holds m = 2q and 2q + 1.
std::optional<Layout> ldmatrixX4(const Args &, std::string *e) {
  return build({{4, 2, reg}, {8, 4, lane}, {4, 1, lane}, {2, 1, reg}}, e);
}

// tcgen05.ld/st .32x32b.xN over a warpgroup: warp w of the warpgroup reaches
// TMEM lanes 32w..32w+31 (its sub-partition), thread t lane 32w + t, and
// register r is 32-bit column r. Logical shape (128 TMEM lanes, N columns).
std::optional<Layout> tcgen05_32x32b(const Args &a, std::string *e) {
  if (!isPowerOfTwo(a[0]) || a[0] > 128) {
    fail(e, fmt::format(".num of tcgen05 .32x32b is x1, x2, ..., x128, not x{}", a[0]));
    return std::nullopt;
  }
  return build({{4, 1, Axis::wid_in_wg}, {32, 1, lane}, {a[0], 1, reg}}, e);
}

// tcgen05.ld/st .16x64b.xN for one warp: 16 TMEM lanes x 64 bits per
// repetition. Thread t reads TMEM lane 8 * (t % 2) + t / 4 and 32-bit column
// (t / 2) % 2 of each repetition; register r is repetition r. (From CUTLASS
// CuTe's Copy_Traits<SM100_TMEM_LOAD_16dp64b1x..128x>.) Logical shape
// (16 lanes, 2N columns).
std::optional<Layout> tcgen05_16x64b(const Args &a, std::string *e) {
  if (!isPowerOfTwo(a[0]) || a[0] > 128) {
    fail(e, fmt::format(".num of tcgen05 .16x64b is x1, x2, ..., x128, not x{}", a[0]));
    return std::nullopt;
  }
  return build({{2, 1, lane}, {8, 4, lane}, {a[0], 1, reg}, {2, 2, lane}}, e);
}

bool tmemColumnsOk(int64_t n, std::string *e) {
  if (n < 1 || n > 512)
    return fail(e, fmt::format("tensor memory has 512 columns; N = {} does not fit", n));
  return true;
}

// Tensor-memory datapath of tcgen05.mma, M = 128 with .cta_group::1 (PTX ISA
// "Data path layout organization", layout D): row i in TMEM lane i, column j in
// column j.
std::optional<Layout> tmemM128(const Args &a, std::string *e) {
  if (!tmemColumnsOk(a[0], e))
    return std::nullopt;
  return build({{128, 1, Axis::TLane}, {a[0], 1, Axis::TCol}}, e);
}

// M = 64 with .cta_group::1 (layout F): half the datapath, 16 rows in each
// warp's 32-lane sub-partition: rows 16q..16q+15 in lanes 32q..32q+15.
std::optional<Layout> tmemM64(const Args &a, std::string *e) {
  if (!tmemColumnsOk(a[0], e))
    return std::nullopt;
  return build({{4, 32, Axis::TLane}, {16, 1, Axis::TLane}, {a[0], 1, Axis::TCol}}, e);
}

// M = 128 with .cta_group::2, dense A (layout B): each CTA of the pair holds
// 64 rows; the first half of the N columns sits in lanes 0..63, the second
// half folded onto lanes 64..127, so the accumulator takes N / 2 columns.
std::optional<Layout> tmemM64TwoCta(const Args &a, std::string *e) {
  if (a[0] < 2 || a[0] % 2 != 0) {
    fail(e,
         fmt::format("the 2-CTA M=64 datapath folds column halves; N must be even, not {}", a[0]));
    return std::nullopt;
  }
  if (!tmemColumnsOk(a[0] / 2, e))
    return std::nullopt;
  return build({{64, 1, Axis::TLane}, {2, 64, Axis::TLane}, {a[0] / 2, 1, Axis::TCol}}, e);
}

// A shared-memory tile in one of the hardware swizzle modes (TMA, wgmma and
// tcgen05 descriptors): rows of `bytes` bytes (one swizzle atom wide), atoms
// stacked down the rows first, then across the columns. The swizzle repeats
// every 8 rows. Args: mode bytes (32/64/128), element bits (8/16/32), rows,
// columns.
std::optional<Layout> smemSwizzle(const Args &a, std::string *e) {
  int64_t bytes = a[0], bits = a[1], rows = a[2], cols = a[3];
  Dtype dtype = bits == 8 ? Dtype::u8 : bits == 16 ? Dtype::bf16 : Dtype::f32;
  if (bits != 8 && bits != 16 && bits != 32) {
    fail(e, fmt::format("element bits must be 8, 16 or 32, not {}", bits));
    return std::nullopt;
  }
  auto swizzle = Swizzle::fromMode(static_cast<int>(bytes), dtype, e);
  if (!swizzle)
    return std::nullopt;
  int64_t width = bytes * 8 / bits; // elements per row of one atom
  if (rows < 8 || rows % 8 != 0) {
    fail(e, fmt::format("rows must be a multiple of 8 (one swizzle period), not {}", rows));
    return std::nullopt;
  }
  if (cols < width || cols % width != 0) {
    fail(e, fmt::format("columns must be a multiple of {} ({}B of {}-bit elements), not {}", width,
                        bytes, bits, cols));
    return std::nullopt;
  }
  return Layout::make({{rows, width, reg}, {cols / width, rows * width, reg}, {width, 1, reg}}, {},
                      {}, swizzle, e);
}
} // namespace

const std::vector<LayoutPreset> &layoutPresets() {
  static const std::vector<LayoutPreset> presets = {
      {"mma_m16n8k16_a",
       "",
       "mma.sync m16n8k16 A fragment (16x16, f16/bf16) per warp",
       0,
       {},
       mmaA,
       [](const Args &) {
         return Args{16, 16};
       }},
      {"mma_m16n8k16_b",
       "",
       "mma.sync m16n8k16 B fragment (16x8, k by n, f16/bf16) per warp",
       0,
       {},
       mmaB,
       [](const Args &) {
         return Args{16, 8};
       }},
      {"mma_m16n8k16_c",
       "",
       "mma.sync m16n8k16 C/D fragment (16x8, f32) per warp",
       0,
       {},
       mmaC,
       [](const Args &) {
         return Args{16, 8};
       }},
      {"wgmma_acc",
       "M, N",
       "wgmma m64nNk16 f32 accumulator per warpgroup",
       2,
       {64, 128},
       wgmmaAcc,
       [](const Args &a) {
         return Args{a[0], a[1]};
       }},
      {"ldmatrix_x4",
       "",
       "ldmatrix .m8n8.x4.b16 destination: four 8x8 matrices per warp",
       0,
       {},
       ldmatrixX4,
       [](const Args &) {
         return Args{4, 8, 8};
       }},
      {"tcgen05_32x32b",
       "N",
       "tcgen05.ld/st .32x32b.xN over a warpgroup (128 lanes x N columns)",
       1,
       {16},
       tcgen05_32x32b,
       [](const Args &a) {
         return Args{128, a[0]};
       }},
      {"tcgen05_16x64b",
       "N",
       "tcgen05.ld/st .16x64b.xN for one warp (16 lanes x 2N columns)",
       1,
       {4},
       tcgen05_16x64b,
       [](const Args &a) {
         return Args{16, 2 * a[0]};
       }},
      {"tmem_m128",
       "N",
       "tcgen05.mma M=128 accumulator in tensor memory (cta_group::1)",
       1,
       {64},
       tmemM128,
       [](const Args &a) {
         return Args{128, a[0]};
       }},
      {"tmem_m64",
       "N",
       "tcgen05.mma M=64 accumulator in tensor memory (cta_group::1)",
       1,
       {64},
       tmemM64,
       [](const Args &a) {
         return Args{64, a[0]};
       }},
      {"tmem_m64_2cta",
       "N",
       "tcgen05.mma M=128 cta_group::2: one CTA's 64 rows, halves folded",
       1,
       {64},
       tmemM64TwoCta,
       [](const Args &a) {
         return Args{64, a[0]};
       }},
      {"smem_swizzle",
       "bytes, bits, rows, cols",
       "shared-memory tile in the 32B/64B/128B swizzle mode for 8/16/32-bit elements",
       4,
       {128, 16, 32, 64},
       smemSwizzle,
       [](const Args &a) {
         return Args{a[2], a[3]};
       }},
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
