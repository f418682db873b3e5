// Internal to verifier/: layout obligations decided from the layout's
// numbers alone, before Z3 is asked. Each function answers only "proved"
// (true) or "not decided here" (false); a false sends the obligation to the
// engine as before, which finds the witness when there is one. So no answer
// of the verifier changes, only how fast a legal layout is proved.
//
// Why the arguments hold (strides and offsets are >= 0, Layout::make):
//  - An axis coordinate is offset + sum of digit x stride over the iters on
//    that axis, every digit ranging over [0, extent) independently of the
//    others, so its largest value is offset + sum (extent - 1) x stride and
//    its least the offset.
//  - A swizzle rewrites only bits [M, M + B) of m (f(x) = x ^ ((x & mask) >> S)
//    changes bits [0, B) of x = m >> M), so the swizzled m lies in the same
//    block of 2^(M+B) as m; and since S >= B it is an involution, hence
//    one-to-one on m.
//  - The owner map is a product of one map per axis (each axis reads only its
//    own digits), so it is one-to-one when each axis's map is. An axis's map
//    is one-to-one when its strides, in increasing order, each exceed the
//    largest value the smaller ones reach together (a mixed radix, as every
//    row-major, swizzled-tile and MMA fragment layout of the library is).
// Depends on ir/Layout.h only.
#pragma once

#include "ir/Layout.h"

#include <cstdint>

namespace tilescope::detail {

// Every owner of every element (replicas included) lies below `bound` on
// axis `a`.
bool provedBelow(const Layout &layout, Axis a, int64_t bound);

// Distinct digit vectors reach distinct owners: over the shard digits (the
// alias obligation, replica digits at 0), or over shard and replica digits
// together (which also proves the replica obligation).
bool provedOneToOne(const Layout &layout, bool withReplicas);

// The least and the largest value of axis `a` over every owner of `layout`
// (replicas included), the swizzle's block widening them on m. False when a
// value would pass 2^62.
bool axisRange(const Layout &layout, Axis a, int64_t &least, int64_t &largest);

} // namespace tilescope::detail
