// Dynamic race detection over a CTA's simulated shared memory: happens-before
// with vector clocks (DESIGN.md: racecheck, dynamic half).
//
// Agents are the CTA's warps (lanes of a warp run in lock-step, so a warp is
// one agent) plus one asynchronous agent per warp for the units it issues
// (TMA copies, tcgen05 commits). Program order advances a warp's clock at
// every synchronisation; a rendezvous (cta.sync, named barriers, collective
// tile primitives) joins the clocks of every warp that takes part; an mbarrier
// phase collects the clocks of its arrivals and transaction completions and
// hands them to every wait that observes the phase. Each shared byte remembers
// its last write and the reads since; an access that is not ordered after a
// conflicting one is a race, reported with both locations.
//
// Depends on nothing but LLVM's SMLoc and the standard library.
#pragma once

#include <llvm/Support/SMLoc.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tilescope::sim {

using VectorClock = std::vector<uint32_t>;

void joinInto(VectorClock &into, const VectorClock &from);

struct RaceAccess {
  int agent;
  bool write;
  llvm::SMLoc loc;
};

struct Race {
  int64_t byte;
  RaceAccess first, second;
};

class RaceDetector {
public:
  RaceDetector(int64_t sharedBytes, int agents);

  // An access of `bytes` bytes at `offset` by `agent` whose clock is `clock`.
  void access(int64_t offset, int bytes, bool write, int agent, const VectorClock &clock,
              llvm::SMLoc loc);

  const std::vector<Race> &races() const { return races_; }
  static constexpr size_t kMaxRaces = 16;

private:
  int agents_;
  std::vector<int16_t> writeAgent_;
  std::vector<uint32_t> writeClock_;
  std::vector<const char *> writeLoc_;
  std::vector<uint32_t> readClock_;   // byte * agents + agent
  std::vector<const char *> readLoc_; // byte * agents + agent
  std::vector<Race> races_;
  std::vector<int64_t> reportedBytes_;
};

} // namespace tilescope::sim
