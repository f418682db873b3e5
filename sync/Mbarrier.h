// One mbarrier as docs/semantics.md ("mbarrier") defines it, independent of any kernel: init(count), arrivals,
// signed transaction count, phase completion and parity waits. The engine
// keeps one per barrier of a CTA; the tests pin its rules directly.
//
// A phase completes when the pending arrivals reach 0 and the transaction
// count is 0; then pending reloads to count and the phase number advances (its
// parity flips). `wait(parity)` is satisfied when the phase with that parity
// has completed, i.e. the current phase's parity differs from it: right after
// init (phase 0), waiting on parity 1 passes at once (the "preceding phase").
// Depends on nothing but the standard library.
#pragma once

#include <cstdint>
#include <string>

namespace tilescope::sim {

class Mbarrier {
public:
  // What went wrong, if anything; the engine turns it into a diagnostic.
  enum class Error : uint8_t {
    None,
    NotInitialised,  // used before init (or after inval)
    CountOutOfRange, // init count outside [1, 2^20 - 1]
    ReInit,          // init of a live barrier
    OverArrival,     // more arrivals than the count in one phase
  };

  Error init(int64_t count);
  Error inval();
  Error arrive(int64_t count = 1);
  Error expectTx(int64_t bytes);
  Error completeTx(int64_t bytes);
  // Whether a wait on `parity` (0 or 1) would return now.
  bool waitSatisfied(int64_t parity) const { return live_ && (phase_ & 1) != (parity & 1); }

  bool live() const { return live_; }
  int64_t count() const { return count_; }
  int64_t pending() const { return pending_; }
  int64_t tx() const { return tx_; }
  // Phases completed since init; the current phase's parity is phase() & 1.
  int64_t phase() const { return phase_; }
  // `phase 3 (parity 1), pending 1 of 2, tx -16384`
  std::string str() const;

  static std::string_view errorText(Error e);

private:
  void completeIfDone();

  bool live_ = false;
  int64_t count_ = 0;
  int64_t pending_ = 0;
  int64_t tx_ = 0;
  int64_t phase_ = 0;
};

} // namespace tilescope::sim
