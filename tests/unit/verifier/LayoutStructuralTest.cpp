// The structural shortcuts of the layout proofs (verifier/LayoutStructural.h)
// may only say "proved" where enumerating every owner agrees, and must fire
// on the layouts the library uses (else they save nothing).
#include "verifier/LayoutStructural.h"
#include "TestLayouts.h"

#include <map>
#include <random>
#include <set>

using namespace tilescope;
using namespace tilescope::detail;
using namespace tilescope::test;

namespace {

// Every owner of every element, as the layout engine enumerates them.
struct Owners {
  std::array<int64_t, kNumAxes> largest{};
  bool baseOneToOne = true, allOneToOne = true;
};

Owners enumerate(const Layout &l) {
  Owners o;
  std::set<std::array<int64_t, kNumAxes>> base, all;
  for (int64_t flat = 0; flat < l.size(); ++flat) {
    int64_t r = 0;
    l.forEachOwner(flat, [&](const PhysCoord &c) {
      for (size_t a = 0; a < kNumAxes; ++a)
        o.largest[a] = std::max(o.largest[a], c.value[a]);
      if (r++ == 0 && !base.insert(c.value).second)
        o.baseOneToOne = false;
      if (!all.insert(c.value).second)
        o.allOneToOne = false;
    });
  }
  return o;
}

Layout randomLayout(std::mt19937_64 &rng) {
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  static const Axis axes[] = {Axis::m, Axis::m, Axis::laneid, Axis::warpid};
  static const int64_t strides[] = {0, 1, 1, 2, 3, 4, 5, 8, 12, 16, 32, 64};
  auto iter = [&] { return Iter{uniform(1, 9), strides[uniform(0, 11)], axes[uniform(0, 3)]}; };
  std::vector<Iter> shard, replica;
  std::vector<AxisOffset> offset;
  for (int64_t k = uniform(1, 3); k > 0; --k)
    shard.push_back(iter());
  for (int64_t k = uniform(0, 2); k > 0; --k) {
    Iter r = iter();
    r.extent = uniform(1, 3);
    replica.push_back(r);
  }
  if (uniform(0, 2) == 0)
    offset.push_back({axes[uniform(0, 3)], uniform(1, 40)});
  std::optional<Swizzle> sw;
  if (uniform(0, 2) == 0) {
    int b = static_cast<int>(uniform(0, 3));
    sw = Swizzle{static_cast<int>(uniform(0, 3)), b, static_cast<int>(uniform(b, 4)), 0,
                 Dtype::bf16};
  }
  return make(shard, replica, offset, sw);
}

} // namespace

TEST_CASE("structural layout proofs agree with enumeration on 4000 random layouts") {
  std::mt19937_64 rng(20261125);
  int below = 0, oneToOne = 0, exactBounds = 0;
  for (int n = 0; n < 4000; ++n) {
    Layout l = randomLayout(rng);
    Owners o = enumerate(l);
    INFO("layout " << l.str());
    for (Axis a : {Axis::m, Axis::laneid, Axis::warpid}) {
      int64_t top = o.largest[static_cast<size_t>(a)];
      // Never "proved" when an owner reaches the bound.
      CHECK_FALSE(provedBelow(l, a, top));
      if (provedBelow(l, a, top + 1))
        ++exactBounds;
      for (int64_t bound : {top + 1, top + 7, top + 64})
        below += provedBelow(l, a, bound);
      // Without a swizzle the range is exact.
      if (!l.swizzle() || a != Axis::m)
        CHECK(provedBelow(l, a, top + 1));
    }
    if (provedOneToOne(l, false)) {
      ++oneToOne;
      CHECK(o.baseOneToOne);
    }
    if (provedOneToOne(l, true))
      CHECK(o.allOneToOne);
  }
  // The generator reaches both answers often enough to mean something.
  CHECK(below > 4000);
  CHECK(oneToOne > 400);
  CHECK(exactBounds > 4000);
}

TEST_CASE("structural layout proofs decide the library's layouts") {
  // 4 stages of a 128 x 64 bf16 tile, 128-byte swizzle (M = 3, B = 3, S = 3).
  std::string why;
  std::optional<Swizzle> sw = Swizzle::fromMode(128, Dtype::bf16, &why);
  REQUIRE(sw);
  Layout tiles = make({{4, 8192, Axis::m}, {128, 64, Axis::m}, {64, 1, Axis::m}}, {}, {}, sw);
  CHECK(provedOneToOne(tiles, true));
  CHECK(provedBelow(tiles, Axis::m, 32768));
  CHECK_FALSE(provedBelow(tiles, Axis::m, 32767));
  // A stride that overlaps the next one: decided by the engine, not here.
  Layout overlapping = make({{4, 3, Axis::m}, {4, 2, Axis::m}});
  CHECK_FALSE(provedOneToOne(overlapping, false));
  // Strides 2 and 3 over extents 3 and 2 are one-to-one ({0,2,4,3,5,7}) but
  // not a mixed radix: left to the engine (the shortcut is sufficient only).
  Layout notRadix = make({{3, 2, Axis::m}, {2, 3, Axis::m}});
  CHECK(enumerate(notRadix).baseOneToOne);
  CHECK_FALSE(provedOneToOne(notRadix, false));
  // A replica on a thread axis the shard does not use stays one-to-one; one
  // with stride 0 does not.
  Layout replicated = make({{32, 1, Axis::laneid}}, {{4, 1, Axis::warpid}});
  CHECK(provedOneToOne(replicated, true));
  Layout broadcast = make({{32, 1, Axis::laneid}}, {{4, 0, Axis::warpid}});
  CHECK(provedOneToOne(broadcast, false));
  CHECK_FALSE(provedOneToOne(broadcast, true));
}

TEST_CASE("the verifier's answers are unchanged where a shortcut decides") {
  const TargetInfo &target = targetInfo(TargetKind::sm_90a);
  std::string why;
  std::optional<Swizzle> sw = Swizzle::fromMode(128, Dtype::bf16, &why);
  REQUIRE(sw);
  BufferInfo b;
  b.scope = MemScope::Shared;
  b.dtype = Dtype::bf16;
  Layout tiles = make({{4, 8192, Axis::m}, {128, 64, Axis::m}, {64, 1, Axis::m}}, {}, {}, sw);
  VerifyOptions z3;
  z3.engine = ProofEngine::Z3;
  CHECK(verifyLayout(tiles, {4, 128, 64}, b, target, {384}, z3).legal());
  // One slot short: the bound is not proved structurally and Z3 finds it.
  b.memoryElements = 32767;
  LayoutReport r = verifyLayout(tiles, {4, 128, 64}, b, target, {384}, z3);
  REQUIRE(find(r, ViolationKind::Bounds));
  // Two buffers side by side, and one overlapping the other's last byte.
  BufferView x{&tiles, {4, 128, 64}, b}, y{&tiles, {4, 128, 64}, b};
  x.info.memoryElements = y.info.memoryElements = 0;
  y.info.baseByte = 65536;
  CHECK(verifyNoOverlap(x, y, z3).legal());
  y.info.baseByte = 65534;
  CHECK(find(verifyNoOverlap(x, y, z3), ViolationKind::Overlap));
}
