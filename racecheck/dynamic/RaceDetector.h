// Dynamic race detection on the simulation: happens-before with vector
// clocks over the bytes the kernel touches (the dynamic half of race
// detection; docs/semantics.md states the synchronisation it models).
//
// Agents. Every thread of the running group is an agent: a group is one CTA,
// or the CTAs of one cluster, which run together and can synchronise (thread
// t of the CTA of cluster rank r is agent r * threads + t). Every
// asynchronous operation (a TMA copy, a wgmma.mma_async, a tcgen05.mma, a
// tcgen05.commit unit) is an agent too: its clock is the issuing thread's
// clock at issue (joined, for tensor-core operations, with the operations of
// the same pipe issued before it, which run in order), and its reads and
// writes happen when the simulator completes it. The issuing thread's time
// advances at issue, so what it does afterwards is not ordered before the
// operation.
//
// Happens-before. A thread's time advances at each release. Rendezvous
// (cta.sync, named barriers, collective tile primitives but wg.gemm, which
// runs as a unit: beginUnit), mbarrier phases
// (of any CTA of the cluster: remote arrivals and multicast commits release
// into the peer's barrier) and the cluster barrier collect the clocks of the
// agents that release into them (arrivals, transaction completions, tcgen05
// commits) and hand them to the agents that acquire (waits that observe the
// phase, the warps that leave the rendezvous). wgmma.wait_group acquires the
// operations of the groups it retires.
//
// tcgen05 thread-sync fences (docs/barriers.md, "tcgen05 thread-sync
// fences"; the static rule is verifier/Tcgen05Fences.h). A tcgen05.mma,
// tcgen05.ld or tcgen05.st of a thread is ordered after what the thread
// acquired only up to its last tcgen05.fence_after_thread_sync: the
// operation's clock is the thread's clock as of that fence (with the
// thread's own time now, so its own earlier accesses stay before it). A
// thread's tcgen05.ld / tcgen05.st accesses of tensor memory are made by a
// second agent of the thread (tcgen05Agent) whose time advances only at the
// thread's tcgen05.fence_before_thread_sync, where the thread learns it: what
// the thread releases afterwards covers the loads and stores before that
// fence, not those after it. The thread's own later accesses stay ordered
// after them (program order). tcgen05.commit needs no fence (it tracks the
// MMAs it commits) and keeps the thread's current clock.
//
// Memory. Shared memory per byte and tensor memory per 32-bit cell, both per
// CTA of the group (a peer reaches them through distributed shared memory or
// the cta_group::2 tensor core); global memory per tensor element for the
// whole run, so two CTAs of different groups that write the same element race
// (they share no synchronisation). An access that is not ordered after a
// conflicting one (two accesses, one a write) is a race. An asynchronous-proxy
// read (wgmma, tcgen05.mma, a TMA store source) of shared bytes written
// through the generic proxy also needs a fence.proxy.async by the writing
// thread between the write and the operation's issue; a TMA copy's read of
// global elements written through the generic proxy needs the global proxy
// fence (space = "global"), by the writing thread between the write and
// the copy's issue, or by the issuing thread after it observed the write
// and before the issue (PTX ISA, memory consistency model: proxy fences in
// the causality order). Without one it is reported as a missing fence.
//
// Depends on LLVM's SMLoc and the standard library.
#pragma once

#include "ir/Stmt.h"
#include "racecheck/dynamic/RaceShadow.h"
#include "racecheck/dynamic/VectorClock.h"

#include <llvm/Support/SMLoc.h>

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace tilescope::sim {

// The memory an access is in: the one memory-scope enum (MemScope,
// ir/Stmt.h; its name is memScopeName's), of which the detector sees
// Shared, Global and Tmem (registers are private to a thread).
using RaceSpace = MemScope;

enum class RaceType : uint8_t {
  DataRace,          // two threads, unordered
  AsyncRace,         // a thread and an asynchronous operation (or two), unordered
  MissingProxyFence, // ordered, but a generic write read by the async proxy unfenced
  OutOfView,         // an access outside the part of memory the thread may reach
};
std::string_view raceTypeName(RaceType k);

// Tcgen05LdSt: not an operation of its own but the tensor-memory side of a
// thread's tcgen05.ld / tcgen05.st (tcgen05Agent below); reports name the thread.
enum class AsyncKind : uint8_t {
  TmaCopy,
  TmaStore,
  CpAsync,
  Wgmma,
  Tcgen05Mma,
  Tcgen05Commit,
  Tcgen05LdSt
};
std::string_view asyncKindName(AsyncKind k);
// Whether operations of this kind read shared memory through the async proxy.
bool readsThroughAsyncProxy(AsyncKind k);

// Who made an access: thread `agent` of CTA number `cta` (CTAs of a run are
// numbered in the order they start), or an asynchronous operation issued by
// thread `issuer` of CTA `cta` at `issuedAt`. Thread numbers are the CTA's.
struct RaceSide {
  uint32_t cta = 0;
  uint32_t agent = 0;
  bool write = false;
  llvm::SMLoc loc;
  bool async = false;
  AsyncKind kind = AsyncKind::TmaCopy;
  uint32_t issuer = 0;
  llvm::SMLoc issuedAt;
};

struct Race {
  RaceType kind = RaceType::DataRace;
  RaceSpace space = RaceSpace::Shared;
  int object = -1;     // the buffer of the second access
  int64_t element = 0; // its logical element (row-major index into the buffer)
  int64_t address = 0; // shared byte, global element, or tensor-memory cell (lane * 512 + column)
  uint32_t cta = 0;    // the CTA whose memory (for global memory: the second access's)
  RaceSide first, second;
};

class RaceDetector {
public:
  static constexpr size_t kMaxRaces = 32;

  // A new group of CTAs (a cluster, by rank) that run together, each with
  // `threads` thread agents with fresh clocks, shared memory of `sharedBytes`,
  // tensor memory when `tensorMemory`, `barriers` mbarriers. Global memory
  // keeps its history from the groups before.
  void beginCluster(const std::vector<std::array<int64_t, 3>> &ctaIds, int64_t threads,
                    int64_t sharedBytes, bool tensorMemory, int barriers);
  void beginCta(std::array<int64_t, 3> ctaId, int64_t threads, int64_t sharedBytes,
                bool tensorMemory, int barriers) {
    beginCluster({ctaId}, threads, sharedBytes, tensorMemory, barriers);
  }
  // The number of the group's first CTA.
  uint32_t ctaNumber() const { return firstCta_; }
  std::array<int64_t, 3> ctaId(uint32_t number) const { return ctaIds_[number]; }

  // --- agents ---
  uint32_t threads() const { return threads_; }
  // The agent of thread `thread` of the CTA of rank `rank` in the group.
  uint32_t threadAgent(int rank, int64_t thread) const {
    return static_cast<uint32_t>(rank * threads_ + thread);
  }
  bool isAsync(uint32_t agent) const { return agent >= groupThreads_; }
  const VectorClock &clock(uint32_t agent) const { return clocks_[agent]; }
  // A new asynchronous operation issued by thread `issuer` (joined with
  // `after`, the operations it runs behind, when given).
  uint32_t issueAsync(AsyncKind kind, uint32_t issuer, llvm::SMLoc loc,
                      const VectorClock *after = nullptr);

  // --- synchronisation ---
  // into ⊔= agent's clock; a thread's time then advances.
  void release(uint32_t agent, VectorClock &into);
  void acquire(uint32_t thread, const VectorClock &from);
  // Threads [begin, end) meet: each ends with the join of all.
  void syncThreads(uint32_t begin, uint32_t end);
  // A collective that lowers to no barrier (wg.gemm: wgmma instructions),
  // run by threads [begin, end) as one unit whose accesses are made as
  // `begin`: beginUnit gives `begin` the join of the threads' clocks (the
  // unit comes after what each did before it) and returns its own clock;
  // endUnit gives it back and lets each thread acquire only the unit's time,
  // so that the unit's accesses come before what each thread does next, but
  // no thread's earlier accesses before another's later ones.
  VectorClock beginUnit(uint32_t begin, uint32_t end);
  void endUnit(uint32_t begin, uint32_t end, VectorClock own);
  // fence.proxy.async by `thread`; `global`: the global one (space =
  // "global"), which also orders generic-proxy global writes before TMA
  // copies that read them.
  void fenceProxyAsync(uint32_t thread, bool global = false);
  // tcgen05.fence_after_thread_sync / tcgen05.fence_before_thread_sync by
  // `thread` (see "tcgen05 thread-sync fences" above).
  void tcgen05FenceAfter(uint32_t thread);
  void tcgen05FenceBefore(uint32_t thread);
  // The agent that makes `thread`'s tcgen05.ld / tcgen05.st accesses of
  // tensor memory (made at the first one, at `loc`), its clock the thread's
  // view as of its last after-fence.
  uint32_t tcgen05Agent(uint32_t thread, llvm::SMLoc loc);
  // The kind of asynchronous operation `agent` of the running group.
  AsyncKind asyncKind(uint32_t agent) const {
    return groups_.back().async[agent - groupThreads_].kind;
  }
  uint32_t asyncIssuer(uint32_t agent) const {
    return groups_.back().async[agent - groupThreads_].issuer;
  }
  // An arrival (or transaction completion) by `agent` on mbarrier `barrier` of
  // the CTA of rank `rank` whose phase `phaseBefore` completed with it when
  // `completed`.
  void mbarrierRelease(int barrier, uint32_t agent, int64_t phaseBefore, bool completed,
                       int rank = 0);
  // A wait by `thread` that observed the completion of the phase of `parity`
  // of mbarrier `barrier` of the CTA of rank `rank`.
  void mbarrierAcquire(uint32_t thread, int barrier, int64_t parity, int rank = 0);
  // The cluster barrier: an arrival by `thread`; the completion of the phase
  // (every warp that has not exited arrived); a wait that saw it complete.
  // A warp cannot arrive again before it waited, so a wait always observes
  // the last completed phase.
  void clusterArrive(uint32_t thread);
  void clusterPhaseCompleted();
  void clusterWait(uint32_t thread);

  // --- accesses ---
  // Where an access lands: `units` consecutive cells from `address` of
  // `space`, for element `element` of buffer `object` (global memory is
  // shadowed per buffer and element; `address` is the element there), in the
  // memory of the CTA of rank `rank` (shared and tensor memory).
  struct Target {
    RaceSpace space;
    int object;
    int64_t element;
    int64_t address;
    int units;
    int rank = 0;
  };
  void access(const Target &t, bool write, uint32_t agent, llvm::SMLoc loc);
  // An access the thread may not make at all (outside its view).
  void outOfView(const Target &t, bool write, uint32_t agent, llvm::SMLoc loc);

  const std::vector<Race> &races() const { return races_; }

private:
  void accessCell(ShadowCell &cell, ReadSets &sets, const Target &t, int64_t address, bool write,
                  uint32_t agent, llvm::SMLoc loc);
  bool fenced(uint32_t writer, uint32_t writeTime, uint32_t seen) const;
  bool globalFenced(const Epoch &write, uint32_t op) const;
  RaceSide side(const Epoch &e, bool write) const;
  // `thread`'s clock as of its last tcgen05.fence_after_thread_sync, with its
  // own time (and its tcgen05Agent's) now.
  VectorClock tcgen05View(uint32_t thread) const;
  void report(RaceType kind, const Target &t, int64_t address, const RaceSide &first,
              const RaceSide &second);

  struct AsyncInfo {
    AsyncKind kind;
    uint32_t issuer; // the issuing thread's agent
    llvm::SMLoc loc;
  };
  // What a report needs of a group after it ended (global memory keeps its
  // epochs): its first CTA, threads per CTA and operations.
  struct Group {
    uint32_t firstCta = 0;
    uint32_t threads = 0;
    uint32_t threadAgents = 0;    // threads x CTAs
    std::vector<AsyncInfo> async; // agent - threadAgents -> info
  };

  uint32_t threads_ = 0;      // per CTA
  uint32_t groupThreads_ = 0; // thread agents of the group
  uint32_t group_ = 0, firstCta_ = 0;
  int barriersPerCta_ = 0;
  bool started_ = false;
  std::vector<std::array<int64_t, 3>> ctaIds_;
  std::vector<Group> groups_;
  std::vector<VectorClock> clocks_;                    // threads, then operations
  std::vector<std::vector<uint32_t>> fences_;          // per thread: times of fence.proxy.async
  // per thread: the global proxy fences, each with the thread's clock then
  // (what it had observed)
  std::vector<std::vector<VectorClock>> globalFences_;
  std::vector<VectorClock> afterFence_; // per thread: its clock at its last tcgen05 after-fence
  std::vector<uint32_t> ldSt_;          // per thread: its tcgen05Agent, or Epoch::kNoAgent
  std::vector<VectorClock> barrierAccum_;              // per mbarrier (rank-major): this phase
  std::vector<std::array<VectorClock, 2>> phaseClock_; // per mbarrier: last phase by parity
  VectorClock clusterAccum_, clusterPhase_;            // the cluster barrier
  std::vector<FlatShadow> shared_, tmem_;              // per rank
  PagedShadow global_;
  ReadSets ctaReads_, globalReads_;
  std::vector<Race> races_;
};

} // namespace tilescope::sim
