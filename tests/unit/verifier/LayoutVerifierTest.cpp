// Exact answers of the layout legality proofs, one behaviour per test case:
// each illegal layout next to its legal twin, with the Z3 engine and the
// enumerator asked separately, and every witness re-checked by the layout
// engine.
#include "TestLayouts.h"

using namespace tilescope;
using namespace tilescope::test;

namespace {
const TargetInfo &sm90 = targetInfo(TargetKind::sm_90a);
const TargetInfo &sm100 = targetInfo(TargetKind::sm_100a);

BufferInfo buffer(MemScope scope, Dtype dtype = Dtype::f32, int64_t memoryElements = 0) {
  BufferInfo b;
  b.scope = scope;
  b.dtype = dtype;
  b.memoryElements = memoryElements;
  return b;
}

// Both engines, each required to give `expectedKinds` exactly (in order).
std::vector<LayoutReport> verifyBoth(const Layout &l, const std::vector<int64_t> &shape,
                                     const BufferInfo &b, const TargetInfo &t,
                                     LaunchShape launch = {}) {
  std::vector<LayoutReport> out;
  for (ProofEngine e : {ProofEngine::Z3, ProofEngine::Enumerate}) {
    VerifyOptions o;
    o.engine = e;
    out.push_back(verifyLayout(l, shape, b, t, launch, o));
    CHECK(out.back().undecided.empty());
    for (const auto &v : out.back().violations)
      checkWitness(l, shape, v);
  }
  return out;
}

std::vector<ViolationKind> kinds(const LayoutReport &r) {
  std::vector<ViolationKind> k;
  for (const auto &v : r.violations)
    k.push_back(v.kind);
  return k;
}
using VK = ViolationKind;
} // namespace

TEST_CASE("bounds: a lane index past 31 is reported with the element that reaches it") {
  Layout legal = make({{32, 1, Axis::laneid}});
  for (auto &r : verifyBoth(legal, {32}, buffer(MemScope::Reg), sm90))
    CHECK(r.legal());
  Layout illegal = make({{33, 1, Axis::laneid}});
  for (auto &r : verifyBoth(illegal, {33}, buffer(MemScope::Reg), sm90)) {
    REQUIRE(kinds(r) == std::vector{VK::Bounds});
    CHECK(r.violations[0].message == "layout maps (32) to {laneid: 32}, but laneid must stay "
                                     "below 32");
    CHECK(r.violations[0].witness.extent == 32);
  }
}

TEST_CASE("bounds: warps come from the launch") {
  Layout l = make({{4, 1, Axis::warpid}, {8, 1, Axis::laneid}});
  LaunchShape four{128}, three{96};
  for (auto &r : verifyBoth(l, {4, 8}, buffer(MemScope::Reg), sm90, four))
    CHECK(r.legal());
  for (auto &r : verifyBoth(l, {4, 8}, buffer(MemScope::Reg), sm90, three)) {
    REQUIRE(kinds(r) == std::vector{VK::Bounds});
    CHECK(*r.violations[0].witness.axis == Axis::warpid);
    CHECK(r.violations[0].witness.logical[0][0] == 3);
  }
}

TEST_CASE("bounds: an offset pushes the last element past the shared allocation") {
  Layout legal = make({{4, 8, Axis::m}, {8, 1, Axis::m}});
  for (auto &r : verifyBoth(legal, {4, 8}, buffer(MemScope::Shared), sm90))
    CHECK(r.legal());
  Layout illegal = make({{4, 8, Axis::m}, {8, 1, Axis::m}}, {}, {{Axis::m, 1}});
  for (auto &r : verifyBoth(illegal, {4, 8}, buffer(MemScope::Shared), sm90)) {
    REQUIRE(kinds(r) == std::vector{VK::Bounds});
    CHECK(r.violations[0].message == "layout maps (3, 7) to {m: 32}, but m must stay below 32");
  }
}

TEST_CASE("bounds: a swizzle moves elements past a buffer that is not a whole pattern") {
  auto sw = Swizzle::fromMode(128, Dtype::bf16, nullptr);
  // 72 bf16: the chunk index 8 XORs to 9, i.e. elements 72..79.
  Layout l = make({{72, 1, Axis::m}}, {}, {}, sw);
  for (auto &r : verifyBoth(l, {72}, buffer(MemScope::Shared, Dtype::bf16), sm90)) {
    REQUIRE(kinds(r) == std::vector{VK::Bounds});
    CHECK(r.violations[0].witness.logical[0][0] >= 64);
    CHECK(r.violations[0].witness.physical.get(Axis::m) >= 72);
  }
  Layout whole = make({{128, 1, Axis::m}}, {}, {}, sw);
  for (auto &r : verifyBoth(whole, {128}, buffer(MemScope::Shared, Dtype::bf16), sm90))
    CHECK(r.legal());
}

TEST_CASE("bounds: tensor memory columns are the allocation's") {
  Layout l = make({{128, 1, Axis::TLane}, {64, 1, Axis::TCol}});
  BufferInfo b = buffer(MemScope::Tmem);
  b.tmemColumns = 64;
  for (auto &r : verifyBoth(l, {128, 64}, b, sm100))
    CHECK(r.legal());
  b.tmemColumns = 32;
  for (auto &r : verifyBoth(l, {128, 64}, b, sm100)) {
    REQUIRE(kinds(r) == std::vector{VK::Bounds});
    CHECK(*r.violations[0].witness.axis == Axis::TCol);
    CHECK(r.violations[0].witness.logical[0][1] >= 32);
  }
}

TEST_CASE("alias: the only colliding pair of a 2x2 tile is named") {
  Layout l = make({{2, 1, Axis::m}, {2, 1, Axis::m}});
  for (auto &r : verifyBoth(l, {2, 2}, buffer(MemScope::Shared, Dtype::f32, 4), sm90)) {
    REQUIRE(kinds(r) == std::vector{VK::Alias});
    CHECK(r.violations[0].message == "layout maps (0, 1) and (1, 0) to the same owner {m: 1}");
  }
  Layout twin = make({{2, 2, Axis::m}, {2, 1, Axis::m}});
  for (auto &r : verifyBoth(twin, {2, 2}, buffer(MemScope::Shared, Dtype::f32, 4), sm90))
    CHECK(r.legal());
}

TEST_CASE("alias: two lane iters that overlap on a thread layout") {
  Layout l = make({{4, 2, Axis::laneid}, {8, 1, Axis::laneid}});
  for (auto &r : verifyBoth(l, {4, 8}, buffer(MemScope::Reg), sm90)) {
    REQUIRE(kinds(r) == std::vector{VK::Alias});
    CHECK(r.violations[0].witness.physical.has(Axis::laneid));
  }
  Layout twin = make({{4, 8, Axis::laneid}, {8, 1, Axis::laneid}});
  for (auto &r : verifyBoth(twin, {4, 8}, buffer(MemScope::Reg), sm90))
    CHECK(r.legal());
}

TEST_CASE("alias: a stride-0 shard iter aliases unless the buffer allows it") {
  Layout l = make({{4, 0, Axis::m}, {8, 1, Axis::m}});
  BufferInfo b = buffer(MemScope::Shared, Dtype::f32, 8);
  for (auto &r : verifyBoth(l, {4, 8}, b, sm90))
    REQUIRE(kinds(r) == std::vector{VK::Alias});
  b.mayAlias = true;
  for (auto &r : verifyBoth(l, {4, 8}, b, sm90))
    CHECK(r.legal());
}

TEST_CASE("alias: a swizzled ring of stages that reuses the first stage") {
  auto sw = Swizzle::fromMode(128, Dtype::bf16, nullptr);
  // Stage stride 4096 elements, but each stage holds 8192: stages 0 and 1 share.
  Layout l = make({{2, 4096, Axis::m}, {128, 64, Axis::m}, {64, 1, Axis::m}}, {}, {}, sw);
  for (auto &r : verifyBoth(l, {2, 128, 64}, buffer(MemScope::Shared, Dtype::bf16), sm90)) {
    REQUIRE(kinds(r) == std::vector{VK::Alias});
    CHECK(r.violations[0].witness.logical[0][0] != r.violations[0].witness.logical[1][0]);
  }
  Layout twin = make({{2, 8192, Axis::m}, {128, 64, Axis::m}, {64, 1, Axis::m}}, {}, {}, sw);
  for (auto &r : verifyBoth(twin, {2, 128, 64}, buffer(MemScope::Shared, Dtype::bf16), sm90))
    CHECK(r.legal());
}

TEST_CASE("replica: replicas of different elements collide") {
  Layout l = make({{2, 1, Axis::laneid}}, {{2, 1, Axis::laneid}});
  for (auto &r : verifyBoth(l, {2}, buffer(MemScope::Reg), sm90)) {
    REQUIRE(kinds(r) == std::vector{VK::Replica});
    CHECK(r.violations[0].message ==
          "replicas collide: replica 1 of (0) and (1) land on the same owner {laneid: 1}");
  }
  Layout twin = make({{2, 1, Axis::laneid}}, {{2, 2, Axis::laneid}});
  for (auto &r : verifyBoth(twin, {2}, buffer(MemScope::Reg), sm90))
    CHECK(r.legal());
}

TEST_CASE("replica: a warp-broadcast copy that lands on the next row's warp") {
  Layout l = make({{4, 1, Axis::warpid}, {32, 1, Axis::laneid}}, {{2, 1, Axis::warpid}});
  LaunchShape launch{256};
  for (auto &r : verifyBoth(l, {4, 32}, buffer(MemScope::Reg), sm90, launch))
    REQUIRE(kinds(r) == std::vector{VK::Replica});
  Layout twin = make({{4, 1, Axis::warpid}, {32, 1, Axis::laneid}}, {{2, 4, Axis::warpid}});
  for (auto &r : verifyBoth(twin, {4, 32}, buffer(MemScope::Reg), sm90, launch))
    CHECK(r.legal());
}

TEST_CASE("replica: shared memory cannot replicate over its address") {
  Layout l = make({{8, 1, Axis::m}}, {{2, 8, Axis::m}});
  for (auto &r : verifyBoth(l, {8}, buffer(MemScope::Shared, Dtype::f32, 16), sm90)) {
    REQUIRE(kinds(r) == std::vector{VK::Replica});
    CHECK(*r.violations[0].witness.axis == Axis::m);
  }
  Layout twin = make({{8, 1, Axis::m}}, {{2, 1, Axis::cbx}});
  LaunchShape cluster;
  cluster.cluster = {2, 1, 1};
  for (auto &r : verifyBoth(twin, {8}, buffer(MemScope::Shared, Dtype::f32, 16), sm90, cluster))
    CHECK(r.legal());
}

TEST_CASE("scope: a register layout cannot place data on tensor memory lanes") {
  Layout l = make({{4, 1, Axis::TLane}, {32, 1, Axis::laneid}});
  for (auto &r : verifyBoth(l, {4, 32}, buffer(MemScope::Reg), sm100)) {
    REQUIRE(kinds(r) == std::vector{VK::Scope});
    CHECK(*r.violations[0].witness.axis == Axis::TLane);
  }
  Layout tmemOnHopper = make({{128, 1, Axis::TLane}});
  for (auto &r : verifyBoth(tmemOnHopper, {128}, buffer(MemScope::Tmem), sm90))
    REQUIRE(kinds(r) == std::vector{VK::Scope});
}

TEST_CASE("scope: shared memory cannot place data on lanes") {
  Layout l = make({{4, 8, Axis::m}, {8, 1, Axis::laneid}});
  for (auto &r : verifyBoth(l, {4, 8}, buffer(MemScope::Shared), sm90)) {
    REQUIRE(kinds(r) == std::vector{VK::Scope});
    CHECK(r.violations[0].message == "shard iter 1 puts (0, 1) on {laneid: 1, m: 0}, but a "
                                     "shared buffer cannot hold laneid");
  }
  Layout twin = make({{4, 8, Axis::m}, {8, 1, Axis::m}});
  for (auto &r : verifyBoth(twin, {4, 8}, buffer(MemScope::Shared), sm90))
    CHECK(r.legal());
}

TEST_CASE("a shape the layout does not admit is an input error, not a finding") {
  Layout l = make({{4, 1, Axis::m}});
  LayoutReport r = verifyLayout(l, {5}, buffer(MemScope::Shared), sm90, {});
  CHECK(r.violations.empty());
  REQUIRE(r.undecided.size() == 1);
  CHECK(r.undecided[0] == "layout S[4:1] does not admit shape (5)");
}

namespace {
std::vector<LayoutReport> overlapBoth(const BufferView &a, const BufferView &b) {
  std::vector<LayoutReport> out;
  for (ProofEngine e : {ProofEngine::Z3, ProofEngine::Enumerate}) {
    VerifyOptions o;
    o.engine = e;
    out.push_back(verifyNoOverlap(a, b, o));
    CHECK(out.back().undecided.empty());
  }
  return out;
}
BufferView view(const Layout &l, std::vector<int64_t> shape, std::string name, Dtype d,
                int64_t baseByte = 0) {
  BufferView v{&l, std::move(shape), buffer(MemScope::Shared, d)};
  v.info.name = std::move(name);
  v.info.baseByte = baseByte;
  return v;
}
} // namespace

TEST_CASE("overlap: the second buffer starts one element early") {
  Layout a = make({{4, 8, Axis::m}, {8, 1, Axis::m}});
  Layout b = make({{4, 8, Axis::m}, {8, 1, Axis::m}}, {}, {{Axis::m, 32}});
  for (auto &r :
       overlapBoth(view(a, {4, 8}, "As", Dtype::bf16), view(b, {4, 8}, "Bs", Dtype::bf16)))
    CHECK(r.legal());
  Layout early = make({{4, 8, Axis::m}, {8, 1, Axis::m}}, {}, {{Axis::m, 31}});
  for (auto &r :
       overlapBoth(view(a, {4, 8}, "As", Dtype::bf16), view(early, {4, 8}, "Bs", Dtype::bf16))) {
    REQUIRE(kinds(r) == std::vector{VK::Overlap});
    CHECK(r.violations[0].message == "buffers As and Bs overlap: As(3, 7) at {m: 31} (byte 62) "
                                     "and Bs(0, 0) at {m: 31} (byte 62)");
  }
}

TEST_CASE("overlap: buffers of different dtypes compare bytes") {
  Layout a = make({{4, 1, Axis::m}});
  Layout b = make({{8, 1, Axis::m}}, {}, {{Axis::m, 8}});
  for (auto &r : overlapBoth(view(a, {4}, "acc", Dtype::f32), view(b, {8}, "out", Dtype::bf16)))
    CHECK(r.legal());
  Layout b7 = make({{8, 1, Axis::m}}, {}, {{Axis::m, 7}});
  for (auto &r : overlapBoth(view(a, {4}, "acc", Dtype::f32), view(b7, {8}, "out", Dtype::bf16))) {
    REQUIRE(kinds(r) == std::vector{VK::Overlap});
    CHECK(r.violations[0].witness.logical == std::vector<std::vector<int64_t>>{{3}, {0}});
  }
}

TEST_CASE("overlap: pipeline stages placed by base address") {
  Layout stage = make({{2, 64, Axis::m}, {64, 1, Axis::m}});
  for (auto &r : overlapBoth(view(stage, {2, 64}, "stage0", Dtype::bf16, 0),
                             view(stage, {2, 64}, "stage1", Dtype::bf16, 256)))
    CHECK(r.legal());
  for (auto &r : overlapBoth(view(stage, {2, 64}, "stage0", Dtype::bf16, 0),
                             view(stage, {2, 64}, "stage1", Dtype::bf16, 128))) {
    REQUIRE(kinds(r) == std::vector{VK::Overlap});
    CHECK(r.violations[0].witness.logical[0][0] == 1);
  }
}
