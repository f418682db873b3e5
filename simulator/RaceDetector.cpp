#include "simulator/RaceDetector.h"

#include <algorithm>

namespace tilescope::sim {

void joinInto(VectorClock &into, const VectorClock &from) {
  if (into.size() < from.size())
    into.resize(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i)
    into[i] = std::max(into[i], from[i]);
}

RaceDetector::RaceDetector(int64_t sharedBytes, int agents)
    : agents_(agents), writeAgent_(sharedBytes, -1), writeClock_(sharedBytes, 0),
      writeLoc_(sharedBytes, nullptr), readClock_(sharedBytes * agents, 0),
      readLoc_(sharedBytes * agents, nullptr) {}

void RaceDetector::access(int64_t offset, int bytes, bool write, int agent,
                          const VectorClock &clock, llvm::SMLoc loc) {
  for (int64_t b = offset; b < offset + bytes; ++b) {
    if (b < 0 || b >= static_cast<int64_t>(writeAgent_.size()))
      continue;
    auto report = [&](int otherAgent, bool otherWrite, const char *otherLoc) {
      if (races_.size() >= kMaxRaces)
        return;
      // One report per statement pair is enough.
      for (const Race &r : races_)
        if (r.first.loc.getPointer() == otherLoc && r.second.loc == loc &&
            r.first.agent == otherAgent && r.second.agent == agent)
          return;
      races_.push_back({b,
                        {otherAgent, otherWrite, llvm::SMLoc::getFromPointer(otherLoc)},
                        {agent, write, loc}});
    };
    int w = writeAgent_[b];
    if (w >= 0 && w != agent && writeClock_[b] > clock[w])
      report(w, true, writeLoc_[b]);
    if (write) {
      for (int r = 0; r < agents_; ++r)
        if (r != agent && readClock_[b * agents_ + r] > clock[r])
          report(r, false, readLoc_[b * agents_ + r]);
      writeAgent_[b] = static_cast<int16_t>(agent);
      writeClock_[b] = clock[agent];
      writeLoc_[b] = loc.getPointer();
      std::fill(readClock_.begin() + b * agents_, readClock_.begin() + (b + 1) * agents_, 0);
    } else {
      readClock_[b * agents_ + agent] = clock[agent];
      readLoc_[b * agents_ + agent] = loc.getPointer();
    }
  }
}

} // namespace tilescope::sim
