// The cheap half of the bounds proof (GlobalBounds.h): an access proved
// inside its buffer by the ranges of its index expressions alone, before any
// Z3 query.
//
// Each expression gets an interval [lo, hi] (either end may be unbounded)
// that holds for every executor of the access: constants; a size symbol
// from its least value (the proofs' own assumption, ir/DeviceScale.h
// leastValueOf) up; a thread builtin over the threads that execute the
// access (its least and largest value among them); blockIdx from 0 up;
// clusterCtaIdx inside the modelled cluster; a loop variable of an
// enclosing loop from its start's least value to its end's largest value
// minus one; +, -, * and negation by interval arithmetic (in 128 bits, an
// overflow unbounded); `/` and `%` by a constant with the IR's truncating
// semantics (proof/TruncatingDivision.h: the quotient rounds toward zero,
// the remainder takes the dividend's sign and is smaller than the divisor
// in magnitude), `%` by a positive unknown on a non-negative dividend.
// Anything else (a load, a call, a division by an unknown) has no interval,
// and the access goes to Z3. Guards are left out: more executors than run,
// so a proof here holds for the real ones.
//
// Depends on ir/ and sync/ only; no Z3 here.
#pragma once

#include "sync/BarrierSkeleton.h"

namespace tilescope {

// Whether every executor of `a` (an access of event `e`) provably keeps the
// bounds rule: each dimension's region is not empty and starts at or after
// 0; it ends at or before the buffer's extent (`clipped`: it starts before
// that extent, a TMA box the hardware clips).
bool boundsByIntervals(const BarrierSkeleton &skeleton, const SyncEvent &e, const MemoryAccess &a,
                       bool clipped);

} // namespace tilescope
