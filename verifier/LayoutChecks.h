// Internal to verifier/: what the two proof engines (Z3 in LayoutProofs.cpp,
// enumeration in LayoutEnumeration.cpp) share — the question asked of one
// buffer, and how a counterexample becomes a violation with its message. Both
// engines build violations only through these functions, so their answers
// read the same and every witness is re-evaluated by the layout engine.
#pragma once

#include "verifier/LayoutVerifier.h"

#include <array>

namespace tilescope::detail {

// One buffer's proof obligations.
struct LayoutQuestion {
  const Layout &layout;
  const std::vector<int64_t> &shape;
  const BufferInfo &buffer;
  std::array<int64_t, kNumAxes> bound{}; // 0: unbounded or not used
  bool checkAlias = true;                // false when the buffer may alias
};

// The owner of element `flat` under replica number `replica` (replica digits
// mixed-radix, first replica iter most significant, as Layout::forEachOwner
// enumerates them).
PhysCoord ownerAt(const Layout &layout, int64_t flat, int64_t replica);

// Violations from a counterexample. Each returns nothing when the layout
// engine does not confirm the counterexample (an engine bug, never a finding).
std::optional<LayoutViolation> boundsViolation(const LayoutQuestion &q, Axis axis, int64_t flat,
                                               int64_t replica);
std::optional<LayoutViolation> aliasViolation(const LayoutQuestion &q, int64_t flatA,
                                              int64_t flatB);
std::optional<LayoutViolation> replicaViolation(const LayoutQuestion &q, int64_t flatA,
                                                int64_t replicaA, int64_t flatB, int64_t replicaB);

// Two buffers of one space: the overlap obligation, in units of `unitBits`.
struct OverlapQuestion {
  const BufferView &a;
  const BufferView &b;
};
std::optional<LayoutViolation> overlapViolation(const OverlapQuestion &q, int64_t flatA,
                                                int64_t replicaA, int64_t flatB, int64_t replicaB);
// Whether one owner of each buffer occupy a common bit of their space.
bool ownersOverlap(const OverlapQuestion &q, const PhysCoord &a, const PhysCoord &b);

// The engines. Each appends at most one violation per kind (per axis for
// bounds) and records what it could not decide.
void enumerateLayout(const LayoutQuestion &q, LayoutReport &report);
void proveLayout(const LayoutQuestion &q, unsigned timeoutMs, LayoutReport &report);
void enumerateOverlap(const OverlapQuestion &q, LayoutReport &report);
void proveOverlap(const OverlapQuestion &q, unsigned timeoutMs, LayoutReport &report);

} // namespace tilescope::detail
