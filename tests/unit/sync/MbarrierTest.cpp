// The mbarrier rules of docs/semantics.md, pinned on the state machine itself:
// phase completion needs pending arrivals and transaction bytes both at 0;
// parity waits; the signed transaction count; over-arrival and re-init errors.
#include "simulator/Mbarrier.h"

#include <doctest/doctest.h>

using tilescope::sim::Mbarrier;
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
