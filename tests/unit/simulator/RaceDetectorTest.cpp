// The dynamic race detector's clock logic, driven directly (no kernel): which
// access pairs happen-before and which race.
#include "racecheck/dynamic/RaceDetector.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace tilescope::sim;

namespace {

const char kLocA[] = "a", kLocB[] = "b";
const llvm::SMLoc A = llvm::SMLoc::getFromPointer(kLocA), B = llvm::SMLoc::getFromPointer(kLocB);

RaceDetector::Target sharedByte(int64_t byte) {
  return {RaceSpace::Shared, 0, byte, byte, 1};
}
RaceDetector::Target globalElement(int64_t e) {
  return {RaceSpace::Global, 0, e, e, 1};
}

RaceDetector fresh(int64_t threads = 4, int barriers = 2) {
  RaceDetector d;
  d.beginCta({0, 0, 0}, threads, 64, false, barriers);
  return d;
}

} // namespace

TEST_CASE("vector clocks: join, missing entries and epochs") {
  VectorClock a{3, 1}, b{1, 4, 2};
  joinInto(a, b);
  CHECK(a == VectorClock{3, 4, 2});
  CHECK(clockAt(a, 7) == 0);
  setClock(a, 5, 9);
  CHECK(a.size() == 6);
  CHECK(clockAt(a, 5) == 9);
  Epoch e{1, 4, 0, nullptr};
  CHECK(orderedBefore(e, 2, 0, a));       // a has seen agent 1 up to 4
  CHECK_FALSE(orderedBefore(e, 2, 1, a)); // another group (CTA, cluster) never is
  Epoch later{1, 5, 0, nullptr};
  CHECK_FALSE(orderedBefore(later, 2, 0, a));
  CHECK(orderedBefore(later, 1, 0, VectorClock{})); // program order of the same agent
}

TEST_CASE("race detector: unsynchronised threads race, a rendezvous orders them") {
  RaceDetector d = fresh();
  d.access(sharedByte(3), true, 0, A);
  d.access(sharedByte(3), false, 1, B);
  REQUIRE(d.races().size() == 1);
  CHECK(d.races()[0].kind == RaceType::DataRace);
  CHECK(d.races()[0].first.agent == 0);
  CHECK(d.races()[0].first.write);
  CHECK(d.races()[0].second.agent == 1);

  RaceDetector ok = fresh();
  ok.access(sharedByte(3), true, 0, A);
  ok.syncThreads(0, 4);
  ok.access(sharedByte(3), false, 1, B);
  ok.access(sharedByte(3), true, 2, B); // after the sync, but unordered with thread 1's read
  REQUIRE(ok.races().size() == 1);
  CHECK(ok.races()[0].first.agent == 1);
  CHECK(ok.races()[0].second.agent == 2);
}

TEST_CASE("race detector: an mbarrier phase orders its arrivals before the waits that see it") {
  RaceDetector d = fresh();
  d.access(sharedByte(0), true, 0, A);
  d.mbarrierRelease(0, 0, /*phaseBefore=*/0, /*completed=*/true);
  d.mbarrierAcquire(1, 0, /*parity=*/0);
  d.access(sharedByte(0), false, 1, B);
  CHECK(d.races().empty());
  // A write after the arrival is not covered by it.
  d.access(sharedByte(1), true, 0, A);
  d.access(sharedByte(1), false, 1, B);
  CHECK(d.races().size() == 1);
  // A wait on the other parity sees nothing of this phase.
  RaceDetector other = fresh();
  other.access(sharedByte(0), true, 0, A);
  other.mbarrierRelease(0, 0, 0, true);
  other.mbarrierAcquire(1, 0, 1);
  other.access(sharedByte(0), false, 1, B);
  CHECK(other.races().size() == 1);
  // An arrival that does not complete the phase is held until one does.
  RaceDetector held = fresh();
  held.access(sharedByte(0), true, 0, A);
  held.mbarrierRelease(0, 0, 0, false);
  held.mbarrierRelease(0, 2, 0, true);
  held.mbarrierAcquire(1, 0, 0);
  held.access(sharedByte(0), false, 1, B);
  CHECK(held.races().empty());
}

TEST_CASE("race detector: each asynchronous operation is its own agent") {
  // Thread 0 issues two copies that signal different barriers; thread 1
  // waits only for the second and reads what the first wrote.
  RaceDetector d = fresh();
  uint32_t first = d.issueAsync(AsyncKind::TmaCopy, 0, A);
  uint32_t second = d.issueAsync(AsyncKind::TmaCopy, 0, A);
  CHECK(first != second);
  CHECK(d.isAsync(first));
  d.access(sharedByte(0), true, first, A);
  d.access(sharedByte(8), true, second, A);
  d.mbarrierRelease(0, first, 0, true);
  d.mbarrierRelease(1, second, 0, true);
  d.mbarrierAcquire(1, 1, 0);
  d.access(sharedByte(8), false, 1, B);
  CHECK(d.races().empty());
  d.access(sharedByte(0), false, 1, B);
  REQUIRE(d.races().size() == 1);
  CHECK(d.races()[0].kind == RaceType::AsyncRace);
  CHECK(d.races()[0].first.async);
  CHECK(d.races()[0].first.kind == AsyncKind::TmaCopy);
  CHECK(d.races()[0].first.issuer == 0);
}

TEST_CASE("race detector: an operation sees what its issuer did before it, not after") {
  RaceDetector d = fresh();
  d.access(sharedByte(0), true, 0, A);
  uint32_t op = d.issueAsync(AsyncKind::TmaCopy, 0, A);
  d.access(sharedByte(1), true, 0, B); // after the issue: overwrites what the copy reads
  d.access(sharedByte(0), false, op, A);
  CHECK(d.races().empty());
  d.access(sharedByte(1), false, op, A);
  REQUIRE(d.races().size() == 1);
  CHECK(d.races()[0].kind == RaceType::AsyncRace);
}

TEST_CASE("race detector: generic writes read through the async proxy need the writer's fence") {
  auto run = [](bool fenceBefore, bool fenceAfter) {
    RaceDetector d = fresh();
    d.access(sharedByte(0), true, 1, A);
    if (fenceBefore)
      d.fenceProxyAsync(1);
    d.syncThreads(0, 4);
    if (fenceAfter)
      d.fenceProxyAsync(1);
    uint32_t op = d.issueAsync(AsyncKind::Wgmma, 0, B);
    d.access(sharedByte(0), false, op, B);
    return d.races();
  };
  CHECK(run(true, false).empty());
  std::vector<Race> none = run(false, false);
  REQUIRE(none.size() == 1);
  CHECK(none[0].kind == RaceType::MissingProxyFence);
  CHECK(none[0].first.agent == 1);
  // A fence after the barrier is not seen by the issuing thread.
  CHECK(run(false, true).size() == 1);
  // A TMA copy reads global memory and writes shared: no proxy rule applies.
  RaceDetector tma = fresh();
  tma.access(sharedByte(0), true, 0, A);
  uint32_t op = tma.issueAsync(AsyncKind::TmaCopy, 0, B);
  tma.access(sharedByte(0), false, op, B);
  CHECK(tma.races().empty());
}

TEST_CASE("race detector: unordered reads are all kept for the next write") {
  RaceDetector d = fresh();
  d.access(sharedByte(0), false, 1, A);
  d.access(sharedByte(0), false, 2, A);
  // Thread 3 synchronises with thread 1 only (a release into a clock it acquires).
  VectorClock from1;
  d.release(1, from1);
  d.acquire(3, from1);
  d.access(sharedByte(0), true, 3, B);
  REQUIRE(d.races().size() == 1);
  CHECK(d.races()[0].first.agent == 2);
  CHECK_FALSE(d.races()[0].first.write);
}

TEST_CASE("race detector: global memory is shared by the CTAs of a run") {
  RaceDetector d;
  d.beginCta({0, 0, 0}, 2, 0, false, 0);
  d.access(globalElement(5), true, 0, A);
  d.access(globalElement(6), false, 0, A);
  d.beginCta({1, 0, 0}, 2, 0, false, 0);
  CHECK(d.ctaNumber() == 1);
  d.access(globalElement(6), false, 0, B); // two reads do not conflict
  CHECK(d.races().empty());
  d.access(globalElement(5), false, 1, B);
  REQUIRE(d.races().size() == 1);
  CHECK(d.races()[0].space == RaceSpace::Global);
  CHECK(d.races()[0].first.cta == 0);
  CHECK(d.races()[0].second.cta == 1);
  CHECK(d.ctaId(1)[0] == 1);
}

TEST_CASE("race detector: the CTAs of a cluster share clocks, each keeps its shared memory") {
  RaceDetector d;
  d.beginCluster({{0, 0, 0}, {1, 0, 0}}, 2, 16, false, 1);
  uint32_t peer = d.threadAgent(1, 0); // thread 0 of rank 1
  CHECK(peer == 2);
  RaceDetector::Target inRank1 = sharedByte(4), inRank0 = sharedByte(4);
  inRank1.rank = 1;
  // The same byte of two CTAs is two cells.
  d.access(inRank0, true, 0, A);
  d.access(inRank1, true, peer, A);
  CHECK(d.races().empty());
  // Thread 0 of rank 0 reads rank 1's byte (distributed shared memory)
  // without synchronisation: a race reported in rank 1's CTA.
  d.access(inRank1, false, 0, B);
  REQUIRE(d.races().size() == 1);
  CHECK(d.races()[0].cta == 1);
  CHECK(d.races()[0].first.cta == 1);
  CHECK(d.races()[0].first.agent == 0); // the thread number inside its CTA
  CHECK(d.races()[0].second.cta == 0);

  // The cluster barrier orders every arrival before every wait.
  RaceDetector c;
  c.beginCluster({{0, 0, 0}, {1, 0, 0}}, 2, 16, false, 1);
  c.access(inRank1, true, c.threadAgent(1, 1), A);
  for (uint32_t t = 0; t < 4; ++t)
    c.clusterArrive(t);
  c.clusterPhaseCompleted();
  c.clusterWait(0);
  c.access(inRank1, false, 0, B);
  CHECK(c.races().empty());

  // A remote arrival on rank 1's barrier is seen by rank 1's wait only.
  RaceDetector m;
  m.beginCluster({{0, 0, 0}, {1, 0, 0}}, 2, 16, false, 1);
  m.access(inRank1, true, 0, A);
  m.mbarrierRelease(0, 0, 0, true, /*rank=*/1);
  m.mbarrierAcquire(m.threadAgent(0, 1), 0, 0, /*rank=*/0); // rank 0's barrier: nothing
  m.access(inRank1, false, m.threadAgent(0, 1), B);
  CHECK(m.races().size() == 1);
  m.mbarrierAcquire(m.threadAgent(1, 1), 0, 0, /*rank=*/1);
  m.access(inRank1, false, m.threadAgent(1, 1), A); // another statement pair: not deduplicated
  CHECK(m.races().size() == 1);
}

TEST_CASE("race detector: one report per statement pair, out-of-view accesses reported") {
  RaceDetector d = fresh();
  for (int64_t b = 0; b < 8; ++b) {
    d.access(sharedByte(b), true, 0, A);
    d.access(sharedByte(b), false, 1, B);
  }
  CHECK(d.races().size() == 1);
  d.outOfView({RaceSpace::Tmem, 0, 0, 40 * 512, 1}, false, 2, A);
  REQUIRE(d.races().size() == 2);
  CHECK(d.races()[1].kind == RaceType::OutOfView);
  CHECK(d.races()[1].address == 40 * 512);
}

TEST_CASE("read sets: a reader's repeats collapse, every reader's latest read is kept") {
  ReadSets sets;
  int32_t s = sets.create({0, 1, 0, kLocA}, {1, 1, 0, kLocA});
  for (uint32_t round = 2; round < 40; ++round)
    for (uint32_t agent = 0; agent < 10; ++agent)
      sets.add(s, {agent, round, 0, kLocB});
  sets.add(s, {3, 99, 0, kLocB});
  sets.add(s, {3, 100, 0, kLocB}); // replaces the last entry in place
  const std::vector<Epoch> &set = sets.at(s);
  CHECK(set.size() < 64);
  for (uint32_t agent = 0; agent < 10; ++agent) {
    uint32_t latest = 0;
    for (const Epoch &e : set)
      if (e.agent == agent)
        latest = std::max(latest, e.time);
    CHECK(latest == (agent == 3 ? 100u : 39u));
  }
}

namespace {

RaceDetector::Target tmemCell(int64_t cell) {
  return {RaceSpace::Tmem, 0, cell, cell, 1};
}

RaceDetector freshTmem() {
  RaceDetector d;
  d.beginCta({0, 0, 0}, 4, 64, true, 2);
  return d;
}

} // namespace

TEST_CASE("race detector: a tcgen05 op sees its thread's view as of its last after-fence") {
  // Thread 0 writes, the threads meet, thread 1 reads with tcgen05.ld (or
  // issues a tcgen05.mma): ordered only with thread 1's after-fence after
  // the meeting.
  auto run = [](bool fenceBefore, bool fenceAfter, bool mma) {
    RaceDetector d = freshTmem();
    d.access(tmemCell(0), true, 0, A);
    if (fenceBefore)
      d.tcgen05FenceAfter(1);
    d.syncThreads(0, 4);
    if (fenceAfter)
      d.tcgen05FenceAfter(1);
    uint32_t agent = mma ? d.issueAsync(AsyncKind::Tcgen05Mma, 1, B) : d.tcgen05Agent(1, B);
    d.access(tmemCell(0), false, agent, B);
    return d.races();
  };
  for (bool mma : {false, true}) {
    CHECK(run(false, true, mma).empty());
    CHECK(run(false, false, mma).size() == 1);
    CHECK(run(true, false, mma).size() == 1); // a fence before the meeting does not count
  }
  // The loads of a thread are reported as the thread, at their place.
  std::vector<Race> r = run(false, false, false);
  REQUIRE(r.size() == 1);
  CHECK_FALSE(r[0].second.async);
  CHECK(r[0].second.agent == 1);
  CHECK(r[0].second.loc == B);
  // Other work of the thread is ordered as before: a plain access sees the meeting.
  RaceDetector plain = freshTmem();
  plain.access(tmemCell(0), true, 0, A);
  plain.syncThreads(0, 4);
  plain.access(tmemCell(0), false, 1, B);
  CHECK(plain.races().empty());
}

TEST_CASE("race detector: a tcgen05.ld is published by a later meeting only behind a before-fence") {
  auto run = [](bool fence) {
    RaceDetector d = freshTmem();
    d.access(tmemCell(0), false, d.tcgen05Agent(1, A), A);
    if (fence)
      d.tcgen05FenceBefore(1);
    d.syncThreads(0, 4);
    d.access(tmemCell(0), true, 0, B); // e.g. the dealloc
    return d.races();
  };
  CHECK(run(true).empty());
  REQUIRE(run(false).size() == 1);
  CHECK(run(false)[0].kind == RaceType::DataRace);
  // A load after the fence is not covered by it.
  RaceDetector late = freshTmem();
  late.access(tmemCell(0), false, late.tcgen05Agent(1, A), A);
  late.tcgen05FenceBefore(1);
  late.access(tmemCell(1), false, late.tcgen05Agent(1, A), A);
  late.syncThreads(0, 4);
  late.access(tmemCell(0), true, 0, B);
  late.access(tmemCell(1), true, 0, B);
  REQUIRE(late.races().size() == 1);
  CHECK(late.races()[0].address == 1);
  // The thread's own later accesses stay after its loads (program order).
  RaceDetector own = freshTmem();
  own.access(tmemCell(0), false, own.tcgen05Agent(1, A), A);
  own.access(tmemCell(0), true, 1, B);
  CHECK(own.races().empty());
}
