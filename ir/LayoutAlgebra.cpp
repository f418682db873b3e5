#include "ir/LayoutAlgebra.h"

#include <fmt/format.h>

#include <algorithm>

namespace tilescope {

namespace {

bool fail(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
  return false;
}

// An index map: shard iters on m only, nothing else.
bool isIndexMap(const Layout &l, const char *role, std::string *error) {
  if (!l.replica().empty() || !l.offset().empty() || l.swizzle())
    return fail(error, fmt::format("{} must be a plain index map S[...] on m (no replicas, "
                                   "offsets or swizzle), not {}",
                                   role, l.str()));
  for (const Iter &it : l.shard())
    if (it.axis != Axis::m)
      return fail(error, fmt::format("{} must place indices on m, but {} uses @{}", role, l.str(),
                                     axisName(it.axis)));
  return true;
}

// The iters of A that one B iter (extent f, stride t over A's flat index)
// walks, most significant first.
bool composeIter(const Layout &a, int64_t f, int64_t t, std::vector<Iter> *out,
                 std::string *error) {
  const std::vector<Iter> &iters = a.shard();
  if (f == 1)
    return true;
  if (t == 0) {
    out->push_back({f, 0, iters.front().axis});
    return true;
  }
  std::vector<Iter> pieces; // least significant first
  int64_t rest = f, step = t;
  for (size_t k = iters.size(); k-- > 0 && rest > 1;) {
    int64_t e = iters[k].extent;
    if (step >= e) {
      if (step % e != 0)
        return fail(error, fmt::format("stride {} of the index map does not divide into A's "
                                       "iter of extent {} (strides must divide what they cross)",
                                       t, e));
      step /= e;
      continue;
    }
    if (e % step != 0)
      return fail(error, fmt::format("A's iter of extent {} is not a multiple of the index map's "
                                     "remaining stride {}",
                                     e, step));
    int64_t take = std::min(rest, e / step);
    if (rest % take != 0)
      return fail(error, fmt::format("extent {} of the index map does not split over A's iter of "
                                     "extent {}",
                                     f, e));
    pieces.push_back({take, iters[k].stride * step, iters[k].axis});
    rest /= take;
    step = 1;
  }
  if (rest > 1)
    return fail(error, fmt::format("the index map's iter ({}, {}) reaches index {}, past A's {} "
                                   "elements",
                                   f, t, (f - 1) * t, a.size()));
  out->insert(out->end(), pieces.rbegin(), pieces.rend());
  return true;
}

} // namespace

std::optional<Layout> compose(const Layout &a, const Layout &b, std::string *error) {
  if (!isIndexMap(b, "the index map (B of A o B)", error))
    return std::nullopt;
  std::vector<Iter> shard;
  for (const Iter &it : b.shard())
    if (!composeIter(a, it.extent, it.stride, &shard, error))
      return std::nullopt;
  if (shard.empty())
    shard.push_back({1, 0, a.shard().front().axis});
  return Layout::make(shard, a.replica(), a.offset(), a.swizzle(), error);
}

std::optional<Layout> complement(const Layout &a, int64_t cosize, std::string *error) {
  if (!a.replica().empty() || !a.offset().empty() || a.swizzle()) {
    fail(error, fmt::format("complement needs a plain layout S[...] (no replicas, offsets or "
                            "swizzle), not {}",
                            a.str()));
    return std::nullopt;
  }
  Axis axis = a.shard().front().axis;
  std::vector<Iter> iters;
  for (const Iter &it : a.shard()) {
    if (it.axis != axis) {
      fail(error, fmt::format("complement is taken on one axis; {} uses @{} and @{}", a.str(),
                              axisName(axis), axisName(it.axis)));
      return std::nullopt;
    }
    if (it.extent == 1)
      continue;
    if (it.stride == 0) {
      fail(error, fmt::format("{} is not injective (an iter of extent {} has stride 0), so it "
                              "has no complement",
                              a.str(), it.extent));
      return std::nullopt;
    }
    iters.push_back(it);
  }
  std::sort(iters.begin(), iters.end(),
            [](const Iter &x, const Iter &y) { return x.stride < y.stride; });
  std::vector<Iter> holes; // least significant first
  int64_t covered = 1;
  for (const Iter &it : iters) {
    if (it.stride % covered != 0) {
      fail(error, fmt::format("stride {} is not a multiple of {} (what the smaller iters cover): "
                              "{} has no complement of this form",
                              it.stride, covered, a.str()));
      return std::nullopt;
    }
    if (it.stride > covered)
      holes.push_back({it.stride / covered, covered, axis});
    covered = it.extent * it.stride;
  }
  if (cosize < covered || cosize % covered != 0) {
    fail(error,
         fmt::format("{} covers [0, {}), which does not tile [0, {})", a.str(), covered, cosize));
    return std::nullopt;
  }
  if (cosize > covered)
    holes.push_back({cosize / covered, covered, axis});
  std::vector<Iter> shard(holes.rbegin(), holes.rend());
  if (shard.empty())
    shard.push_back({1, 0, axis});
  return Layout::make(shard, {}, {}, std::nullopt, error);
}

std::optional<Layout> logicalDivide(const Layout &a, const Layout &tiler, std::string *error) {
  if (!isIndexMap(tiler, "the tiler", error))
    return std::nullopt;
  if (a.size() % tiler.size() != 0) {
    fail(error,
         fmt::format("a tile of {} elements does not divide A's {}", tiler.size(), a.size()));
    return std::nullopt;
  }
  auto rest = complement(tiler, a.size(), error);
  if (!rest)
    return std::nullopt;
  std::vector<Iter> both = rest->shard();
  both.insert(both.end(), tiler.shard().begin(), tiler.shard().end());
  auto index = Layout::make(both, {}, {}, std::nullopt, error);
  if (!index)
    return std::nullopt;
  return compose(a, *index, error);
}

} // namespace tilescope
