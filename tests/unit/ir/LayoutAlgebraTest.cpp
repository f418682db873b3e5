// Layout algebra (ir/LayoutAlgebra.h): exact answers for small cases, then
// the defining property of each operation checked element by element over
// many generated layouts.
#include "ir/LayoutAlgebra.h"
#include "ir/LayoutText.h"

#include <doctest/doctest.h>
#include <llvm/Support/SourceMgr.h>

#include <random>
#include <set>

using namespace tilescope;

namespace {
Layout parse(const std::string &text) {
  llvm::SourceMgr sm;
  Diagnostics diag(sm, false);
  auto spec = parseLayoutText(text, "<test>", diag);
  REQUIRE(spec);
  return spec->layout;
}
std::string composed(const std::string &a, const std::string &b) {
  std::string error;
  auto l = compose(parse(a), parse(b), &error);
  return l ? l->str() : "error: " + error;
}
std::string complemented(const std::string &a, int64_t m) {
  std::string error;
  auto l = complement(parse(a), m, &error);
  return l ? l->str() : "error: " + error;
}
std::string divided(const std::string &a, const std::string &t) {
  std::string error;
  auto l = logicalDivide(parse(a), parse(t), &error);
  return l ? l->str() : "error: " + error;
}
int64_t on(const PhysCoord &c, Axis a) {
  return c.get(a);
}

// A layout on m of `size` elements: a random factorisation into iters whose
// strides are a permutation of the compact strides, sometimes spread out.
Layout randomLayout(std::mt19937 &rng, int64_t size, bool spread) {
  std::vector<int64_t> extents;
  for (int64_t rest = size; rest > 1;) {
    int64_t f = rest % 3 == 0 && rng() % 3 == 0 ? 3 : int64_t{1} << (1 + rng() % 2);
    if (rest % f != 0)
      f = rest;
    extents.push_back(f);
    rest /= f;
  }
  if (extents.empty())
    extents.push_back(1);
  std::vector<size_t> order(extents.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<Iter> iters(extents.size());
  int64_t stride = 1;
  for (size_t k : order) {
    iters[k] = {extents[k], stride, Axis::m};
    stride *= extents[k] * (spread && rng() % 4 == 0 ? 2 : 1);
  }
  std::string error;
  auto l = Layout::make(iters, {}, {}, std::nullopt, &error);
  REQUIRE(l);
  return *l;
}
} // namespace

TEST_CASE("composition: exact results") {
  // Reading a row-major 4x8 tile column by column.
  CHECK(composed("S[(4,8):(8,1)]", "S[(8,4):(1,8)]") == "S[(8,4):(1,8)]");
  // The index map walks A's flat index; A's owners come out.
  CHECK(composed("S[(4,32):(1@warpid,1@laneid)]", "S[(32,4):(1,32)]") ==
        "S[(32,4):(1@laneid,1@warpid)]");
  // Every other element of a 16-element row-major row: stride 2.
  CHECK(composed("S[16:1]", "S[8:2]") == "S[8:2]");
  // A swizzle and replicas of A carry over.
  CHECK(composed("swizzle(128B, bf16, S[(8,64):(64,1)])", "S[(64,8):(1,64)]") ==
        "swizzle(128B, bf16, S[(64,8):(1,64)])");
  CHECK(composed("S[8:1@m] + R[4:8@laneid]", "S[4:2]") == "S[4:2] + R[4:8@laneid]");
  // Not expressible, or out of range: said, not guessed.
  CHECK(composed("S[(3,4):(4,1)]", "S[2:3]")
            .rfind("error: A's iter of extent 4 is not a multiple", 0) == 0);
  CHECK(composed("S[8:1]", "S[4:4]")
            .rfind("error: the index map's iter (4, 4) reaches index 12", 0) == 0);
  CHECK(composed("S[8:1]", "S[4:1@laneid]").rfind("error: the index map", 0) == 0);
}

TEST_CASE("complement: exact results") {
  CHECK(complemented("S[4:2]", 16) == "S[(2,2):(8,1)]");
  CHECK(complemented("S[(4,8):(8,1)]", 32) == "S[1:0]");
  CHECK(complemented("S[(2,4):(1,8)]", 64) == "S[(2,4):(32,2)]");
  CHECK(complemented("S[32:1@laneid]", 64) == "S[2:32@laneid]");
  CHECK(complemented("S[4:0]", 16).rfind("error: S[4:0] is not injective", 0) == 0);
  CHECK(complemented("S[(2,2):(3,2)]", 12).rfind("error: stride 3 is not a multiple of 4", 0) == 0);
  CHECK(complemented("S[4:2]", 12).rfind("error: S[4:2] covers [0, 8)", 0) == 0);
}

TEST_CASE("division: exact results") {
  // A 64x64 row-major tile by 8x8 blocks: 64 tiles (block row, block column)
  // of 64 elements (row, column within the block).
  CHECK(divided("S[(64,64):(64,1)]", "S[(8,8):(64,1)]") == "S[(8,8,8,8):(512,8,64,1)]");
  // A warp's 32 lanes in groups of 4 consecutive lanes.
  CHECK(divided("S[32:1@laneid]", "S[4:1]") == "S[(8,4):(4@laneid,1@laneid)]");
  CHECK(divided("S[16:1]", "S[3:1]").rfind("error: a tile of 3 elements", 0) == 0);
}

TEST_CASE("composition over generated layouts: (A o B)(i) = A(B(i)) for every i") {
  std::mt19937 rng(7);
  int expressed = 0;
  for (int trial = 0; trial < 400; ++trial) {
    int64_t size = int64_t{1} << (2 + rng() % 6);
    if (rng() % 4 == 0)
      size *= 3;
    Layout a = randomLayout(rng, size, rng() % 2);
    // B: a random layout into A's index space, sometimes reading a part.
    int64_t part = size >> (rng() % 3);
    if (part < 1 || size % part)
      part = size;
    Layout b = randomLayout(rng, part, false);
    std::string error;
    auto c = compose(a, b, &error);
    if (!c) {
      CHECK(!error.empty());
      continue;
    }
    ++expressed;
    REQUIRE(c->size() == b.size());
    for (int64_t i = 0; i < b.size(); ++i) {
      int64_t j = on(b.base(i), Axis::m);
      REQUIRE(j < a.size());
      CHECK(c->owners(i) == a.owners(j));
    }
  }
  CHECK(expressed > 200);
}

TEST_CASE("complement over generated layouts: A(i) + C(j) hits [0, M) exactly once") {
  std::mt19937 rng(11);
  int expressed = 0;
  for (int trial = 0; trial < 400; ++trial) {
    int64_t size = int64_t{1} << (1 + rng() % 5);
    Layout a = randomLayout(rng, size, true);
    int64_t reach = 0;
    for (int64_t i = 0; i < a.size(); ++i)
      reach = std::max(reach, on(a.base(i), Axis::m) + 1);
    int64_t m = reach;
    while (m & (m - 1))
      ++m;
    m <<= rng() % 3;
    std::string error;
    auto c = complement(a, m, &error);
    if (!c) {
      CHECK(!error.empty());
      continue;
    }
    ++expressed;
    std::multiset<int64_t> hit;
    for (int64_t i = 0; i < a.size(); ++i)
      for (int64_t j = 0; j < c->size(); ++j)
        hit.insert(on(a.base(i), Axis::m) + on(c->base(j), Axis::m));
    REQUIRE(static_cast<int64_t>(hit.size()) == m);
    for (int64_t v = 0; v < m; ++v)
      CHECK(hit.count(v) == 1);
    // Its strides increase towards the least significant iter... reversed:
    // the most significant iter has the largest stride.
    for (size_t k = 1; k < c->shard().size(); ++k)
      CHECK(c->shard()[k - 1].stride > c->shard()[k].stride);
  }
  CHECK(expressed > 300);
}

TEST_CASE("division over generated layouts: element (q, r) is A(T(r) + complement(q))") {
  std::mt19937 rng(13);
  int expressed = 0;
  for (int trial = 0; trial < 300; ++trial) {
    int64_t size = int64_t{1} << (3 + rng() % 5);
    Layout a = randomLayout(rng, size, false);
    Layout t = randomLayout(rng, size >> (1 + rng() % 3), true);
    std::string error;
    auto d = logicalDivide(a, t, &error);
    if (!d) {
      CHECK(!error.empty());
      continue;
    }
    ++expressed;
    auto rest = complement(t, a.size(), &error);
    REQUIRE(rest);
    REQUIRE(d->size() == a.size());
    std::set<int64_t> seen;
    for (int64_t q = 0; q < rest->size(); ++q)
      for (int64_t r = 0; r < t.size(); ++r) {
        int64_t index = on(t.base(r), Axis::m) + on(rest->base(q), Axis::m);
        CHECK(seen.insert(index).second); // a bijection onto A's indices
        CHECK(d->owners(q * t.size() + r) == a.owners(index));
      }
    CHECK(static_cast<int64_t>(seen.size()) == a.size());
  }
  CHECK(expressed > 100);
}
