// Static race detection: for every pair of memory accesses of one kernel
// (shared, global or tensor memory; at least one a write) Z3 looks for two
// distinct threads, loop iterations and sizes under which both touch the
// same element with nothing ordering them:
//  - same thread: program order orders them (except through the async proxy);
//  - a CTA barrier (cta.sync by every thread, or a named barrier.sync whose
//    participants include both sides) between them orders them; inside one
//    loop, adjacent iterations need one on the path from the earlier
//    iteration's access to the later one's, farther ones any in the body;
//  - a one-shot mbarrier handshake outside loops (TMA delivery, arrive or
//    tcgen05.commit, then a wait by the other side) orders them;
//  - an asynchronous access (TMA or cp.async write, a TMA store's source
//    read and global write, wgmma / tcgen05.mma operands) is ordered only
//    through its completion (the copy's mbarrier phase, cp_async.wait,
//    tma.store_wait, wait_group, the MMA's commit), observed by the
//    other side's thread or by a thread that then meets it at a barrier;
//    a barrier after the issue alone does not order it;
//  - global-memory pairs are also checked between two distinct CTAs of the
//    grid, where only a cluster barrier (cluster.sync, or
//    barrier.cluster.arrive then barrier.cluster.wait, by every thread)
//    orders them, and only within a cluster;
//  - a DSMEM access (dsmem.load / dsmem.store with cta = r) touches CTA r's
//    shared memory: such pairs are checked between the threads of any two
//    CTAs of the cluster (or one), and only cluster barriers order them;
//  - two calls of one scoped tile primitive's group (wg.copy then wg.cast by
//    the same warpgroup) are ordered by the primitive's dispatch;
//  - accesses of different roles to a pipeline stage in loops are ordered by
//    mbarriers: those pairs are the barrier proofs' read-after-write and
//    write-after-read obligations (BarrierProofs.h) and are not repeated here.
// Elements are compared in logical coordinates: the layout proofs
// (KernelLayouts.h) establish that distinct elements never share a physical
// slot, so logical overlap is exactly physical overlap.
//
// The async-proxy rule: a generic-proxy write to shared memory (a store, a
// tile primitive through st.shared / stmatrix) that a later TMA store, wgmma
// or tcgen05 operand reads must be followed by fence.proxy.async in the
// writing threads; otherwise the read is reported with the write. A
// generic-proxy write to global memory (a store, a tile primitive, the local
// side of device.get, a collective's output) that a later TMA copy reads
// (cp.async.bulk: the async proxy) needs fence.proxy.async(space =
// "global"): by the writing threads after the write, or by the copy's
// issuing threads after an acquiring event (a barrier or wait) that follows
// the write and before the copy (PTX ISA, memory consistency model: a proxy
// fence in the causality order between the two proxies). The shared fence
// (no space) does not order global writes.
//
// Depends on ir/ and verifier/ (the skeleton); Z3 stays inside the .cpp.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Stmt.h"
#include "sync/BarrierSkeleton.h"

#include <string>
#include <vector>

namespace tilescope {

enum class RaceKind : uint8_t { DataRace, MissingProxyFence };

struct RaceFinding {
  RaceKind kind;
  llvm::SMLoc first, second; // the two access sites (write first where one is)
  std::string message;       // with the witness
};

struct RaceReport {
  std::vector<RaceFinding> findings;
  unsigned pairsProved = 0;            // proved race-free for all sizes
  unsigned pairsOrderedByMbarrier = 0; // left to the barrier proofs
  std::vector<std::pair<llvm::SMLoc, std::string>> notChecked;
  bool clean() const { return findings.empty(); }
};

struct RaceOptions {
  unsigned timeoutMs = 4000;
  // Per-thread accesses whose one-dimensional regions read only the thread
  // index are compared by listing every thread's elements first: disjoint
  // for every two distinct threads decides the pair. With this above 0, the
  // thread pairs that do meet (at most this many) replace the element
  // constraint in the query (PTX's swizzled addresses, whose mod terms are
  // slow in Z3); 0 keeps the element constraint.
  size_t threadPairsListed = 0;
  // PTX (ptx check): a write-write race between two lanes of one warp in the
  // same store instruction (same iteration) is not a finding but not
  // checked: one of the lanes' values lands (CUDA C++ Programming Guide), so
  // it is harmless exactly when they store the same value, which the values
  // lifted from PTX do not say (a replicated register the tile IR copies once
  // is stored by every replica in the lowered code). The IR keeps it a race.
  bool sameWarpStoresUndecided = false;
};

RaceReport checkStaticRaces(const Kernel &kernel, const RaceOptions &options = {});
// The same check on a skeleton made elsewhere (the accesses lifted from PTX,
// ptx/Lift.h).
RaceReport checkStaticRaces(const BarrierSkeleton &skeleton, const RaceOptions &options = {});

// Errors (with a note at the second site) and warnings for what was not
// checked; returns the number of findings.
unsigned reportStaticRaces(const RaceReport &report, Diagnostics &diag);

// For `tilescope check`: check and report; returns the number of findings.
unsigned verifyStaticRaces(const Kernel &kernel, Diagnostics &diag);

} // namespace tilescope
