#include "verifier/LayoutStructural.h"

#include <algorithm>
#include <vector>

namespace tilescope::detail {
namespace {

constexpr int64_t kLimit = int64_t{1} << 62;

// a + b and a * b for values in [0, kLimit); false past it.
bool add(int64_t a, int64_t b, int64_t &out) {
  return !__builtin_add_overflow(a, b, &out) && out < kLimit;
}
bool mul(int64_t a, int64_t b, int64_t &out) {
  return !__builtin_mul_overflow(a, b, &out) && out < kLimit;
}

bool validSwizzle(const Swizzle &s) {
  return s.bitsKept >= 0 && s.bitsXored >= 0 && s.shift >= s.bitsXored &&
         s.bitsKept + s.bitsXored < 62;
}

} // namespace

bool axisRange(const Layout &layout, Axis a, int64_t &least, int64_t &largest) {
  least = 0;
  largest = 0;
  for (const AxisOffset &o : layout.offset())
    if (o.axis == a) {
      if (o.value < 0 || !add(least, o.value, least))
        return false;
    }
  largest = least;
  for (const auto *iters : {&layout.shard(), &layout.replica()})
    for (const Iter &it : *iters) {
      if (it.axis != a)
        continue;
      int64_t reach;
      if (it.extent < 1 || it.stride < 0 || !mul(it.extent - 1, it.stride, reach) ||
          !add(largest, reach, largest))
        return false;
    }
  if (a == Axis::m && layout.swizzle()) {
    const Swizzle &s = *layout.swizzle();
    if (!validSwizzle(s))
      return false;
    int64_t block = (int64_t{1} << (s.bitsKept + s.bitsXored)) - 1;
    least &= ~block;
    largest |= block;
  }
  return true;
}

bool provedBelow(const Layout &layout, Axis a, int64_t bound) {
  int64_t least, largest;
  return axisRange(layout, a, least, largest) && largest < bound;
}

bool provedOneToOne(const Layout &layout, bool withReplicas) {
  if (layout.swizzle() && !validSwizzle(*layout.swizzle()))
    return false;
  for (size_t axis = 0; axis < kNumAxes; ++axis) {
    std::vector<Iter> on;
    for (const auto *iters : {&layout.shard(), &layout.replica()}) {
      if (iters == &layout.replica() && !withReplicas)
        break;
      for (const Iter &it : *iters)
        if (static_cast<size_t>(it.axis) == axis && it.extent > 1)
          on.push_back(it);
    }
    std::sort(on.begin(), on.end(),
              [](const Iter &x, const Iter &y) { return x.stride < y.stride; });
    // The largest value the smaller strides reach together.
    int64_t reach = 0;
    for (const Iter &it : on) {
      int64_t more;
      if (it.stride <= reach || !mul(it.extent - 1, it.stride, more) || !add(reach, more, reach))
        return false;
    }
  }
  return true;
}

} // namespace tilescope::detail
