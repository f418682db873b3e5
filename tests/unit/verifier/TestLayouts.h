// Helpers shared by the verifier's unit tests: building layouts in code and
// re-checking a witness with the layout engine, independently of the verifier.
#pragma once

#include "verifier/LayoutVerifier.h"

#include <doctest/doctest.h>

namespace tilescope::test {

inline Layout make(std::vector<Iter> s, std::vector<Iter> r = {}, std::vector<AxisOffset> o = {},
                   std::optional<Swizzle> sw = std::nullopt) {
  std::string err;
  auto l = Layout::make(std::move(s), std::move(r), std::move(o), sw, &err);
  REQUIRE_MESSAGE(l.has_value(), err);
  return *l;
}

inline const LayoutViolation *find(const LayoutReport &r, ViolationKind k) {
  for (const auto &v : r.violations)
    if (v.kind == k)
      return &v;
  return nullptr;
}

// The owner of (logical, replica number) by walking forEachOwner: the layout
// engine's own answer, not the verifier's ownerAt.
inline PhysCoord engineOwner(const Layout &l, const std::vector<int64_t> &shape,
                             const std::vector<int64_t> &logical, int64_t replica) {
  auto flat = flattenIndex(shape, logical);
  REQUIRE(flat.has_value());
  int64_t i = 0;
  PhysCoord out;
  l.forEachOwner(*flat, [&](const PhysCoord &c) {
    if (i++ == replica)
      out = c;
  });
  return out;
}

// A witness really shows what its kind claims.
inline void checkWitness(const Layout &l, const std::vector<int64_t> &shape,
                         const LayoutViolation &v) {
  const Witness &w = v.witness;
  switch (v.kind) {
  case ViolationKind::Bounds: {
    REQUIRE(w.logical.size() == 1);
    REQUIRE(w.axis.has_value());
    PhysCoord c = engineOwner(l, shape, w.logical[0], w.replica[0]);
    CHECK(c == w.physical);
    CHECK(c.get(*w.axis) >= w.extent);
    break;
  }
  case ViolationKind::Replica:
    if (w.axis) { // a replica on an axis the scope cannot replicate over
      REQUIRE(w.logical.size() == 1);
      PhysCoord c = engineOwner(l, shape, w.logical[0], w.replica[0]);
      CHECK(c == w.physical);
      CHECK(c.get(*w.axis) != engineOwner(l, shape, w.logical[0], 0).get(*w.axis));
      break;
    }
    [[fallthrough]];
  case ViolationKind::Alias: {
    REQUIRE(w.logical.size() == 2);
    CHECK(w.logical[0] != w.logical[1]);
    PhysCoord a = engineOwner(l, shape, w.logical[0], w.replica[0]);
    PhysCoord b = engineOwner(l, shape, w.logical[1], w.replica[1]);
    CHECK(a == b);
    CHECK(a == w.physical);
    if (v.kind == ViolationKind::Alias)
      CHECK((w.replica[0] == 0 && w.replica[1] == 0));
    else
      CHECK((w.replica[0] != 0 || w.replica[1] != 0));
    break;
  }
  default:
    break;
  }
}

} // namespace tilescope::test
