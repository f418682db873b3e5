// Thread-block clusters: the CTAs of one cluster run interleaved, one
// scheduling decision of a randomly chosen CTA at a time, so that they can
// wait for one another. What crosses CTAs:
//
// - the cluster barrier: `barrier.cluster.arrive` / `barrier.cluster.wait`
//   (whole warps, the .aligned form) and `cluster.sync()` (both at once). A
//   phase completes when every warp of the cluster arrived; a wait blocks
//   until the phase its warp arrived in completed;
// - distributed shared memory: `dsmem.load(dst, src, cta = r)` reads the
//   region `src` of CTA r's shared memory (the same buffer in that CTA, as
//   mapa maps an address), `dsmem.store(dst, src, cta = r)` writes CTA r's
//   `dst`. A CTA that has exited has no shared memory to reach;
// - `mbarrier.arrive(bar, cta = r)`: an arrival on CTA r's barrier;
// - multicast: `tma.load(..., multicast = mask)` lands the box in every CTA
//   of the mask (same shared offset) and completes the transaction bytes on
//   each one's barrier; `tcgen05.commit(bar, multicast = mask)` arrives on
//   every masked CTA's barrier.
//
// Ranks follow %cluster_ctarank: x + y * nx + z * nx * ny inside the cluster.
#include "ir/Intrinsics.h"
#include "simulator/CtaExecutor.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

namespace tilescope::sim {

CtaExecutor *CtaExecutor::peer(int64_t rank, llvm::SMLoc loc) {
  int64_t size = cluster_ ? static_cast<int64_t>(cluster_->ctas.size()) : 1;
  if (rank < 0 || rank >= size) {
    fail(loc, fmt::format("CTA rank {} is outside the cluster of {} CTA{}", rank, size,
                          size == 1 ? "" : "s"));
    return nullptr;
  }
  if (!cluster_)
    return this;
  CtaExecutor *other = cluster_->ctas[rank];
  if (other->exited_) {
    fail(loc, fmt::format("CTA rank {} of the cluster has exited; its shared memory and "
                          "barriers are gone",
                          rank));
    return nullptr;
  }
  return other;
}

// A CTA of a cluster initialises its barriers when it starts, and nothing but
// a cluster barrier tells another that it has: the simulator starts every CTA
// with its barriers initialised, so it asks for the barrier instead.
CtaExecutor *CtaExecutor::startedPeer(const Warp &w, int64_t rank, llvm::SMLoc loc) {
  if (cluster_ && rank != rank_ && !w.clusterPassed) {
    fail(loc, fmt::format("warp {} reaches CTA rank {} of the cluster before it passed a cluster "
                          "barrier: the peer may not have started or initialised its barriers "
                          "(cluster.sync first)",
                          w.id, rank));
    return nullptr;
  }
  return peer(rank, loc);
}

bool CtaExecutor::adoptFailure(const CtaExecutor &other) {
  if (&other != this && other.failure_ && !failure_)
    failure_ = other.failure_;
  return false;
}

// --- the cluster barrier ------------------------------------------------------

namespace {
// A phase of the cluster barrier completes when every warp that has not
// exited arrived (PTX: barrier.cluster.wait waits for the non-exited threads).
void completeClusterPhase(ClusterState &cl) {
  if (cl.barrierArrived > 0 && cl.barrierArrived + cl.exitedWarps >= cl.barrierWarps) {
    ++cl.barrierPhase;
    cl.barrierArrived = 0;
    if (cl.race)
      cl.race->clusterPhaseCompleted();
  }
}
} // namespace

void CtaExecutor::clusterWarpExited(const Warp &w) {
  ClusterState &cl = *cluster_;
  if (w.clusterArrivedPhase == cl.barrierPhase)
    --cl.barrierArrived; // counted among the exited from now on
  ++cl.exitedWarps;
  completeClusterPhase(cl);
}

bool CtaExecutor::execClusterBarrier(Warp &w, Frame &f, const CallStmt &c) {
  if (f.mask != w.fullMask)
    return fail(c.loc, fmt::format("'{}' must be executed by whole warps, but warp {} reaches "
                                   "it with active mask 0x{:08x}",
                                   c.callee, w.id, f.mask));
  bool arrive = idOf(c) != IntrinsicId::BarrierClusterWait,
       wait = idOf(c) != IntrinsicId::BarrierClusterArrive;
  ClusterState &cl = *cluster_;
  if (arrive && !w.clusterWait) {
    if (w.clusterArrivedPhase >= 0)
      return fail(c.loc, fmt::format("warp {} arrives on the cluster barrier again before "
                                     "waiting for its phase {}",
                                     w.id, w.clusterArrivedPhase));
    w.clusterArrivedPhase = cl.barrierPhase;
    ++cl.barrierArrived;
    if (race_) // barrier.cluster.arrive has release semantics by default
      for (int64_t t = w.id * 32; t < std::min<int64_t>(w.id * 32 + 32, p_.threads); ++t)
        race_->clusterArrive(raceThread(t));
    completeClusterPhase(cl);
  }
  if (!wait) {
    ++f.pc;
    return true;
  }
  if (w.clusterArrivedPhase < 0)
    return fail(c.loc,
                fmt::format("warp {} waits on the cluster barrier without having arrived", w.id));
  w.clusterWait = true;
  if (!clusterWaitSatisfied(w)) {
    w.state = Warp::State::WaitBarrier;
    w.blockedAt = &c;
    return true;
  }
  w.clusterWait = false;
  w.clusterPassed = true;
  w.clusterArrivedPhase = -1;
  if (race_) // ... and barrier.cluster.wait acquire semantics
    for (int64_t t = w.id * 32; t < std::min<int64_t>(w.id * 32 + 32, p_.threads); ++t)
      race_->clusterWait(raceThread(t));
  ++f.pc;
  return true;
}

bool CtaExecutor::clusterWaitSatisfied(const Warp &w) const {
  return !w.clusterWait || cluster_->barrierPhase > w.clusterArrivedPhase;
}

std::string CtaExecutor::otherWaitText(const Warp &w) const {
  if (w.clusterWait)
    return fmt::format("the cluster barrier (phase {}: {} of {} warps of the cluster arrived, {} "
                       "exited)",
                       cluster_->barrierPhase, cluster_->barrierArrived, cluster_->barrierWarps,
                       cluster_->exitedWarps);
  if (w.pairWait)
    return fmt::format("the warp of CTA rank {} (cta_group = 2 allocation management takes one "
                       "warp of each CTA of the pair)",
                       rank_ ^ 1);
  if (w.groupWait.kind >= 0)
    return fmt::format("its {} groups", w.groupWait.kind == 0 ? "cp.async" : "bulk-store");
  if (!w.deviceWaits.empty() || w.channelPhase >= 0)
    return deviceWaitText(w);
  return "?";
}

// --- distributed shared memory and remote barriers ----------------------------

bool CtaExecutor::execDsmem(Warp &w, const CallStmt &c, int lane) {
  bool load = idOf(c) == IntrinsicId::DsmemLoad;
  const CallArg *rankArg = c.keyword("cta");
  LaneValues rank;
  if (!rankArg || !eval(rankArg->value, w, 1u << lane, rank))
    return failure_ ? false : fail(c.loc, fmt::format("'{}' needs cta = RANK", c.callee));
  std::optional<Region> dst, src;
  if (!copyRegions(c, w, lane, dst, src))
    return false;
  const Region &remote = load ? *src : *dst;
  const BufferPlan &rb = plan(remote.buffer), &db = plan(dst->buffer), &sb = plan(src->buffer);
  if (rb.scope != MemScope::Shared)
    return fail(c.loc, fmt::format("'{}' reaches a peer's shared memory; '{}' is {}", c.callee,
                                   rb.name, memScopeName(rb.scope)));
  if (db.dtype != sb.dtype)
    return fail(c.loc, fmt::format("'{}' between {} and {}", c.callee, dtypeName(sb.dtype),
                                   dtypeName(db.dtype)));
  int64_t n = dst->elements();
  if (src->elements() != n)
    return fail(c.loc,
                fmt::format("'{}' copies {} elements into {}", c.callee, src->elements(), n));
  CtaExecutor *other = startedPeer(w, rank.lane[lane].i, c.loc);
  if (!other)
    return false;
  int64_t t = w.id * 32 + lane;
  ThreadRange me{t, t + 1};
  for (int64_t i = 0; i < n; ++i) {
    if (!inBounds(*src, i) || !inBounds(*dst, i))
      return fail(c.loc, fmt::format("'{}' reaches outside '{}'", c.callee,
                                     inBounds(*src, i) ? db.name : sb.name));
    int64_t flat = bufferFlat(remote, i);
    auto at = other->sharedSpot(rb, flat);
    if (!at)
      return fail(c.loc, fmt::format("'{}' reaches outside CTA {}'s shared memory", c.callee,
                                     rank.lane[lane].i));
    raceAccessAs(raceThread(t), other->rank_, RaceSpace::Shared, remote.buffer, flat, at->at,
                 at->span, !load, c.loc);
    if (load) {
      if (!writeBits(dst->buffer, bufferFlat(*dst, i), other->loadShared(*at, rb.dtype), me, c.loc))
        return false;
    } else {
      auto b = readBits(src->buffer, bufferFlat(*src, i), me, c.loc);
      if (!b)
        return false;
      other->storeShared(*at, rb.dtype, *b);
    }
  }
  stats_.elementsMoved += n;
  return true;
}

bool CtaExecutor::execRemoteArrive(Warp &w, const CallStmt &c, int lane) {
  LaneValues rank, count;
  count.lane[lane].i = 1;
  const CallArg *countArg = c.keyword("count");
  if (!eval(c.keyword("cta")->value, w, 1u << lane, rank) ||
      (countArg && !eval(countArg->value, w, 1u << lane, count)))
    return false;
  auto bar = barrierRef(c.args.at(0).value, w, lane);
  if (!bar)
    return false;
  CtaExecutor *other = startedPeer(w, rank.lane[lane].i, c.loc);
  if (!other)
    return false;
  int64_t phaseBefore = other->barriers_[*bar].phase();
  if (!other->barrierError(other->barriers_[*bar].arrive(count.lane[lane].i), *bar, c.loc))
    return adoptFailure(*other);
  other->releaseTo(*bar, raceThread(w.id * 32 + lane), phaseBefore);
  return true;
}

bool CtaExecutor::checkMulticastMask(uint64_t mask, llvm::SMLoc loc) {
  int64_t size = cluster_ ? static_cast<int64_t>(cluster_->ctas.size()) : 1;
  if (mask == 0 || (size < 64 && mask >> size))
    return fail(loc, fmt::format("multicast mask 0x{:x} names no CTA or CTAs outside the "
                                 "cluster of {}",
                                 mask, size));
  return true;
}

bool CtaExecutor::arriveMulticast(const AsyncCopy &commit) {
  for (int64_t r = 0; r < 64; ++r) {
    if (!(commit.multicastMask >> r & 1))
      continue;
    CtaExecutor *other = peer(r, commit.loc);
    if (!other)
      return false;
    if (!other->barriers_[commit.barrier].live())
      return fail(commit.loc, fmt::format("tcgen05.commit to {}, which is not initialised in CTA "
                                          "rank {}",
                                          barrierName(commit.barrier), r));
    int64_t phaseBefore = other->barriers_[commit.barrier].phase();
    if (!other->barrierError(other->barriers_[commit.barrier].arrive(1), commit.barrier,
                             commit.loc))
      return adoptFailure(*other);
    other->releaseTo(commit.barrier, static_cast<uint32_t>(commit.agent), phaseBefore);
  }
  return true;
}

bool CtaExecutor::multicast(Warp &w, const CallStmt &c, int lane,
                            const std::function<bool(CtaExecutor &)> &run) {
  const CallArg *maskArg = c.keyword("multicast");
  if (!maskArg)
    return run(*this);
  LaneValues mask;
  if (!eval(maskArg->value, w, 1u << lane, mask))
    return false;
  uint64_t bits = static_cast<uint64_t>(mask.lane[lane].i);
  if (!checkMulticastMask(bits, c.loc))
    return false;
  for (int64_t r = 0; r < 64; ++r) {
    if (!(bits >> r & 1))
      continue;
    CtaExecutor *other = startedPeer(w, r, c.loc);
    if (!other)
      return false;
    // The copy lands in the peer but its issuer is this CTA's thread.
    other->remoteIssuer_ = race_ ? static_cast<int>(raceThread(w.id * 32 + lane)) : -1;
    bool ok = run(*other);
    other->remoteIssuer_ = -1;
    if (!ok)
      return adoptFailure(*other);
  }
  return true;
}

// --- running a cluster --------------------------------------------------------

std::optional<Failure> runUntilBlocked(std::vector<std::unique_ptr<CtaExecutor>> &ctas,
                                       std::mt19937_64 &rng) {
  std::vector<uint8_t> stuck(ctas.size(), 0);
  std::vector<size_t> live;
  while (true) {
    live.clear();
    for (size_t r = 0; r < ctas.size(); ++r)
      if (!ctas[r]->exited() && !stuck[r])
        live.push_back(r);
    if (live.empty())
      break;
    size_t r = live[rng() % live.size()];
    switch (ctas[r]->tick()) {
    case CtaExecutor::Tick::Progress:
      std::fill(stuck.begin(), stuck.end(), 0);
      break;
    case CtaExecutor::Tick::Done:
      if (auto f = ctas[r]->finish())
        return f;
      ctas[r]->markExited();
      std::fill(stuck.begin(), stuck.end(), 0);
      break;
    case CtaExecutor::Tick::Stuck:
      stuck[r] = 1;
      break;
    case CtaExecutor::Tick::Failed:
      return ctas[r]->failure() ? ctas[r]->failure()
                                : Failure{RunResult::Outcome::RuntimeError, "internal error", {}};
    }
  }
  return std::nullopt;
}

std::optional<Failure> runCluster(std::vector<std::unique_ptr<CtaExecutor>> &ctas,
                                  std::mt19937_64 &rng, RaceDetector *race) {
  ClusterState cluster;
  cluster.race = race;
  std::vector<std::array<int64_t, 3>> ids;
  for (size_t r = 0; r < ctas.size(); ++r) {
    cluster.ctas.push_back(ctas[r].get());
    ctas[r]->joinCluster(&cluster, static_cast<int>(r));
    ctas[r]->attachRaceDetector(race);
    ids.push_back(ctas[r]->ctaId());
  }
  if (race) { // one group: the CTAs can synchronise with each other
    const Program &p = ctas[0]->program();
    race->beginCluster(ids, p.threads, p.sharedBytes, targetInfo(p.target).hasTensorMemory,
                       static_cast<int>(p.barrierCount));
  }
  for (auto &cta : ctas) {
    if (auto f = cta->start())
      return f;
    cluster.barrierWarps += cta->program().warps;
  }
  // A CTA that is stuck may be released by a peer; the cluster deadlocks when
  // every CTA that has not finished is stuck.
  if (auto f = runUntilBlocked(ctas, rng))
    return f;
  Failure all;
  for (size_t r = 0; r < ctas.size(); ++r) {
    if (ctas[r]->exited())
      continue;
    Failure f = ctas[r]->deadlock();
    if (all.message.empty()) {
      all = f;
      all.message += " (the other CTAs of its cluster are blocked too or have exited)";
    } else {
      all.notes.push_back(f.message);
      all.notes.insert(all.notes.end(), f.notes.begin(), f.notes.end());
    }
  }
  if (all.message.empty())
    return std::nullopt;
  return all;
}

void runClusters(const Program &program, std::vector<HostTensor> &tensors,
                 const EngineOptions &options, const std::vector<std::array<int64_t, 3>> &ctas,
                 std::mt19937_64 &rng, RaceDetector *race, RunResult &result) {
  const std::array<int64_t, 3> &shape = program.cluster;
  std::vector<std::array<int64_t, 3>> firsts; // each cluster by its first CTA
  for (const auto &cta : ctas) {
    std::array<int64_t, 3> first = {cta[0] - cta[0] % shape[0], cta[1] - cta[1] % shape[1],
                                    cta[2] - cta[2] % shape[2]};
    if (std::find(firsts.begin(), firsts.end(), first) == firsts.end())
      firsts.push_back(first);
  }
  for (const auto &first : firsts) {
    std::vector<std::unique_ptr<CtaExecutor>> members;
    for (int64_t z = 0; z < shape[2]; ++z)
      for (int64_t y = 0; y < shape[1]; ++y)
        for (int64_t x = 0; x < shape[0]; ++x)
          members.push_back(std::make_unique<CtaExecutor>(
              program, tensors, options, result.stats,
              std::array<int64_t, 3>{first[0] + x, first[1] + y, first[2] + z}, rng));
    auto failure = runCluster(members, rng, race);
    result.stats.ctas += static_cast<int64_t>(members.size()); // failed ones ran too
    if (auto f = failure) {
      result.outcome = f->outcome;
      result.message = std::move(f->message);
      result.notes = std::move(f->notes);
      return;
    }
    if (options.afterUnit)
      options.afterUnit(first);
  }
}

} // namespace tilescope::sim
