#include "simulator/ReduceOrder.h"

#include <algorithm>

namespace tilescope::sim {

std::optional<double> treeReduce(std::vector<HeldElement> held, int64_t threads, double identity,
                                 const std::function<double(double, double)> &combine,
                                 const std::function<std::optional<double>(int64_t)> &value) {
  std::sort(held.begin(), held.end(), [](const HeldElement &a, const HeldElement &b) {
    return a.thread != b.thread ? a.thread < b.thread : a.reg < b.reg;
  });
  std::vector<double> part(threads, identity);
  for (const HeldElement &h : held) {
    auto v = value(h.position);
    if (!v)
      return std::nullopt;
    part[h.thread] = combine(part[h.thread], *v);
  }
  // Butterfly: every lane ends with its warp's total (the same value in each
  // lane when combine is commutative, as add, max and min are).
  for (int64_t off = 16; off >= 1; off /= 2) {
    std::vector<double> next(part);
    for (int64_t t = 0; t < threads; ++t)
      next[t] = combine(part[t], part[t ^ off]);
    part.swap(next);
  }
  double total = part[0];
  for (int64_t w = 32; w < threads; w += 32)
    total = combine(total, part[w]);
  return total;
}

} // namespace tilescope::sim
