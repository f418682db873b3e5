// The Z3 engine and the enumerator must give the same answers on random
// layouts: non-power-of-two extents, replicas, offsets and swizzles.
#include "TestLayouts.h"

#include <random>
#include <set>

using namespace tilescope;
using namespace tilescope::test;

namespace {
struct RandomLayouts {
  std::mt19937_64 rng;
  explicit RandomLayouts(uint64_t seed) : rng(seed) {}
  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  Axis axis() {
    static const Axis axes[] = {Axis::m, Axis::m, Axis::laneid, Axis::warpid};
    return axes[uniform(0, 3)];
  }
  Iter iter() {
    static const int64_t strides[] = {0, 1, 1, 2, 3, 4, 5, 8, 12, 16, 32};
    return {uniform(1, 12), strides[uniform(0, 10)], axis()};
  }
  Layout layout() {
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
      offset.push_back({axis(), uniform(1, 20)});
    std::optional<Swizzle> sw;
    if (uniform(0, 3) == 0) {
      int b = static_cast<int>(uniform(0, 3));
      sw = Swizzle{static_cast<int>(uniform(0, 3)), b, static_cast<int>(uniform(b, 4)), 0,
                   Dtype::bf16};
    }
    return make(shard, replica, offset, sw);
  }
};

// What a report claims, independent of which witness was chosen.
std::set<std::pair<int, int>> claims(const LayoutReport &r) {
  std::set<std::pair<int, int>> out;
  for (const auto &v : r.violations)
    out.insert({static_cast<int>(v.kind), v.witness.axis ? static_cast<int>(*v.witness.axis) : -1});
  return out;
}
} // namespace

TEST_CASE("Z3 and enumeration agree on 1200 random layouts") {
  RandomLayouts gen(20261122);
  const TargetInfo &target = targetInfo(TargetKind::sm_90a);
  int withFindings = 0, withSwizzle = 0, withReplicas = 0;
  for (int n = 0; n < 1200; ++n) {
    Layout l = gen.layout();
    std::vector<int64_t> shape = {l.size()};
    BufferInfo b;
    b.scope = MemScope::Reg;
    // Half the cases with room to spare, so findings there are collisions.
    bool roomy = gen.uniform(0, 1) == 0;
    b.memoryElements = roomy ? 1 << 12 : gen.uniform(1, 2 * l.size());
    LaunchShape launch{roomy ? 1024 : gen.uniform(1, 8) * 32};
    VerifyOptions z3, brute;
    z3.engine = ProofEngine::Z3;
    brute.engine = ProofEngine::Enumerate;
    LayoutReport a = verifyLayout(l, shape, b, target, launch, z3);
    LayoutReport e = verifyLayout(l, shape, b, target, launch, brute);
    INFO("layout " << l.str() << " memory " << b.memoryElements << " threads " << launch.threads);
    REQUIRE(a.undecided.empty());
    REQUIRE(e.undecided.empty());
    CHECK(claims(a) == claims(e));
    for (const auto &v : a.violations)
      checkWitness(l, shape, v);
    withFindings += !a.violations.empty();
    withSwizzle += l.swizzle().has_value();
    withReplicas += l.replicas() > 1;
  }
  // The sample exercises both answers and every feature.
  CHECK(withFindings > 300);
  CHECK(withFindings < 1100);
  CHECK(withSwizzle > 200);
  CHECK(withReplicas > 300);
}

TEST_CASE("Z3 and enumeration agree on overlap of 300 random buffer pairs") {
  RandomLayouts gen(7);
  int overlaps = 0;
  static const Dtype dtypes[] = {Dtype::f32, Dtype::bf16, Dtype::u8};
  for (int n = 0; n < 300; ++n) {
    Layout la = gen.layout(), lb = gen.layout();
    BufferView a{&la, {la.size()}, {}}, b{&lb, {lb.size()}, {}};
    a.info.name = "a";
    b.info.name = "b";
    a.info.dtype = dtypes[gen.uniform(0, 2)];
    b.info.dtype = dtypes[gen.uniform(0, 2)];
    b.info.baseByte = gen.uniform(0, 64);
    VerifyOptions z3, brute;
    z3.engine = ProofEngine::Z3;
    brute.engine = ProofEngine::Enumerate;
    LayoutReport x = verifyNoOverlap(a, b, z3), y = verifyNoOverlap(a, b, brute);
    INFO(la.str() << " and " << lb.str() << " + base " << b.info.baseByte);
    REQUIRE(x.undecided.empty());
    CHECK(x.violations.size() == y.violations.size());
    overlaps += !x.violations.empty();
  }
  CHECK(overlaps > 30);
  CHECK(overlaps < 270);
}
