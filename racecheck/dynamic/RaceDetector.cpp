#include "racecheck/dynamic/RaceDetector.h"
#include "ir/Intrinsics.h"

#include <algorithm>

namespace tilescope::sim {

std::string_view raceTypeName(RaceType k) {
  switch (k) {
  case RaceType::DataRace:
    return "data race";
  case RaceType::AsyncRace:
    return "async race";
  case RaceType::MissingProxyFence:
    return "missing fence.proxy.async";
  case RaceType::OutOfView:
    return "out of view";
  }
  return "?";
}

std::string_view asyncKindName(AsyncKind k) {
  switch (k) {
  case AsyncKind::TmaCopy:
    return "TMA copy";
  case AsyncKind::TmaStore:
    return "TMA store";
  case AsyncKind::CpAsync:
    return "cp.async";
  case AsyncKind::Wgmma:
    return intrinsicName(IntrinsicId::WgmmaMmaAsync);
  case AsyncKind::Tcgen05Mma:
    return intrinsicName(IntrinsicId::Tcgen05Mma);
  case AsyncKind::Tcgen05Commit:
    return intrinsicName(IntrinsicId::Tcgen05Commit);
  case AsyncKind::Tcgen05LdSt:
    return "tcgen05.ld/st";
  }
  return "?";
}

bool readsThroughAsyncProxy(AsyncKind k) {
  return k == AsyncKind::TmaStore || k == AsyncKind::Wgmma || k == AsyncKind::Tcgen05Mma;
}

void RaceDetector::beginCluster(const std::vector<std::array<int64_t, 3>> &ctaIds, int64_t threads,
                                int64_t sharedBytes, bool tensorMemory, int barriers) {
  group_ = started_ ? group_ + 1 : 0;
  started_ = true;
  firstCta_ = static_cast<uint32_t>(ctaIds_.size());
  ctaIds_.insert(ctaIds_.end(), ctaIds.begin(), ctaIds.end());
  int ranks = static_cast<int>(ctaIds.size());
  threads_ = static_cast<uint32_t>(threads);
  groupThreads_ = threads_ * static_cast<uint32_t>(ranks);
  groups_.push_back({firstCta_, threads_, groupThreads_, {}});
  // Time 1 for everyone: time 0 in a clock means "has seen nothing of".
  clocks_.assign(groupThreads_, VectorClock());
  for (uint32_t t = 0; t < groupThreads_; ++t)
    setClock(clocks_[t], t, 1);
  fences_.assign(groupThreads_, {});
  globalFences_.assign(groupThreads_, {});
  afterFence_.assign(groupThreads_, VectorClock());
  ldSt_.assign(groupThreads_, Epoch::kNoAgent);
  barriersPerCta_ = barriers;
  barrierAccum_.assign(static_cast<size_t>(barriers * ranks), VectorClock());
  phaseClock_.assign(static_cast<size_t>(barriers * ranks), {});
  clusterAccum_.clear();
  clusterPhase_.clear();
  shared_.resize(ranks);
  tmem_.resize(ranks);
  for (int r = 0; r < ranks; ++r) {
    shared_[r].reset(sharedBytes);
    tmem_[r].reset(tensorMemory ? 128 * 512 : 0);
  }
  ctaReads_.clear();
}

uint32_t RaceDetector::issueAsync(AsyncKind kind, uint32_t issuer, llvm::SMLoc loc,
                                  const VectorClock *after) {
  uint32_t agent = static_cast<uint32_t>(clocks_.size());
  // A tcgen05.mma sees what its issuer acquired up to its last after-fence.
  VectorClock c = kind == AsyncKind::Tcgen05Mma ? tcgen05View(issuer) : clocks_[issuer];
  if (after)
    joinInto(c, *after);
  setClock(c, agent, 1);
  clocks_.push_back(std::move(c));
  groups_.back().async.push_back({kind, issuer, loc});
  ++clocks_[issuer][issuer]; // what the issuer does next is not before the operation
  return agent;
}

void RaceDetector::release(uint32_t agent, VectorClock &into) {
  joinInto(into, clocks_[agent]);
  if (!isAsync(agent))
    ++clocks_[agent][agent];
}

void RaceDetector::acquire(uint32_t thread, const VectorClock &from) {
  joinInto(clocks_[thread], from);
}

void RaceDetector::syncThreads(uint32_t begin, uint32_t end) {
  VectorClock all;
  for (uint32_t t = begin; t < end; ++t)
    joinInto(all, clocks_[t]);
  for (uint32_t t = begin; t < end; ++t) {
    clocks_[t] = all;
    ++clocks_[t][t];
  }
}

VectorClock RaceDetector::beginUnit(uint32_t begin, uint32_t end) {
  VectorClock own = clocks_[begin];
  for (uint32_t t = begin + 1; t < end; ++t)
    joinInto(clocks_[begin], clocks_[t]);
  return own;
}

void RaceDetector::endUnit(uint32_t begin, uint32_t end, VectorClock own) {
  VectorClock unit;
  unit.resize(begin + 1);
  unit[begin] = clocks_[begin][begin];
  clocks_[begin] = std::move(own);
  for (uint32_t t = begin; t < end; ++t)
    joinInto(clocks_[t], unit);
  ++clocks_[begin][begin];
}

void RaceDetector::fenceProxyAsync(uint32_t thread, bool global) {
  fences_[thread].push_back(clocks_[thread][thread]);
  if (global)
    globalFences_[thread].push_back(clocks_[thread]);
  ++clocks_[thread][thread];
}

VectorClock RaceDetector::tcgen05View(uint32_t thread) const {
  VectorClock v = afterFence_[thread];
  setClock(v, thread, clocks_[thread][thread]);
  if (uint32_t ldSt = ldSt_[thread]; ldSt != Epoch::kNoAgent)
    setClock(v, ldSt, clocks_[ldSt][ldSt]);
  return v;
}

void RaceDetector::tcgen05FenceAfter(uint32_t thread) {
  afterFence_[thread] = clocks_[thread];
}

void RaceDetector::tcgen05FenceBefore(uint32_t thread) {
  // The thread's loads and stores so far come before what it releases next;
  // those after this fence get the next time.
  uint32_t ldSt = ldSt_[thread];
  if (ldSt == Epoch::kNoAgent)
    return;
  setClock(clocks_[thread], ldSt, clocks_[ldSt][ldSt]);
  ++clocks_[ldSt][ldSt];
}

uint32_t RaceDetector::tcgen05Agent(uint32_t thread, llvm::SMLoc loc) {
  uint32_t &ldSt = ldSt_[thread];
  if (ldSt == Epoch::kNoAgent) {
    ldSt = static_cast<uint32_t>(clocks_.size());
    VectorClock c;
    setClock(c, ldSt, 1);
    clocks_.push_back(std::move(c));
    groups_.back().async.push_back({AsyncKind::Tcgen05LdSt, thread, loc});
  }
  clocks_[ldSt] = tcgen05View(thread);
  return ldSt;
}

void RaceDetector::mbarrierRelease(int barrier, uint32_t agent, int64_t phaseBefore, bool completed,
                                   int rank) {
  size_t at = static_cast<size_t>(rank * barriersPerCta_ + barrier);
  release(agent, barrierAccum_[at]);
  if (completed) {
    phaseClock_[at][phaseBefore & 1] = std::move(barrierAccum_[at]);
    barrierAccum_[at].clear();
  }
}

void RaceDetector::mbarrierAcquire(uint32_t thread, int barrier, int64_t parity, int rank) {
  acquire(thread, phaseClock_[static_cast<size_t>(rank * barriersPerCta_ + barrier)][parity & 1]);
}

void RaceDetector::clusterArrive(uint32_t thread) {
  release(thread, clusterAccum_);
}

void RaceDetector::clusterPhaseCompleted() {
  clusterPhase_ = std::move(clusterAccum_);
  clusterAccum_.clear();
}

void RaceDetector::clusterWait(uint32_t thread) {
  acquire(thread, clusterPhase_);
}

bool RaceDetector::fenced(uint32_t writer, uint32_t writeTime, uint32_t seen) const {
  // A fence by the writer after the write (time >= the write's) that the
  // reading operation's issue has seen (time < what it knows of the writer).
  const std::vector<uint32_t> &f = fences_[writer];
  auto it = std::lower_bound(f.begin(), f.end(), writeTime);
  return it != f.end() && *it < seen;
}

bool RaceDetector::globalFenced(const Epoch &write, uint32_t op) const {
  const VectorClock &seen = clocks_[op];
  uint32_t issuer = asyncIssuer(op);
  // The writer's global fence after the write, seen by the copy's issue.
  for (const VectorClock &f : globalFences_[write.agent]) {
    uint32_t at = clockAt(f, write.agent);
    if (at >= write.time && at < clockAt(seen, write.agent))
      return true;
  }
  // The issuer's global fence before the issue, after it observed the write.
  for (const VectorClock &f : globalFences_[issuer])
    if (clockAt(f, issuer) < clockAt(seen, issuer) && write.time <= clockAt(f, write.agent))
      return true;
  return false;
}

RaceSide RaceDetector::side(const Epoch &e, bool write) const {
  const Group &g = groups_[e.group];
  RaceSide s;
  s.write = write;
  s.loc = llvm::SMLoc::getFromPointer(e.loc);
  uint32_t thread = e.agent;
  if (e.agent >= g.threadAgents) {
    const AsyncInfo &info = g.async[e.agent - g.threadAgents];
    thread = info.issuer;
    // A thread's tcgen05.ld / st agent is reported as the thread.
    s.async = info.kind != AsyncKind::Tcgen05LdSt;
    s.kind = info.kind;
    s.issuer = info.issuer % g.threads;
    s.issuedAt = info.loc;
  }
  s.cta = g.firstCta + thread / g.threads;
  s.agent = s.async ? e.agent : thread % g.threads;
  return s;
}

void RaceDetector::report(RaceType kind, const Target &t, int64_t address, const RaceSide &first,
                          const RaceSide &second) {
  if (races_.size() >= kMaxRaces)
    return;
  if (kind == RaceType::DataRace && (first.async || second.async))
    kind = RaceType::AsyncRace;
  // One report per kind and statement pair: the other threads of the same
  // statements race the same way.
  auto same = [](const RaceSide &a, const RaceSide &b) {
    return a.loc == b.loc && a.write == b.write;
  };
  for (const Race &r : races_)
    if (r.kind == kind && ((same(r.first, first) && same(r.second, second)) ||
                           (same(r.first, second) && same(r.second, first))))
      return;
  uint32_t cta =
      t.space == RaceSpace::Global ? second.cta : firstCta_ + static_cast<uint32_t>(t.rank);
  races_.push_back({kind, t.space, t.object, t.element, address, cta, first, second});
}

void RaceDetector::accessCell(ShadowCell &cell, ReadSets &sets, const Target &t, int64_t address,
                              bool write, uint32_t agent, llvm::SMLoc loc) {
  const VectorClock &c = clocks_[agent];
  Epoch now{agent, clockAt(c, agent), group_, loc.getPointer()};
  // A thread's own tcgen05.ld / st come before what it does next.
  uint32_t ownLdSt = isAsync(agent) ? Epoch::kNoAgent : ldSt_[agent];
  auto conflict = [&](const Epoch &prev, bool prevWrite) {
    bool own = prev.agent == ownLdSt && prev.group == group_;
    if (!own && !orderedBefore(prev, agent, group_, c))
      report(RaceType::DataRace, t, address, side(prev, prevWrite), side(now, write));
  };
  bool asyncProxyRead = false;
  if (!write && t.space == RaceSpace::Shared && isAsync(agent))
    asyncProxyRead = readsThroughAsyncProxy(asyncKind(agent));
  if (cell.write.valid()) {
    conflict(cell.write, true);
    // A TMA copy reads global memory through the async proxy.
    if (!write && t.space == RaceSpace::Global && isAsync(agent) &&
        asyncKind(agent) == AsyncKind::TmaCopy && cell.write.group == group_ &&
        !isAsync(cell.write.agent) && orderedBefore(cell.write, agent, group_, c) &&
        !globalFenced(cell.write, agent))
      report(RaceType::MissingProxyFence, t, address, side(cell.write, true), side(now, write));
    // The async proxy reads generic-proxy writes only behind a proxy fence.
    if (asyncProxyRead && cell.write.group == group_ && !isAsync(cell.write.agent) &&
        orderedBefore(cell.write, agent, group_, c) &&
        !fenced(cell.write.agent, cell.write.time, clockAt(c, cell.write.agent)))
      report(RaceType::MissingProxyFence, t, address, side(cell.write, true), side(now, write));
  }
  if (write) {
    if (cell.readSet >= 0) {
      for (const Epoch &r : sets.at(cell.readSet))
        conflict(r, false);
      sets.release(cell.readSet);
      cell.readSet = -1;
    } else if (cell.read.valid()) {
      conflict(cell.read, false);
    }
    cell.write = now;
    cell.read = Epoch{};
    return;
  }
  if (cell.readSet >= 0) {
    sets.add(cell.readSet, now);
  } else if (!cell.read.valid() || orderedBefore(cell.read, agent, group_, c)) {
    cell.read = now; // the new read is after the old one: it alone matters
  } else {
    cell.readSet = sets.create(cell.read, now);
    cell.read = Epoch{};
  }
}

void RaceDetector::access(const Target &t, bool write, uint32_t agent, llvm::SMLoc loc) {
  for (int64_t a = t.address; a < t.address + t.units; ++a) {
    switch (t.space) {
    case RaceSpace::Shared:
      if (shared_[t.rank].contains(a))
        accessCell(shared_[t.rank].at(a), ctaReads_, t, a, write, agent, loc);
      break;
    case RaceSpace::Tmem:
      if (tmem_[t.rank].contains(a))
        accessCell(tmem_[t.rank].at(a), ctaReads_, t, a, write, agent, loc);
      break;
    case RaceSpace::Global:
      accessCell(global_.at(t.object, a), globalReads_, t, a, write, agent, loc);
      break;
    case RaceSpace::Reg: // private to a thread: the engine reports none
      break;
    }
  }
}

void RaceDetector::outOfView(const Target &t, bool write, uint32_t agent, llvm::SMLoc loc) {
  RaceSide me = side(Epoch{agent, clockAt(clocks_[agent], agent), group_, loc.getPointer()}, write);
  report(RaceType::OutOfView, t, t.address, me, me);
}

} // namespace tilescope::sim
