// The sizes at which the exhaustive fallback (BarrierExplorer.h) checks a
// kernel whose barrier protocol is not proved for all sizes.
//
// Given sizes (`tilescope check --args`, or the sizes a `// problem:`
// annotation names) must satisfy the `where` clause. Otherwise Z3 picks the
// smallest admitted sizes (least sum of the symbols) under which every loop
// that touches a ring of S barriers or S pipeline stages runs at least 2·S
// (flattened) iterations: two full rounds of every ring, so that each
// element's phase parity flips and flips back and every stage is refilled. A
// ring of one (or a loop touching none) counts as S = 1: two iterations.
// The sizes are then checked concretely in the first and the last CTA of
// the grid, where every level of a nest must also run twice and a loop whose
// trip count reads blockIdx (a persistent tile loop) must leave a tail (the
// last CTA one iteration fewer than the first: more tiles than CTAs, and a
// CTA with fewer); where they fall short (a trip count that is a product of
// symbols, or reads blockIdx), symbols are doubled one at a time, the one
// that helps most first, then each is lowered by bisection as far as the
// shortfall allows. Where no admitted size gives a loop two rounds (a
// constant trip count), that loop keeps what it has. Given sizes that leave
// a symbol of the where clause out are completed that way, with the given
// ones fixed.
//
// Depends on verifier/ and Z3 (inside the .cpp).
#pragma once

#include "sync/BarrierSkeleton.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilescope {

using SizeAssignment = std::map<std::string, int64_t>;

// The skeleton's symbols among `given`, when they satisfy the where clause;
// nothing, with `why`, when a constraint fails or lacks a value (then
// `*unbound` is set, when given).
std::optional<SizeAssignment> admittedSizes(const BarrierSkeleton &skeleton,
                                            const SizeAssignment &given, std::string &why,
                                            bool *unbound = nullptr);

// The smallest admitted sizes that run every ring twice round (see above),
// with the sizes in `fixed` kept as they are.
std::optional<SizeAssignment> smallestTwoRoundSizes(const BarrierSkeleton &skeleton,
                                                    std::string &why,
                                                    const SizeAssignment &fixed = {});

// The sizes the fallback runs at: `given` when it binds the where clause,
// completed by smallestTwoRoundSizes when it leaves symbols out, the
// smallest two-round sizes when it is empty.
std::optional<SizeAssignment> fallbackSizes(const BarrierSkeleton &skeleton,
                                            const SizeAssignment &given, std::string &why);

// Further sizes for the fallback after `base` (the smallest two-round
// sizes): for each symbol, the least admitted value above its value in
// `base` that changes the trip count of a loop nest touching a ring, in the
// first or the last CTA (everything else as in `base`). One size point fixes
// the residue of each trip count modulo the ring depth, and a protocol can be
// right at one residue only (a flattened counter strided by kt + 1 agrees
// with the phases when kt % 3 == 2): the neighbours give every such loop a
// second residue. Empty when no symbol changes a trip count. Stops early,
// with the neighbours found so far, once the active budget has run out.
std::vector<SizeAssignment> neighbourSizes(const BarrierSkeleton &skeleton,
                                           const SizeAssignment &base);

// "K = 512, M = 128, N = 128"
std::string describeSizes(const SizeAssignment &sizes);

// The largest ring (barrier array or pipeline stages) event e touches: 1
// when it touches none.
int64_t ringOf(const BarrierSkeleton &skeleton, const SyncEvent &e);

// The launch grid's extent (x, y, z) at `sizes`; nothing when a dimension
// does not evaluate to a positive value.
std::optional<std::array<int64_t, 3>> gridExtent(const BarrierSkeleton &skeleton,
                                                 const SizeAssignment &sizes);

} // namespace tilescope
