// The brute-force engine: evaluates every owner of every element with the
// layout engine. Exact for any concrete shape it can afford; the tests hold
// the Z3 engine to its answers.
#include "verifier/LayoutChecks.h"

#include <unordered_map>

namespace tilescope::detail {
namespace {

struct CoordKey {
  std::array<int64_t, kNumAxes> value{};
  bool operator==(const CoordKey &) const = default;
};
struct CoordHash {
  size_t operator()(const CoordKey &k) const {
    uint64_t h = 1469598103934665603ull;
    for (int64_t v : k.value)
      h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};
CoordKey keyOf(const PhysCoord &c) {
  CoordKey k;
  for (size_t i = 0; i < kNumAxes; ++i)
    k.value[i] = c.has(static_cast<Axis>(i)) ? c.value[i] : 0;
  return k;
}

struct Owner {
  int64_t flat = -1, replica = 0;
};
// Per slot, for base owners (replica 0) and for other replicas: the first
// owner seen and the first one of another element. Any earlier owner of an
// element other than a newcomer's is then among the two, so every collision
// between distinct elements is found.
struct SlotOwners {
  Owner first[2], other[2];
  void remember(int cls, Owner o) {
    if (first[cls].flat < 0)
      first[cls] = o;
    else if (other[cls].flat < 0 && first[cls].flat != o.flat)
      other[cls] = o;
  }
  const Owner *partnerOf(int cls, int64_t flat) const {
    if (first[cls].flat >= 0 && first[cls].flat != flat)
      return &first[cls];
    if (other[cls].flat >= 0 && other[cls].flat != flat)
      return &other[cls];
    return nullptr;
  }
};

void forEachOwnerIndexed(const Layout &layout,
                         const std::function<void(int64_t, int64_t, const PhysCoord &)> &fn) {
  for (int64_t flat = 0; flat < layout.size(); ++flat) {
    int64_t replica = 0;
    layout.forEachOwner(flat, [&](const PhysCoord &c) { fn(flat, replica++, c); });
  }
}
} // namespace

void enumerateLayout(const LayoutQuestion &q, LayoutReport &report) {
  std::optional<LayoutViolation> alias, replica;
  std::array<std::optional<LayoutViolation>, kNumAxes> bounds;
  std::unordered_map<CoordKey, SlotOwners, CoordHash> slots;
  bool collisions = q.checkAlias;
  slots.reserve(static_cast<size_t>(collisions ? q.layout.size() * q.layout.replicas() : 0));
  forEachOwnerIndexed(q.layout, [&](int64_t flat, int64_t r, const PhysCoord &c) {
    for (size_t i = 0; i < kNumAxes; ++i)
      if (q.bound[i] > 0 && c.value[i] >= q.bound[i] && !bounds[i])
        bounds[i] = boundsViolation(q, static_cast<Axis>(i), flat, r);
    if (!collisions)
      return;
    SlotOwners &slot = slots[keyOf(c)];
    int cls = r == 0 ? 0 : 1;
    if (cls == 0 && !alias)
      if (const Owner *p = slot.partnerOf(0, flat))
        alias = aliasViolation(q, p->flat, flat);
    if (!replica && q.layout.replicas() > 1) {
      // With a replica involved: any partner of the other class, or of ours
      // when we are not a base owner.
      const Owner *p = slot.partnerOf(1, flat);
      if (!p && cls == 1)
        p = slot.partnerOf(0, flat);
      if (p)
        replica = replicaViolation(q, p->flat, p->replica, flat, r);
    }
    slot.remember(cls, {flat, r});
  });
  for (auto &b : bounds)
    if (b)
      report.violations.push_back(std::move(*b));
  if (alias)
    report.violations.push_back(std::move(*alias));
  if (replica)
    report.violations.push_back(std::move(*replica));
}

void enumerateOverlap(const OverlapQuestion &q, LayoutReport &report) {
  // Unit: the largest bit count dividing both element widths and both base
  // addresses, so each element covers whole units and overlap is a shared unit.
  auto gcd = [](int64_t x, int64_t y) {
    while (y) {
      int64_t t = x % y;
      x = y;
      y = t;
    }
    return x;
  };
  int64_t bitsA = std::max(dtypeBits(q.a.info.dtype), 1);
  int64_t bitsB = std::max(dtypeBits(q.b.info.dtype), 1);
  int64_t unit = gcd(gcd(bitsA, bitsB), gcd(q.a.info.baseByte * 8, q.b.info.baseByte * 8));
  if (unit == 0)
    unit = gcd(bitsA, bitsB);
  std::unordered_map<CoordKey, Owner, CoordHash> footprint;
  auto unitsOf = [&](const BufferInfo &info, int64_t bits, const PhysCoord &c,
                     const std::function<void(const CoordKey &)> &fn) {
    CoordKey k = keyOf(c);
    int64_t start = (info.baseByte * 8 + c.get(Axis::m) * bits) / unit;
    for (int64_t u = 0; u < bits / unit; ++u) {
      k.value[static_cast<size_t>(Axis::m)] = start + u;
      fn(k);
    }
  };
  forEachOwnerIndexed(*q.a.layout, [&](int64_t flat, int64_t r, const PhysCoord &c) {
    unitsOf(q.a.info, bitsA, c, [&](const CoordKey &k) {
      footprint.try_emplace(k, Owner{flat, r});
    });
  });
  bool found = false;
  forEachOwnerIndexed(*q.b.layout, [&](int64_t flat, int64_t r, const PhysCoord &c) {
    if (found)
      return;
    unitsOf(q.b.info, bitsB, c, [&](const CoordKey &k) {
      if (found)
        return;
      auto it = footprint.find(k);
      if (it == footprint.end())
        return;
      if (auto v = overlapViolation(q, it->second.flat, it->second.replica, flat, r)) {
        report.violations.push_back(std::move(*v));
        found = true;
      }
    });
  });
}

} // namespace tilescope::detail
