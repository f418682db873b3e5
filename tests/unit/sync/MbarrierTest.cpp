// The mbarrier rules of docs/semantics.md, pinned on the one state machine
// (sync/Mbarrier.h) the simulator and the exhaustive explorer share: phase
// completion needs pending arrivals and transaction bytes both at 0; parity
// waits; the signed transaction count; over-arrival and re-init errors; the
// phase a wait means from its parity and round.
#include "sync/Mbarrier.h"

#include <doctest/doctest.h>

using tilescope::Mbarrier;
using tilescope::MbarrierPhase;
using E = Mbarrier::Error;

TEST_CASE("mbarrier: a fresh barrier is in phase 0; waiting on parity 1 passes, parity 0 blocks") {
  Mbarrier b;
  CHECK(b.init(2) == E::None);
  CHECK(b.phase() == 0);
  CHECK(b.waitSatisfied(1));
  CHECK_FALSE(b.waitSatisfied(0));
}

TEST_CASE("mbarrier: the phase completes at the count-th arrival and the parity flips") {
  Mbarrier b;
  REQUIRE(b.init(2) == E::None);
  CHECK(b.arrive() == E::None);
  CHECK(b.phase() == 0);
  CHECK(b.pending() == 1);
  CHECK(b.arrive() == E::None);
  CHECK(b.phase() == 1);
  CHECK(b.pending() == 2); // reloaded
  CHECK(b.waitSatisfied(0));
  CHECK_FALSE(b.waitSatisfied(1));
  CHECK(b.arrive(2) == E::None);
  CHECK(b.phase() == 2);
  CHECK(b.waitSatisfied(1));
}

TEST_CASE("mbarrier: transaction bytes hold the phase open until they drain") {
  Mbarrier b;
  REQUIRE(b.init(1) == E::None);
  CHECK(b.expectTx(32768) == E::None);
  CHECK(b.arrive() == E::None);
  CHECK(b.phase() == 0);
  CHECK(b.pending() == 0);
  CHECK(b.completeTx(16384) == E::None);
  CHECK(b.phase() == 0);
  CHECK(b.tx() == 16384);
  CHECK(b.completeTx(16384) == E::None);
  CHECK(b.phase() == 1);
  CHECK(b.tx() == 0);
}

TEST_CASE("mbarrier: complete_tx may come before expect_tx (the count is signed)") {
  Mbarrier b;
  REQUIRE(b.init(1) == E::None);
  CHECK(b.completeTx(8192) == E::None);
  CHECK(b.tx() == -8192);
  CHECK(b.phase() == 0);
  CHECK(b.expectTx(8192) == E::None);
  CHECK(b.tx() == 0);
  CHECK(b.phase() == 0); // the arrival is still pending
  CHECK(b.arrive() == E::None);
  CHECK(b.phase() == 1);
}

TEST_CASE("mbarrier: arriving more often than the count in one phase is an error") {
  Mbarrier b;
  REQUIRE(b.init(1) == E::None);
  REQUIRE(b.expectTx(16) == E::None);
  CHECK(b.arrive() == E::None);
  CHECK(b.arrive() == E::OverArrival);
  Mbarrier c;
  REQUIRE(c.init(3) == E::None);
  CHECK(c.arrive(4) == E::OverArrival);
  CHECK(c.pending() == 3);
}

TEST_CASE("mbarrier: init range, re-init of a live barrier, use before init, inval") {
  Mbarrier b;
  CHECK(b.arrive() == E::NotInitialised);
  CHECK(b.init(0) == E::CountOutOfRange);
  CHECK(b.init(1 << 20) == E::CountOutOfRange);
  CHECK(b.init((1 << 20) - 1) == E::None);
  CHECK(b.init(4) == E::ReInit);
  CHECK(b.inval() == E::None);
  CHECK(b.init(4) == E::None);
  CHECK(b.str() == "phase 0 (parity 0), pending 4 of 4, tx 0");
}

TEST_CASE("mbarrier phases: the explorer's state moves as the simulator's barrier does") {
  // The same sequence on both models, compared after every step.
  Mbarrier b;
  REQUIRE(b.init(2) == E::None);
  MbarrierPhase s = MbarrierPhase::initial(2);
  auto same = [&] {
    CHECK(s.phase == b.phase());
    CHECK(s.pending == b.pending());
    CHECK(s.tx == b.tx());
    CHECK(s.waitSatisfied(0) == b.waitSatisfied(0));
    CHECK(s.waitSatisfied(1) == b.waitSatisfied(1));
  };
  CHECK(s.idle(2));
  s.addTx(4096, 2);
  CHECK(b.expectTx(4096) == E::None);
  same();
  CHECK(s.arrive(1, 2));
  CHECK(b.arrive() == E::None);
  same();
  CHECK(s.arrive(1, 2));
  CHECK(b.arrive() == E::None);
  same();
  CHECK(s.phase == 0); // all arrivals, bytes outstanding
  CHECK_FALSE(s.idle(2));
  s.addTx(-4096, 2);
  CHECK(b.completeTx(4096) == E::None);
  same();
  CHECK(s.phase == 1);
  CHECK(s.idle(2));
  CHECK_FALSE(s.arrive(3, 2)); // over-arrival changes nothing
  CHECK(b.arrive(3) == E::OverArrival);
  same();
}

TEST_CASE("mbarrier phases: a phase whose arrivals are in completes when its bytes reach 0, "
          "whichever way they move") {
  MbarrierPhase s = MbarrierPhase::initial(1);
  s.addTx(-512, 1); // delivered before expected
  CHECK(s.arrive(1, 1));
  CHECK(s.phase == 0);
  s.addTx(512, 1); // the expect_tx that balances it
  CHECK(s.phase == 1);
  CHECK(s.pending == 1);
  CHECK(s.tx == 0);
}

TEST_CASE("mbarrier phases: arrive.expect_tx raises the bytes, then arrives; an over-arrival "
          "counts no arrival") {
  MbarrierPhase s = MbarrierPhase::initial(1);
  CHECK(s.arrive(1, 1, 128));
  CHECK(s.phase == 0);
  CHECK(s.pending == 0);
  CHECK(s.tx == 128);
  CHECK_FALSE(s.arrive(1, 1, 64));
  CHECK(s.tx == 192); // the expect-tx part came first
  CHECK(s.pending == 0);
  s.addTx(-192, 1);
  CHECK(s.phase == 1);
}

TEST_CASE("mbarrier: the phase a wait means from its parity and round") {
  using tilescope::intendedPhase;
  // Round r waiting on parity r % 2 waits for phase r; on the other parity,
  // for phase r - 1 (round 0 on parity 1: the phase before the first).
  CHECK(intendedPhase(0, 0) == 0);
  CHECK(intendedPhase(1, 0) == -1);
  CHECK(intendedPhase(1, 1) == 1);
  CHECK(intendedPhase(0, 1) == 0);
  CHECK(intendedPhase(0, 6) == 6);
  CHECK(intendedPhase(1, 6) == 5);
  CHECK(intendedPhase(-1, 3) == 3); // only the low bit counts
  CHECK(intendedPhase(3, 2) == 1);
}
