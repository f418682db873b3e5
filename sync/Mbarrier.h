// The one concrete mbarrier state machine (docs/semantics.md, "mbarrier"),
// independent of any kernel: init(count), arrivals, the signed transaction
// count, phase completion and parity waits. The simulator keeps an `Mbarrier`
// per barrier of a CTA; the exhaustive explorer (verifier/BarrierExplorer)
// keeps an `MbarrierPhase` per barrier element in each state it visits; the
// symbolic counterpart the barrier proofs use is sync/MbarrierZ3.h. The tests
// pin the rules on the machine itself (tests/unit/sync).
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
#include <string_view>

namespace tilescope {

// The phases of a live barrier of arrival count `count` (the count is the
// barrier's, kept by the caller: the explorer's states hold only what moves).
struct MbarrierPhase {
  int64_t phase = 0;   // phases completed since init; the current phase's parity is phase & 1
  int64_t pending = 0; // arrivals the current phase still expects
  int64_t tx = 0;      // transaction bytes expected and not delivered yet (signed)

  static MbarrierPhase initial(int64_t count) { return {0, count, 0}; }

  // `n` arrivals (n >= 1), after raising the transaction count by
  // `expectBytes` (mbarrier.arrive.expect_tx performs its expect-tx first);
  // false, and no arrival counted, when the phase expects fewer than n.
  [[nodiscard]] bool arrive(int64_t n, int64_t count, int64_t expectBytes = 0);
  // expect_tx (bytes > 0) or a delivery / complete_tx (bytes < 0).
  void addTx(int64_t bytes, int64_t count);
  // Whether a wait on `parity` (only its low bit counts) would return now.
  bool waitSatisfied(int64_t parity) const { return (phase & 1) != (parity & 1); }
  // Nothing arrived and no bytes outstanding in the current phase.
  bool idle(int64_t count) const { return pending == count && tx == 0; }

private:
  void completeIfDone(int64_t count);
};

// The phase a wait means from its parity and its round (it is the round-th
// wait of its thread on the barrier, from 0): the round's own phase when the
// parities agree, else the one before (-1: the phase before the first, which
// passes at once). The symbolic proofs use the same rule (sync/MbarrierZ3.h).
int64_t intendedPhase(int64_t parity, int64_t round);

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
  bool waitSatisfied(int64_t parity) const { return live_ && state_.waitSatisfied(parity); }

  bool live() const { return live_; }
  int64_t count() const { return count_; }
  int64_t pending() const { return state_.pending; }
  int64_t tx() const { return state_.tx; }
  // Phases completed since init; the current phase's parity is phase() & 1.
  int64_t phase() const { return state_.phase; }
  // `phase 3 (parity 1), pending 1 of 2, tx -16384`
  std::string str() const;

  static std::string_view errorText(Error e);

private:
  bool live_ = false;
  int64_t count_ = 0;
  MbarrierPhase state_;
};

} // namespace tilescope
