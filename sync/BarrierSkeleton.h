// The synchronisation skeleton of a kernel: what the barrier proofs
// (BarrierProofs.h) and the static race check (racecheck/) reason about.
//
// Extraction walks the kernel body once and keeps, in program order, every
// statement that synchronises or touches shared, global or tensor memory:
// mbarrier inits, arrivals (with their count and how many threads execute
// them), expect_tx and the bytes TMA copies deliver, waits with their parity,
// CTA and named barriers, fences, wgmma and tcgen05 operations, and the memory
// regions each statement reads and writes. Let bindings are substituted, so
// every expression left is over loop variables, shape symbols, blockIdx and
// thread indices.
//
// Which threads execute an event is computed exactly: the conditions of the
// enclosing `if`s that depend only on thread indices (wgid, warpid,
// tid_in_wg, laneid, elect_sync(), ...) are evaluated for every thread of the
// launch; conditions over sizes and loop variables stay symbolic (`guards`).
// A *role* is the set of threads that runs a piece of code as one sequential
// process: the threads selected by warp-uniform (or coarser) conditions where
// the outermost enclosing loop starts (or at the event, outside loops), e.g.
// the producer warpgroup and the two consumer warpgroups of a Hopper GEMM.
//
// Depends on ir/ only; no Z3 here.
#pragma once

#include "ir/Intrinsics.h"
#include "ir/Stmt.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilescope {

// A set of threads of one CTA, by thread index.
class ThreadSet {
public:
  ThreadSet() = default;
  explicit ThreadSet(int64_t threads, bool all = false) : member_(size_t(threads), all) {}
  void add(int64_t tx) { member_[size_t(tx)] = true; }
  bool contains(int64_t tx) const {
    return tx >= 0 && size_t(tx) < member_.size() && member_[size_t(tx)];
  }
  int64_t count() const;
  bool empty() const { return count() == 0; }
  int64_t launchThreads() const { return int64_t(member_.size()); }
  bool subsetOf(const ThreadSet &o) const;
  bool operator==(const ThreadSet &o) const { return member_ == o.member_; }
  // Every thread of each warp (32) or warpgroup (128) that has one here.
  ThreadSet widened(int64_t groupSize) const;
  // How many warps / warpgroups have at least one thread here.
  int64_t groupsTouched(int64_t groupSize) const;
  // "warpgroup 0", "warpgroups 1-2", "thread 0 of warpgroups 1-2",
  // "threads 0-383", "thread 0".
  std::string describe() const;

private:
  std::vector<bool> member_;
};

enum class SyncKind : uint8_t {
  MbarInit,
  MbarArrive,     // mbarrier.arrive: `amount` arrivals per executing thread
  MbarExpectTx,   // expect_tx / arrive_expect_tx (then also an arrival): `amount` bytes
  MbarCompleteTx, // explicit complete_tx: `amount` bytes
  MbarWait,       // `parity`
  MbarInval,
  TxDelivery,    // a TMA / bulk copy signalling `barrier`: `amount` bytes
  Tcgen05Commit, // an arrival on `barrier` when prior tcgen05 ops complete
  CtaSync,       // cta.sync
  WarpSync,      // warp.sync (__syncwarp): orders the lanes of each executing warp
  NamedSync,     // barrier.sync(id, threads)
  NamedArrive,   // barrier.arrive(id, threads)
  FenceProxyAsync,
  FenceMbarrierInit,
  WgmmaFence,
  WgmmaMma,
  WgmmaCommit,
  WgmmaWait, // `amount`: groups allowed to stay pending
  // tcgen05.alloc / dealloc: also a write of the whole allocation (its
  // accesses), so that the race checks order every other access of the
  // tensor memory before the dealloc and after the alloc.
  Tcgen05Alloc,
  Tcgen05Dealloc,
  Tcgen05Relinquish, // tcgen05.relinquish_alloc_permit: no alloc of the CTA after it
  Tcgen05Ld,
  Tcgen05WaitLd,
  // tcgen05.fence_before_thread_sync / fence_after_thread_sync (`call` says
  // which): order the thread's asynchronous tcgen05 operations around its
  // thread synchronisation (verifier/Tcgen05Fences.h).
  Tcgen05Fence,
  ClusterArrive, // barrier.cluster.arrive
  ClusterWait,   // barrier.cluster.wait
  CpAsyncCommit, // cp_async.commit (cp_async.wait_all: a commit, then a wait of 0)
  CpAsyncWait,   // cp_async.wait: `amount` groups allowed to stay pending
  // tma.store_commit closes the thread's bulk group; tma.store_wait leaves
  // `amount` bulk groups pending (readOnly: `read = true`).
  TmaStoreCommit,
  TmaStoreWait,
  Access, // only memory accesses
};
std::string_view syncKindName(SyncKind k);

// A region of a buffer, per dimension [begin, begin + extent).
struct RegionDim {
  Expr begin, extent;
};

struct MemoryAccess {
  std::string buffer;
  MemScope scope = MemScope::Shared;
  Dtype dtype = Dtype::f32;
  bool write = false;
  // Read or written by the async proxy (TMA, wgmma / tcgen05 operands).
  bool asyncProxy = false;
  // Element accesses of one thread (stores, loads) versus a whole region
  // handled by the executing group (tile primitives, copies).
  bool perThread = false;
  std::vector<RegionDim> region;
  // dsmem.load / dsmem.store: the rank, in the cluster, of the CTA whose
  // shared memory is accessed (null: the executing CTA's own).
  Expr remoteCta;
  // The stage: the first subscript when it is a point on a leading dimension
  // of extent `stages` (pipeline rings `As[s]`); else 0 of 1.
  Expr stage;
  int64_t stages = 1;
};

struct BarrierRef {
  std::string array; // empty: none
  Expr index;        // IntImm 0 for a single barrier
};

struct SyncEvent {
  SyncKind kind = SyncKind::Access;
  llvm::SMLoc loc;
  std::string what; // the call as written, for messages: "mbarrier.wait"
  IntrinsicId call = IntrinsicId::Unknown; // the call's entry in ir/Intrinsics.h
  int role = -1;
  int order = 0; // program order (textual, pre-order): later is larger
  int loop = -1; // innermost enclosing loop, -1 outside loops
  ExecScope scope = ExecScope::Thread;
  ThreadSet threads;
  std::vector<Expr> guards; // conditions over sizes and loop variables
  // Conditions that mix thread indices with sizes or loop variables
  // (`blockIdx.x * 256 + threadIdx.x < N`), kept only on the plain accesses
  // of a branch without synchronisation (BarrierSkeleton.cpp, `plainBody`).
  // The write-coverage, bounds and race queries read them (allGuards); the
  // protocol proofs leave them out (more executors than run).
  std::vector<Expr> threadGuards;
  // guards, then threadGuards: every condition under which the event runs.
  std::vector<Expr> allGuards() const {
    std::vector<Expr> out = guards;
    out.insert(out.end(), threadGuards.begin(), threadGuards.end());
    return out;
  }
  BarrierRef barrier;
  Expr parity; // waits
  Expr amount; // arrivals per thread, bytes, wait_group n, init count
  int64_t namedId = -1, namedThreads = -1;
  // tma.store_wait(n, read = true): the groups' sources have been read; their
  // global writes may still be pending.
  bool readOnly = false;
  // fence.proxy.async(space = "global"): orders the async proxy's global
  // writes (a completed TMA store's) before the thread's later accesses.
  bool globalProxy = false;
  // An unqualified call of a warp-collective instruction (`.sync.aligned`:
  // tcgen05.ld, tcgen05.st): each warp issues it once and every lane
  // handles its own slice of the warp's region.
  bool warpCollective = false;
  std::vector<MemoryAccess> accesses;
  // Barrier traffic between the CTAs of a cluster (every CTA runs this code
  // with its own clusterCtaIdx): `remoteCta`, the rank of the CTA whose
  // barrier `mbarrier.arrive(bar, cta = r)` arrives on; `multicast`, the CTA
  // mask of a `tma.load` / `tcgen05.commit` whose bytes / arrival reach the
  // barrier of that name in every CTA of the mask. Null: the executing
  // CTA's own barrier.
  Expr remoteCta, multicast;
  bool crossCta() const { return remoteCta || multicast; }
  // How many times one execution counts: an unscoped call is issued by
  // each of its threads; a scoped one once per warp / warpgroup / CTA.
  int64_t issuers() const;
};

struct SkeletonLoop {
  std::string var;
  Expr begin, end, step;
  int parent = -1;
  llvm::SMLoc loc;
  Expr trip() const; // max(0, ceil((end - begin) / step))
};

struct Role {
  ThreadSet threads;
  llvm::SMLoc loc; // where its code starts
  std::string describe() const { return threads.describe(); }
};

struct BarrierArray {
  std::string name;
  int64_t size = 1;
  std::optional<int64_t> count; // initialised by the declaration with this count
  llvm::SMLoc loc;
};

struct SkeletonBuffer {
  std::string name;
  MemScope scope = MemScope::Shared;
  Dtype dtype = Dtype::f32;
  std::vector<Expr> shape;
  llvm::SMLoc loc;
};

struct BarrierSkeleton {
  std::string kernel;
  int64_t threads = 0;
  TargetKind target = TargetKind::sm_90a;
  std::vector<Expr> grid;           // CTAs per dimension (launch grid)
  std::vector<Expr> cluster;        // CTAs per cluster per dimension (empty: none)
  std::vector<Expr> constraints;    // the `where` clause
  std::vector<std::string> symbols; // shape symbols and scalar parameters
  std::vector<Role> roles;
  std::vector<SkeletonLoop> loops;
  std::vector<SyncEvent> events;
  std::map<std::string, BarrierArray> barriers;
  std::map<std::string, SkeletonBuffer> buffers;
  // What extraction could not model, with where: a proof that needs it is
  // reported as not proved rather than trusted.
  std::vector<std::pair<llvm::SMLoc, std::string>> unsupported;

  const BarrierArray *barrier(const std::string &name) const;
  // The loops enclosing an event, outermost first.
  std::vector<int> loopChain(const SyncEvent &e) const;
  // "loop k (line 17)" style names are the IR's own: the loop variable.
  std::string print() const;
};

BarrierSkeleton extractBarrierSkeleton(const Kernel &kernel);

// The clusters the barrier checks model: a constant extent along one axis
// (the others 1), so a CTA's rank is clusterCtaIdx along that axis and its
// cluster's CTAs have consecutive blockIdx there. Without clusters: axis 0,
// extent 1. Nothing for other shapes (symbolic or several axes above 1).
struct ClusterShape {
  int axis = 0;
  int64_t extent = 1;
};
std::optional<ClusterShape> clusterShapeOf(const BarrierSkeleton &skeleton);

// The threads an event synchronises: its executing threads, widened to the
// whole warp / warpgroup / CTA of its execution scope.
ThreadSet coverOf(const SyncEvent &e);

// Bytes of a region of `dtype` elements: the product of the extents times
// the element width; null when an extent is not an integer expression.
Expr regionBytes(const std::vector<RegionDim> &region, Dtype dtype);

} // namespace tilescope
