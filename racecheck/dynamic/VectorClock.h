// Vector clocks and epochs for the dynamic race detector (RaceDetector.h).
//
// A vector clock holds one logical time per agent (a thread or an asynchronous
// operation); entries past its end are zero, so clocks grow only when they
// learn about a new agent. An epoch is one access's (agent, time): the
// FastTrack observation that most accesses need only the last writer's epoch
// and one reader's, not a whole clock, keeps the per-byte shadow small and
// each check O(1).
//
// Depends on nothing but the standard library.
#pragma once

#include <cstdint>
#include <vector>

namespace tilescope::sim {

using VectorClock = std::vector<uint32_t>;

inline uint32_t clockAt(const VectorClock &c, uint32_t agent) {
  return agent < c.size() ? c[agent] : 0;
}

// into = into ⊔ from (element-wise maximum).
void joinInto(VectorClock &into, const VectorClock &from);

// Sets entry `agent` (growing the clock when needed).
void setClock(VectorClock &c, uint32_t agent, uint32_t time);

// One access: by `agent` of group `group` at the agent's time `time`. A group
// is what runs together and may synchronise: one CTA, or the CTAs of one
// cluster (groups of a run are numbered in the order they run). `agent`
// kNoAgent: none.
struct Epoch {
  static constexpr uint32_t kNoAgent = UINT32_MAX;
  uint32_t agent = kNoAgent;
  uint32_t time = 0;
  uint32_t group = 0;
  const char *loc = nullptr; // source position of the access (an SMLoc's pointer)

  bool valid() const { return agent != kNoAgent; }
};

// Whether `e` happens before the access of `agent` (of group `group`) whose
// clock is `c`: always for the same agent (program order), never across groups
// (they share no synchronisation), otherwise when the clock has seen e's time.
inline bool orderedBefore(const Epoch &e, uint32_t agent, uint32_t group, const VectorClock &c) {
  if (e.group != group)
    return false;
  return e.agent == agent || e.time <= clockAt(c, e.agent);
}

} // namespace tilescope::sim
