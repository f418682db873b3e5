#include "ir/Layout.h"

#include <limits>

#include <algorithm>
#include <fmt/format.h>

namespace tilescope {

int64_t Swizzle::apply(int64_t m) const {
  int64_t keptMask = (int64_t{1} << bitsKept) - 1;
  int64_t x = m >> bitsKept;
  int64_t xorMask = ((int64_t{1} << bitsXored) - 1) << shift;
  int64_t fx = x ^ ((x & xorMask) >> shift);
  return (fx << bitsKept) | (m & keptMask);
}

std::optional<Swizzle> Swizzle::fromMode(int bytes, Dtype dtype, std::string *why) {
  int b = bytes == 32 ? 1 : bytes == 64 ? 2 : bytes == 128 ? 3 : 0;
  if (b == 0) {
    if (why)
      *why = fmt::format("swizzle mode must be 32B, 64B or 128B, not {}B", bytes);
    return std::nullopt;
  }
  int bits = dtypeBits(dtype);
  if (128 % bits != 0) {
    if (why)
      *why = fmt::format("swizzle modes need an element width dividing 128 bits; {} is {} bits",
                         dtypeName(dtype), bits);
    return std::nullopt;
  }
  int perChunk = 128 / bits, kept = 0;
  while ((1 << kept) < perChunk)
    ++kept;
  return Swizzle{kept, b, 3, bytes, dtype};
}

bool PhysCoord::operator==(const PhysCoord &o) const {
  if (axes != o.axes)
    return false;
  for (size_t i = 0; i < kNumAxes; ++i)
    if ((axes >> i & 1) && value[i] != o.value[i])
      return false;
  return true;
}

std::string PhysCoord::str() const {
  std::string out = "{";
  bool first = true;
  for (size_t i = 0; i < kNumAxes; ++i) {
    if (!(axes >> i & 1))
      continue;
    out += fmt::format("{}{}: {}", first ? "" : ", ", axisName(static_cast<Axis>(i)), value[i]);
    first = false;
  }
  return out + "}";
}

std::optional<Layout> Layout::make(std::vector<Iter> shard, std::vector<Iter> replica,
                                   std::vector<AxisOffset> offset, std::optional<Swizzle> swizzle,
                                   std::string *error) {
  auto fail = [&](std::string msg) -> std::optional<Layout> {
    if (error)
      *error = std::move(msg);
    return std::nullopt;
  };
  if (shard.empty())
    return fail("a layout needs at least one shard iter");
  Layout l;
  constexpr int64_t kMaxElements = int64_t{1} << 40;
  for (const char *part : {"shard", "replica"}) {
    const auto &iters = part[0] == 's' ? shard : replica;
    int64_t &product = part[0] == 's' ? l.size_ : l.replicas_;
    for (const Iter &it : iters) {
      if (it.extent < 1)
        return fail(fmt::format("{} extent must be at least 1, not {}", part, it.extent));
      if (it.stride < 0)
        return fail(fmt::format("{} stride must not be negative, not {}", part, it.stride));
      if (it.extent > kMaxElements / product)
        return fail(fmt::format("{} extents multiply past 2^40", part));
      // Offsets are computed in int64: an iter may reach at most 2^56, so that
      // sums over every iter of an axis stay far from overflow.
      if (it.stride > (int64_t{1} << 56) / it.extent)
        return fail(fmt::format("{} stride {} with extent {} reaches past 2^56", part, it.stride,
                                it.extent));
      product *= it.extent;
      l.axesUsed_ |= 1u << static_cast<unsigned>(it.axis);
    }
  }
  // Offsets: merged per axis, kept in axis order, zeros dropped: one text per layout.
  std::array<int64_t, kNumAxes> merged{};
  for (const AxisOffset &o : offset) {
    if (o.value < 0)
      return fail(
          fmt::format("offset on {} must not be negative, not {}", axisName(o.axis), o.value));
    merged[static_cast<size_t>(o.axis)] += o.value;
  }
  for (size_t i = 0; i < kNumAxes; ++i)
    if (merged[i] != 0) {
      l.offset_.push_back({static_cast<Axis>(i), merged[i]});
      l.axesUsed_ |= 1u << i;
    }
  if (swizzle) {
    if (swizzle->bitsKept < 0 || swizzle->bitsXored < 0 || swizzle->shift < 0 ||
        swizzle->bitsKept + swizzle->bitsXored + swizzle->shift > 40)
      return fail("swizzle parameters must be non-negative and small");
    if (swizzle->shift < swizzle->bitsXored)
      return fail(fmt::format("swizzle needs S >= B, got B = {}, S = {}", swizzle->bitsXored,
                              swizzle->shift));
    l.axesUsed_ |= 1u << static_cast<unsigned>(Axis::m);
  }
  l.shard_ = std::move(shard);
  l.replica_ = std::move(replica);
  l.swizzle_ = swizzle;
  l.radix_.assign(l.shard_.size(), 1);
  for (size_t k = l.shard_.size() - 1; k > 0; --k)
    l.radix_[k - 1] = l.radix_[k] * l.shard_[k].extent;
  uint32_t index = 0;
  for (const auto *iters : {&l.shard_, &l.replica_})
    for (const Iter &it : *iters)
      l.byAxis_[static_cast<size_t>(it.axis)].push_back({index++, it.extent, it.stride});
  for (auto &group : l.byAxis_) {
    std::stable_sort(group.begin(), group.end(),
                     [](const AxisIter &x, const AxisIter &y) { return x.stride > y.stride; });
    int64_t reach = 0; // what the iters after position i can add
    for (size_t i = group.size(); i-- > 0;) {
      if (group[i].stride == 0 || (group[i].extent > 1 && group[i].stride <= reach))
        l.nested_ = false;
      // Saturating: extents and strides come from user text (a reach beyond
      // int64 only makes the layout not nested, the general path).
      int64_t add = 0;
      if (__builtin_mul_overflow(group[i].extent - 1, group[i].stride, &add) ||
          __builtin_add_overflow(reach, add, &reach))
        reach = std::numeric_limits<int64_t>::max();
    }
  }
  return l;
}

Layout Layout::rowMajor(const std::vector<int64_t> &shape) {
  std::vector<Iter> iters;
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    iters.insert(iters.begin(), Iter{shape[i], stride, Axis::m});
    stride *= shape[i];
  }
  if (iters.empty())
    iters.push_back({1, 1, Axis::m});
  return *make(std::move(iters), {}, {}, std::nullopt, nullptr);
}

bool Layout::admits(const std::vector<int64_t> &shape) const {
  int64_t count = 1;
  for (int64_t e : shape) {
    if (e < 0 || (e != 0 && count > (int64_t{1} << 62) / e))
      return false;
    count *= e;
  }
  return count == size_;
}

PhysCoord Layout::base(int64_t flat) const {
  PhysCoord c;
  for (size_t k = 0; k < shard_.size(); ++k) {
    int64_t digit = (flat / radix_[k]) % shard_[k].extent;
    c.add(shard_[k].axis, digit * shard_[k].stride);
  }
  for (const AxisOffset &o : offset_)
    c.add(o.axis, o.value);
  if (swizzle_)
    c.set(Axis::m, swizzle_->apply(c.get(Axis::m)));
  return c;
}

void Layout::forEachOwner(int64_t flat, const std::function<void(const PhysCoord &)> &fn) const {
  if (replica_.empty()) {
    fn(base(flat));
    return;
  }
  // Unswizzled base; replicas add before the swizzle is composed on top.
  PhysCoord start;
  for (size_t k = 0; k < shard_.size(); ++k)
    start.add(shard_[k].axis, ((flat / radix_[k]) % shard_[k].extent) * shard_[k].stride);
  for (const AxisOffset &o : offset_)
    start.add(o.axis, o.value);
  for (const Iter &r : replica_)
    start.add(r.axis, 0);
  std::vector<int64_t> digits(replica_.size(), 0);
  while (true) {
    PhysCoord c = start;
    for (size_t t = 0; t < replica_.size(); ++t)
      c.add(replica_[t].axis, digits[t] * replica_[t].stride);
    if (swizzle_)
      c.set(Axis::m, swizzle_->apply(c.get(Axis::m)));
    fn(c);
    size_t t = replica_.size();
    while (t > 0 && ++digits[t - 1] == replica_[t - 1].extent)
      digits[--t] = 0;
    if (t == 0)
      return;
  }
}

std::vector<PhysCoord> Layout::owners(int64_t flat) const {
  std::vector<PhysCoord> out;
  out.reserve(static_cast<size_t>(replicas_));
  forEachOwner(flat, [&](const PhysCoord &c) { out.push_back(c); });
  return out;
}

namespace {
// All digit vectors for the iters of one axis whose weighted sum equals
// `target`. Iters are visited by decreasing stride; `reach[i]` bounds what the
// iters from i on can still add, which prunes every impossible branch, so a
// layout with nested strides is solved without backtracking.
struct AxisSolver {
  std::vector<const Iter *> iters;
  std::vector<int64_t> reach;
  std::vector<int64_t> digits;
  std::vector<std::vector<int64_t>> solutions;
  size_t limit;

  void solve(size_t i, int64_t remaining) {
    if (solutions.size() >= limit)
      return;
    if (i == iters.size()) {
      if (remaining == 0)
        solutions.push_back(digits);
      return;
    }
    const Iter &it = *iters[i];
    int64_t rest = i + 1 < reach.size() ? reach[i + 1] : 0;
    if (it.stride == 0) {
      for (int64_t d = 0; d < it.extent && solutions.size() < limit; ++d) {
        digits[i] = d;
        solve(i + 1, remaining);
      }
      return;
    }
    int64_t hi = std::min(it.extent - 1, remaining / it.stride);
    for (int64_t d = hi; d >= 0; --d) {
      int64_t left = remaining - d * it.stride;
      if (left > rest)
        break;
      digits[i] = d;
      solve(i + 1, left);
      if (solutions.size() >= limit)
        return;
    }
  }
};
} // namespace

std::vector<int64_t> Layout::preimages(const PhysCoord &coord, size_t limit) const {
  std::vector<int64_t> result;
  if (limit == 0)
    return result;
  for (size_t a = 0; a < kNumAxes; ++a)
    if (!(axesUsed_ >> a & 1) && coord.has(static_cast<Axis>(a)) && coord.value[a] != 0)
      return result;
  std::array<int64_t, kNumAxes> target{};
  for (size_t a = 0; a < kNumAxes; ++a)
    target[a] = coord.has(static_cast<Axis>(a)) ? coord.value[a] : 0;
  if (swizzle_)
    target[static_cast<size_t>(Axis::m)] = swizzle_->apply(target[static_cast<size_t>(Axis::m)]);
  for (const AxisOffset &o : offset_)
    target[static_cast<size_t>(o.axis)] -= o.value;
  if (!nested_)
    return preimagesBySearch(target, limit);

  // Nested strides: on each axis the largest stride's digit is fixed by the
  // value alone, then the next, and so on; a remainder means no preimage.
  int64_t flat = 0;
  size_t nShard = shard_.size();
  for (size_t a = 0; a < kNumAxes; ++a) {
    int64_t rest = target[a];
    if (rest < 0)
      return result;
    for (const AxisIter &it : byAxis_[a]) {
      int64_t digit = std::min(it.extent - 1, rest / it.stride);
      rest -= digit * it.stride;
      if (it.index < nShard)
        flat += digit * radix_[it.index];
    }
    if (rest != 0)
      return result;
  }
  result.push_back(flat);
  return result;
}

std::vector<int64_t> Layout::preimagesBySearch(const std::array<int64_t, kNumAxes> &target,
                                               size_t limit) const {
  std::vector<int64_t> result;
  size_t nShard = shard_.size();
  // Per axis: its solutions, combined across axes as (iter index, digit) lists.
  std::vector<std::vector<std::pair<size_t, int64_t>>> partial{{}};
  for (size_t a = 0; a < kNumAxes; ++a) {
    if (!(axesUsed_ >> a & 1))
      continue;
    if (target[a] < 0)
      return result;
    const std::vector<AxisIter> &group = byAxis_[a];
    std::vector<Iter> sorted;
    for (const AxisIter &it : group)
      sorted.push_back({it.extent, it.stride, static_cast<Axis>(a)});
    AxisSolver solver;
    for (const Iter &it : sorted)
      solver.iters.push_back(&it);
    solver.reach.assign(group.size(), 0);
    for (size_t i = group.size(); i-- > 0;)
      solver.reach[i] = (group[i].extent - 1) * group[i].stride +
                        (i + 1 < group.size() ? solver.reach[i + 1] : 0);
    solver.digits.assign(group.size(), 0);
    // Enough solutions per axis to reach `limit` distinct shard indices.
    solver.limit =
        std::max<size_t>(limit * static_cast<size_t>(std::min<int64_t>(replicas_, 64)), limit);
    solver.solve(0, target[a]);
    if (solver.solutions.empty())
      return result;
    std::vector<std::vector<std::pair<size_t, int64_t>>> next;
    for (const auto &p : partial)
      for (const auto &sol : solver.solutions) {
        auto q = p;
        for (size_t j = 0; j < group.size(); ++j)
          q.push_back({group[j].index, sol[j]});
        next.push_back(std::move(q));
        if (next.size() > 4096)
          break;
      }
    partial = std::move(next);
  }
  for (const auto &assignment : partial) {
    int64_t flat = 0;
    for (const auto &[i, d] : assignment)
      if (i < nShard)
        flat += d * radix_[i];
    if (std::find(result.begin(), result.end(), flat) == result.end())
      result.push_back(flat);
    if (result.size() >= limit)
      break;
  }
  std::sort(result.begin(), result.end());
  return result;
}

namespace {
std::string iterList(const char *tag, const std::vector<Iter> &iters) {
  std::string extents, strides;
  for (size_t i = 0; i < iters.size(); ++i) {
    const char *sep = i ? "," : "";
    extents += fmt::format("{}{}", sep, iters[i].extent);
    strides += iters[i].axis == Axis::m
                   ? fmt::format("{}{}", sep, iters[i].stride)
                   : fmt::format("{}{}@{}", sep, iters[i].stride, axisName(iters[i].axis));
  }
  if (iters.size() == 1)
    return fmt::format("{}[{}:{}]", tag, extents, strides);
  return fmt::format("{}[({}):({})]", tag, extents, strides);
}
} // namespace

std::string Layout::str() const {
  std::string body = iterList("S", shard_);
  if (!replica_.empty())
    body += " + " + iterList("R", replica_);
  for (const AxisOffset &o : offset_)
    body += fmt::format(" + {}@{}", o.value, axisName(o.axis));
  if (!swizzle_)
    return body;
  const Swizzle &s = *swizzle_;
  if (s.shorthandBytes)
    return fmt::format("swizzle({}B, {}, {})", s.shorthandBytes, dtypeName(s.shorthandDtype), body);
  return fmt::format("swizzle({}, {}, {}, {})", s.bitsKept, s.bitsXored, s.shift, body);
}

bool Layout::operator==(const Layout &o) const {
  return shard_ == o.shard_ && replica_ == o.replica_ && offset_ == o.offset_ &&
         swizzle_ == o.swizzle_;
}

std::optional<int64_t> flattenIndex(const std::vector<int64_t> &shape,
                                    const std::vector<int64_t> &index) {
  if (shape.size() != index.size())
    return std::nullopt;
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (index[i] < 0 || index[i] >= shape[i])
      return std::nullopt;
    flat = flat * shape[i] + index[i];
  }
  return flat;
}

std::vector<int64_t> unflattenIndex(const std::vector<int64_t> &shape, int64_t flat) {
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 0)
      continue;
    index[i] = flat % shape[i];
    flat /= shape[i];
  }
  return index;
}

BankSlot bankOf(int64_t memoryElement, Dtype dtype) {
  int64_t byte = memoryElement * dtypeBits(dtype) / 8;
  return {(byte / 4) % 32, byte / 128};
}

} // namespace tilescope
