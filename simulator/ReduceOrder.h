// The combination order of a full reduction of a register tile executed by a
// warp, warpgroup or CTA (docs/simulator.md, "Tile primitives"): each thread
// of the scope starts from the operation's identity and combines the elements
// it holds in increasing register order; the lanes of each warp then combine
// by xor butterfly (offsets 16, 8, 4, 2, 1); the warps' results combine in
// warp order, starting from warp 0. This is the order the `shuffle.smem`
// dispatch emits, so the reference and the dispatched kernel agree bit for bit.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace tilescope::sim {

// One element of the source as the thread that holds it sees it.
struct HeldElement {
  int64_t thread;   // index inside the scope, 0 .. threads - 1
  int64_t reg;      // register of the element in that thread
  int64_t position; // the element's index in the source region
};

// `combine(a, b)` rounds in the destination's arithmetic; `value(position)`
// reads one source element, converted. Returns nullopt when a read failed.
std::optional<double> treeReduce(std::vector<HeldElement> held, int64_t threads, double identity,
                                 const std::function<double(double, double)> &combine,
                                 const std::function<std::optional<double>(int64_t)> &value);

} // namespace tilescope::sim
