#include "racecheck/dynamic/VectorClock.h"

#include <algorithm>

namespace tilescope::sim {

void joinInto(VectorClock &into, const VectorClock &from) {
  if (into.size() < from.size())
    into.resize(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i)
    into[i] = std::max(into[i], from[i]);
}

void setClock(VectorClock &c, uint32_t agent, uint32_t time) {
  if (c.size() <= agent)
    c.resize(agent + 1, 0);
  c[agent] = time;
}

} // namespace tilescope::sim
