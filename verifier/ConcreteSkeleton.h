// The synchronisation skeleton (BarrierSkeleton.h) unrolled at one size
// assignment and one CTA, or the CTAs of one cluster: what the exhaustive
// fallback (BarrierExplorer.h) explores when a symbolic proof is out of reach.
//
// Clusters. Every CTA of the cluster runs the same code with its own rank as
// clusterCtaIdx along the cluster's axis (ClusterShape; blockIdx there is the
// cluster's first plus the rank): each has
// its own processes, barrier elements and buffers. A remote arrival
// (`cta = r`) lands on CTA r's element; a multicast copy or tcgen05.commit is
// one step per CTA of its mask, each delivering to (and writing the buffer
// of) that CTA. cluster.sync and the split cluster barrier join every thread
// of every CTA.
//
// Processes. The CTA's threads are cut into units (a warp, or a warpgroup
// where a warpgroup-wide call runs); units held by the same loop roles and
// the same whole-unit event thread sets (warp-uniform conditions) are one
// sequential process, so roles that share a loop stay apart. An event
// belongs to every process holding some of its threads, with its arrivals
// counted over those threads only (a scoped call once, by the process of
// its first thread). Steps are the events in program order, loops unrolled
// with their concrete trip counts and guards evaluated; barrier elements,
// parities, arrival counts, bytes and pipeline stages become numbers.
// mbarrier.init is a step (one per element it initialises); an element the
// declaration does not initialise has no count until one runs.
//
// Tracked accesses: accesses to shared or tensor memory, inside loops, of a
// buffer that two processes touch in loops (the pipeline stages of the
// symbolic proofs). Two of them conflict when they touch the same buffer and
// stage (a whole-buffer access, or a stage the threads of its process do not
// agree on, is every stage), their regions (bounding boxes over the
// process's threads) overlap, and one writes.
//
// Depends on ir/ and sync/BarrierSkeleton.h; no Z3.
#pragma once

#include "sync/BarrierSkeleton.h"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tilescope {

// The stage of a whole-buffer access, or of one whose stage differs between
// the threads of its process: it conflicts with every stage.
inline constexpr int64_t kAnyStage = -1;

struct ConcreteAccess {
  std::string buffer;
  int cta = 0; // the rank, in the cluster, of the CTA whose buffer it is
  int64_t stage = kAnyStage;
  bool write = false;
  // The region, per dimension [first, last): the smallest interval holding
  // it for every thread of the process (the halves of a stage two CTAs
  // multicast into, or two warpgroups copy into); empty when it does not
  // evaluate at these sizes: all of the stage.
  std::vector<std::pair<int64_t, int64_t>> box;
  bool overlaps(const ConcreteAccess &o) const;
};

struct ConcreteStep {
  const SyncEvent *event = nullptr;
  int element = -1;       // barrier element (ConcreteSkeleton::elements), -1: none
  int64_t parity = 0;     // waits
  int64_t amount = 0;     // arrivals (all issuers), bytes, groups kept by wait_group, init count
  int64_t expectBytes = 0; // arrive_expect_tx: the bytes announced with the arrival
  int64_t round = 0;      // waits: how many earlier waits of this process on the element
  int64_t syncThreads = 0; // cta.sync / named barriers: threads of this process arriving
  int cta = 0;             // the rank of the executing CTA in the cluster
  std::vector<ConcreteAccess> accesses;
  std::string iteration; // "k = 3", "t = 1, k = 0", or "its one execution (outside loops)"
};

struct ConcreteProcess {
  ThreadSet threads;
  int cta = 0; // its CTA's rank in the cluster
  std::vector<ConcreteStep> steps;
};

struct ConcreteElement {
  std::string array;
  int64_t index = 0;
  int64_t count = 0; // arrivals per phase, when the declaration initialises it
  int cta = 0;       // the rank of the CTA it belongs to
  // Initialised by its declaration (`mbarrier full[3](count = 1)`); else
  // only by an mbarrier.init step of the run (then with that step's count).
  bool declared = false;
};

struct ConcreteSkeleton {
  std::vector<ConcreteProcess> processes;
  std::vector<ConcreteElement> elements;
  // Set when the skeleton could not be unrolled at these sizes: why, and
  // where. `outOfRange` marks a barrier index outside its array (a finding).
  std::string error;
  llvm::SMLoc errorLoc;
  bool outOfRange = false;
  // The command's budget ran out while unrolling (`error` says so).
  bool budgetExceeded = false;
  bool usesBlockIdx = false; // some value read blockIdx: every CTA needs its own run
  int64_t clusterCtas = 1;   // CTAs unrolled together (the cluster's extent)
  std::string describe(const ConcreteStep &s) const; // "wait full[0] (parity 1) at k = 4"
  // "warpgroup 0", or "warpgroup 0 of CTA 1" in a cluster.
  std::string processName(size_t p) const;
  // "full[0]", or "full[0] of CTA 1" in a cluster.
  std::string elementName(int e) const;
};

// The processes of a CTA, in the order the fallback explores them. The
// threads are cut into units, each a warp, or a warpgroup when some
// warpgroup-wide call (wgmma, wg.copy) runs there: one operation of all its
// warps, never split. Units are grouped by which loop roles and which events
// of whole units (a warp-uniform condition selected them) hold them: units
// that agree on all of them are one process. So two roles that share a loop
// (a producer warp and a consumer warpgroup in a tile loop with an
// all-thread epilogue) are two processes, whose interleavings are explored,
// and an elect_sync() or threadIdx.x == 0 event runs in the process of its
// unit, which also runs that unit's siblings in lockstep (docs/barriers.md,
// Limits). The symbolic proofs read the same partition to tell which
// accesses of one role may interleave (BarrierStages.cpp).
std::vector<ThreadSet> skeletonProcesses(const BarrierSkeleton &skeleton);

// `sizes` binds the shape symbols (and scalars); `cta` the block indices
// (of the cluster's first CTA when `clusterCtas` > 1: CTAs cta.x ..
// cta.x + clusterCtas - 1 run together). Unrolling stops with an error past
// `stepCap` steps in all, or once the command's budget (ir/Budget.h) has run
// out (polled every few thousand iterations).
ConcreteSkeleton unrollSkeleton(const BarrierSkeleton &skeleton,
                                const std::map<std::string, int64_t> &sizes,
                                const std::array<int64_t, 3> &cta, size_t stepCap,
                                int64_t clusterCtas = 1);

} // namespace tilescope
