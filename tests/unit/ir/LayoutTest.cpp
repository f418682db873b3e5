// Exact results for the layout engine: evaluation, replicas, offsets,
// swizzles, the inverse query and shape admission.
#include "ir/Layout.h"

#include <doctest/doctest.h>
#include <random>

using namespace tilescope;

namespace {
Layout make(std::vector<Iter> s, std::vector<Iter> r = {}, std::vector<AxisOffset> o = {},
            std::optional<Swizzle> sw = std::nullopt) {
  std::string err;
  auto l = Layout::make(std::move(s), std::move(r), std::move(o), sw, &err);
  REQUIRE_MESSAGE(l.has_value(), err);
  return *l;
}
PhysCoord coord(std::initializer_list<std::pair<Axis, int64_t>> values) {
  PhysCoord c;
  for (auto [a, v] : values)
    c.set(a, v);
  return c;
}
} // namespace

TEST_CASE("row of a 4x8 tile on warps, column on lanes") {
  Layout l = make({{4, 1, Axis::warpid}, {8, 1, Axis::laneid}});
  CHECK(l.size() == 32);
  CHECK(l.admits({4, 8}));
  CHECK(l.admits({32}));
  CHECK_FALSE(l.admits({4, 9}));
  PhysCoord c = l.base(*flattenIndex({4, 8}, {3, 5}));
  CHECK(c.get(Axis::warpid) == 3);
  CHECK(c.get(Axis::laneid) == 5);
  CHECK(c.str() == "{laneid: 5, warpid: 3}");
  CHECK(l.str() == "S[(4,8):(1@warpid,1@laneid)]");
}

TEST_CASE("first shard iter is the most significant digit, non-power-of-two extents") {
  // 3x5 tile stored column-major: (i, j) -> m = i + 3j.
  Layout l = make({{3, 1, Axis::m}, {5, 3, Axis::m}});
  CHECK(l.base(*flattenIndex({3, 5}, {2, 4})).get(Axis::m) == 14);
  CHECK(l.base(*flattenIndex({3, 5}, {1, 0})).get(Axis::m) == 1);
  CHECK(l.base(*flattenIndex({3, 5}, {0, 1})).get(Axis::m) == 3);
  CHECK(l.str() == "S[(3,5):(1,3)]");
}

TEST_CASE("offsets add per axis and merge in canonical order") {
  Layout l = make({{8, 1, Axis::laneid}}, {},
                  {{Axis::m, 64}, {Axis::warpid, 3}, {Axis::m, 0}, {Axis::warpid, 1}});
  PhysCoord c = l.base(5);
  CHECK(c.get(Axis::laneid) == 5);
  CHECK(c.get(Axis::warpid) == 4);
  CHECK(c.get(Axis::m) == 64);
  CHECK(l.str() == "S[8:1@laneid] + 4@warpid + 64@m");
}

TEST_CASE("replicas on several axes give every combination of owners") {
  Layout l = make({{4, 1, Axis::laneid}}, {{2, 4, Axis::warpid}, {3, 8, Axis::laneid}});
  CHECK(l.replicas() == 6);
  auto owners = l.owners(1);
  REQUIRE(owners.size() == 6);
  CHECK(owners[0] == coord({{Axis::laneid, 1}, {Axis::warpid, 0}}));
  CHECK(owners[1] == coord({{Axis::laneid, 9}, {Axis::warpid, 0}}));
  CHECK(owners[2] == coord({{Axis::laneid, 17}, {Axis::warpid, 0}}));
  CHECK(owners[3] == coord({{Axis::laneid, 1}, {Axis::warpid, 4}}));
  CHECK(owners[5] == coord({{Axis::laneid, 17}, {Axis::warpid, 4}}));
  CHECK(l.str() == "S[4:1@laneid] + R[(2,3):(4@warpid,8@laneid)]");
  // Every replica slot inverts to the same element.
  for (const PhysCoord &o : owners)
    CHECK(l.preimages(o) == std::vector<int64_t>{1});
}

TEST_CASE("swizzle 128B for bf16 XORs 16-byte chunk bits 0-2 with row bits 3-5") {
  std::string why;
  auto sw = Swizzle::fromMode(128, Dtype::bf16, &why);
  REQUIRE(sw);
  CHECK(sw->bitsKept == 3);
  CHECK(sw->bitsXored == 3);
  CHECK(sw->shift == 3);
  // Row 1 of a 8x64 bf16 tile: chunk 0 of row 1 is chunk index 8 -> 8 ^ 1 = 9.
  CHECK(sw->apply(64) == 72);
  CHECK(sw->apply(64 + 5) == 77);
  // Row 7, chunk 2: x = 7*8 + 2 = 58 -> 58 ^ 7 = 61.
  CHECK(sw->apply(7 * 64 + 2 * 8) == 61 * 8);
  Layout l = make({{8, 64, Axis::m}, {64, 1, Axis::m}}, {}, {}, sw);
  CHECK(l.str() == "swizzle(128B, bf16, S[(8,64):(64,1)])");
  CHECK(l.base(*flattenIndex({8, 64}, {7, 16})).get(Axis::m) == 61 * 8);
}

TEST_CASE("every swizzle mode for 8, 16 and 32-bit elements") {
  struct Case {
    int bytes;
    Dtype dtype;
    int kept, xored;
  };
  for (Case c :
       {Case{32, Dtype::f8e4m3, 4, 1}, Case{64, Dtype::f8e4m3, 4, 2},
        Case{128, Dtype::f8e4m3, 4, 3}, Case{32, Dtype::f16, 3, 1}, Case{64, Dtype::f16, 3, 2},
        Case{128, Dtype::f16, 3, 3}, Case{32, Dtype::f32, 2, 1}, Case{64, Dtype::f32, 2, 2},
        Case{128, Dtype::f32, 2, 3}}) {
    auto sw = Swizzle::fromMode(c.bytes, c.dtype, nullptr);
    REQUIRE(sw);
    CHECK(sw->bitsKept == c.kept);
    CHECK(sw->bitsXored == c.xored);
    CHECK(sw->shift == 3);
    // An involution on a whole swizzle atom.
    for (int64_t m = 0; m < 4096; ++m)
      CHECK(sw->apply(sw->apply(m)) == m);
  }
  // 32B mode on f32: chunk bit 0 flips with chunk bit 3, i.e. every 128 bytes.
  auto sw32 = *Swizzle::fromMode(32, Dtype::f32, nullptr);
  CHECK(sw32.apply(32) == 36);  // chunk 8 -> 9
  CHECK(sw32.apply(64) == 64);  // chunk 16 -> 16
  CHECK(sw32.apply(97) == 101); // chunk 24 -> 25, element 1 kept
  std::string why;
  CHECK_FALSE(Swizzle::fromMode(96, Dtype::f16, &why));
  CHECK(why.find("32B, 64B or 128B") != std::string::npos);
  CHECK_FALSE(Swizzle::fromMode(128, Dtype::f6e2m3, &why));
}

TEST_CASE("explicit swizzle parameters print in the general form") {
  Layout l = make({{16, 1, Axis::m}}, {}, {}, Swizzle{1, 2, 3});
  CHECK(l.str() == "swizzle(1, 2, 3, S[16:1])");
  std::string err;
  CHECK_FALSE(Layout::make({{16, 1, Axis::m}}, {}, {}, Swizzle{1, 3, 2}, &err));
  CHECK(err == "swizzle needs S >= B, got B = 3, S = 2");
}

TEST_CASE("construction rejects what no layout may hold") {
  std::string err;
  CHECK_FALSE(Layout::make({}, {}, {}, std::nullopt, &err));
  CHECK(err == "a layout needs at least one shard iter");
  CHECK_FALSE(Layout::make({{0, 1, Axis::m}}, {}, {}, std::nullopt, &err));
  CHECK(err == "shard extent must be at least 1, not 0");
  CHECK_FALSE(Layout::make({{4, -1, Axis::m}}, {}, {}, std::nullopt, &err));
  CHECK_FALSE(Layout::make({{4, 1, Axis::m}}, {{2, -3, Axis::laneid}}, {}, std::nullopt, &err));
  CHECK(err == "replica stride must not be negative, not -3");
  CHECK_FALSE(Layout::make({{4, 1, Axis::m}}, {}, {{Axis::m, -1}}, std::nullopt, &err));
}

TEST_CASE("inverse query of an empty slot, of an unused axis, and of an aliasing layout") {
  Layout l = make({{4, 2, Axis::m}});
  CHECK(l.preimages(coord({{Axis::m, 6}})) == std::vector<int64_t>{3});
  CHECK(l.preimages(coord({{Axis::m, 5}})).empty());
  CHECK(l.preimages(coord({{Axis::m, 8}})).empty());
  CHECK(l.preimages(coord({{Axis::m, 2}, {Axis::laneid, 1}})).empty());
  CHECK(l.preimages(coord({{Axis::m, 2}, {Axis::laneid, 0}})) == std::vector<int64_t>{1});
  // Stride 0 broadcasts: four elements share one slot.
  Layout bcast = make({{4, 0, Axis::m}, {2, 1, Axis::m}});
  CHECK(bcast.preimages(coord({{Axis::m, 1}})) == std::vector<int64_t>{1, 3, 5, 7});
  // Overlapping strides: (i, j) -> 3i + j over 3x4 aliases (1,0) and (0,3).
  Layout overlap = make({{3, 3, Axis::m}, {4, 1, Axis::m}});
  CHECK(overlap.preimages(coord({{Axis::m, 3}})) == std::vector<int64_t>{3, 4});
}

TEST_CASE("bank and line of shared memory elements") {
  CHECK(bankOf(0, Dtype::bf16).bank == 0);
  CHECK(bankOf(1, Dtype::bf16).bank == 0);
  CHECK(bankOf(2, Dtype::bf16).bank == 1);
  CHECK(bankOf(64, Dtype::bf16).bank == 0);
  CHECK(bankOf(64, Dtype::bf16).line == 1);
  CHECK(bankOf(33, Dtype::f32).bank == 1);
  CHECK(bankOf(33, Dtype::f32).line == 1);
  CHECK(bankOf(255, Dtype::f8e4m3).bank == 31);
  CHECK(bankOf(255, Dtype::f8e4m3).line == 1);
  CHECK(bankOf(7, Dtype::f4e2m1).bank == 0);
  CHECK(bankOf(8, Dtype::f4e2m1).bank == 1);
}

TEST_CASE("flatten and unflatten are inverse, and out-of-range indices are refused") {
  std::vector<int64_t> shape{3, 5, 7};
  for (int64_t f = 0; f < 105; ++f)
    CHECK(flattenIndex(shape, unflattenIndex(shape, f)) == f);
  CHECK_FALSE(flattenIndex(shape, {3, 0, 0}));
  CHECK_FALSE(flattenIndex(shape, {0, -1, 0}));
  CHECK_FALSE(flattenIndex(shape, {0, 0}));
}

// Property: for random injective layouts (disjoint digit ranges per axis, in a
// random order, with random offsets, replicas and swizzles), inverse(apply(x))
// is x for every element and every owner.
TEST_CASE("inverse of apply is the identity on random layouts") {
  std::mt19937_64 rng(20261122);
  const Axis axes[] = {Axis::m, Axis::laneid, Axis::warpid, Axis::TCol};
  for (int trial = 0; trial < 400; ++trial) {
    int n = 1 + static_cast<int>(rng() % 4);
    std::vector<Iter> shard;
    std::array<int64_t, kNumAxes> nextStride;
    nextStride.fill(1);
    for (int k = 0; k < n; ++k) {
      Axis a = axes[rng() % 4];
      int64_t extent = 1 + static_cast<int64_t>(rng() % 7);
      int64_t &s = nextStride[static_cast<size_t>(a)];
      shard.push_back({extent, s, a});
      s *= extent + static_cast<int64_t>(rng() % 2); // sometimes leave gaps
    }
    std::shuffle(shard.begin(), shard.end(), rng);
    std::vector<Iter> replica;
    if (rng() % 3 == 0) {
      Axis a = axes[1 + rng() % 3];
      int64_t &s = nextStride[static_cast<size_t>(a)];
      replica.push_back({2, s, a});
    }
    std::vector<AxisOffset> offset;
    if (rng() % 2)
      offset.push_back({axes[rng() % 4], static_cast<int64_t>(rng() % 5)});
    std::optional<Swizzle> sw;
    if (rng() % 3 == 0)
      sw = Swizzle{static_cast<int>(rng() % 3), static_cast<int>(rng() % 3), 3};
    Layout l = make(shard, replica, offset, sw);
    for (int64_t flat = 0; flat < l.size(); ++flat)
      l.forEachOwner(flat, [&](const PhysCoord &c) {
        auto pre = l.preimages(c);
        INFO(l.str(), " flat ", flat, " owner ", c.str());
        REQUIRE(pre.size() == 1);
        CHECK(pre[0] == flat);
      });
  }
}
