// Internal to the engine: the state of one CTA while it runs (warps with their
// interpreter stacks, shared memory bytes, registers, mbarriers, copies in
// flight) and the executor that steps it. Engine.cpp drives statements and
// scheduling; Primitives.cpp gives tile primitives their reference semantics
// (elements move and combine according to the operand layouts).
#pragma once

#include "simulator/Engine.h"
#include "simulator/ExprCode.h"
#include "simulator/LaneAccess.h"
#include "racecheck/dynamic/RaceDetector.h"
#include "simulator/Value.h"
#include "sync/Mbarrier.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/STLFunctionalExtras.h>

#include <map>
#include <unordered_map>
#include <memory>
#include <optional>
#include <random>
#include <span>

namespace tilescope::sim {

// A rectangular part of a buffer: a start per buffer dimension and the
// dimensions that remain (a point subscript drops one).
struct Region {
  int buffer = -1;
  std::vector<int64_t> start;  // per buffer dimension
  std::vector<int64_t> extent; // per remaining dimension (the region's shape)
  std::vector<int> dimOf;      // buffer dimension of each remaining dimension
  llvm::SMLoc loc;

  int64_t elements() const;
  // The buffer coordinate of element `idx` of the region (row-major).
  void coordOf(int64_t idx, std::vector<int64_t> &coord) const;
};

struct Frame {
  const Block *block = nullptr;
  size_t pc = 0;
  uint32_t mask = 0;
  const For *loop = nullptr; // a loop body: at its end the loop steps
  int slot = -1;
  std::array<int64_t, kWarpSize> end{}, step{};
  const StmtCode *code = nullptr; // the block compiled (ExprCode.h); found on first step if null
  bool uniform = false;           // a loop body whose bounds are warp-uniform
  bool fusedBody = false;         // ... and only fused stores in it (FusedLoop.cpp)
};

// A lane's device.wait: element `flat` of tensor parameter `tensor` of its
// own device must reach `value`.
struct DeviceFlagWait {
  int tensor = -1;
  int64_t flat = 0;
  uint32_t value = 0;
  int64_t thread = 0;
};

struct Warp {
  enum class State : uint8_t { Ready, WaitBarrier, WaitCollective, Done } state = State::Ready;
  int id = 0;
  uint32_t fullMask = 0;
  std::vector<Frame> stack;
  std::vector<LaneValues> slots;
  // Each write of a slot gives it a new version (the fused stores' offsets
  // are reused while the slots they read keep theirs).
  std::vector<uint64_t> slotVersion;
  uint64_t slotWrites = 0;
  std::vector<FusedOffsets> fusedOffsets; // by FusedAccess::cache
  // Owned accesses read through uniform slots (FusedAccess::byValue): their
  // offsets by the slots' values, for the warp's life (one CTA).
  std::unordered_map<OwnedOffsetsKey, std::array<int64_t, kWarpSize>, OwnedOffsetsKey::Hash>
      ownedOffsets;
  void wrote(int slot) { slotVersion[slot] = ++slotWrites; }
  const StmtNode *blockedAt = nullptr;
  // barrier.cluster: the phase this warp arrived in, -1 when it has not
  // arrived; waiting for that phase to complete when `clusterWait`.
  int64_t clusterArrivedPhase = -1;
  bool clusterWait = false;
  // Whether the warp has passed a cluster barrier wait: only then does it know
  // that its peers have started (and initialised their barriers).
  bool clusterPassed = false;
  // A cta_group = 2 tcgen05.alloc / dealloc waiting for the peer CTA's warp.
  bool pairWait = false;
  std::vector<std::pair<int, int64_t>> waits; // (barrier, parity) of each waiting lane
  // A cp.async / bulk-store group wait (AsyncGroups.cpp): kind -1 when none.
  struct GroupWait {
    int kind = -1;
    int64_t keep = 0;  // groups that may stay pending
    bool read = false; // bulk stores: only their source reads must be done
    uint32_t mask = 0; // the waiting lanes
  } groupWait;
  int64_t steps = 0;
  // device.wait (Devices.cpp): the flags each waiting lane waits on.
  std::vector<DeviceFlagWait> deviceWaits;
  // device.warp_allreduce (Devices.cpp): the phase of this warp's channel it
  // waits to complete, -1 none.
  int64_t channelPhase = -1;
};

struct Rendezvous {
  const StmtNode *stmt = nullptr;
  std::vector<int> warps;
  // Per entry of `warps`: whether that arrival waits for the generation
  // (barrier.sync) or only arrived (barrier.arrive) and went on; only the
  // waiting ones are released, and given the joined clocks, when it completes.
  std::vector<bool> waits;
  size_t needed = 0;
  std::string scopeName;
  VectorClock joined; // race detection: the clocks of the threads that arrived
};

class CtaExecutor;
struct DeviceGroup;     // Devices.h
struct DeviceArrival;   // Devices.h
struct DeviceRaceState; // Devices.h
struct DeviceShadow;    // Devices.h

// A cta_group = 2 tcgen05.alloc or dealloc issued by one warp of a CTA pair,
// waiting for the peer CTA's warp (TmemAlloc.cpp).
struct PairAlloc {
  int buffer = -1;
  int64_t columns = 0;
  int rank = -1, warp = -1;
  bool alloc = true;
  llvm::SMLoc loc;
  bool done = false; // the peer's warp performed it for both
};

// The CTAs of one cluster while they run interleaved (Cluster.cpp), and the
// cluster barrier (barrier.cluster.arrive / wait, cluster.sync) they share.
struct ClusterState {
  std::vector<CtaExecutor *> ctas;         // by rank in the cluster
  int64_t barrierPhase = 0;                // completed phases of the cluster barrier
  int64_t barrierArrived = 0;              // warps arrived in the current phase
  int64_t barrierWarps = 0;                // warps of the whole cluster
  int64_t exitedWarps = 0;                 // finished: PTX waits only for the others
  RaceDetector *race = nullptr;            // race detection: told when a phase completes
  std::map<int64_t, PairAlloc> pairAllocs; // by pair (rank / 2): the first warp's operation
};

struct Failure {
  RunResult::Outcome outcome = RunResult::Outcome::RuntimeError;
  std::string message;
  std::vector<std::string> notes;
};

// Threads [begin, end) of the CTA that execute one call together.
struct ThreadRange {
  int64_t begin = 0, end = 0;
  bool contains(int64_t t) const { return t >= begin && t < end; }
};

class CtaExecutor {
public:
  CtaExecutor(const Program &program, std::vector<HostTensor> &tensors,
              const EngineOptions &options, RunStats &stats, std::array<int64_t, 3> ctaId,
              std::mt19937_64 &rng);
  // Hands its memory's storage to the next CTA of this thread (start()
  // refills it), so that CTAs run one after another do not each take fresh
  // pages from the system.
  ~CtaExecutor();
  CtaExecutor(const CtaExecutor &) = delete;
  CtaExecutor &operator=(const CtaExecutor &) = delete;

  // Runs the CTA to its end; a failure otherwise.
  std::optional<Failure> run();
  // The same in pieces, for clusters whose CTAs run interleaved (Cluster.cpp):
  // start sets the CTA up, each tick makes one scheduling decision (a warp
  // runs some steps, or an asynchronous unit completes), finish checks the end.
  enum class Tick : uint8_t { Progress, Done, Stuck, Failed };
  std::optional<Failure> start();
  Tick tick();
  std::optional<Failure> finish();
  std::optional<Failure> failure() const { return failure_; }
  Failure deadlock() const;
  // Cluster.cpp: this CTA's place in its cluster.
  void joinCluster(ClusterState *cluster, int rank) {
    cluster_ = cluster;
    rank_ = rank;
  }
  // Devices.cpp: this CTA's device in its device group.
  void joinDevices(DeviceGroup *group, int devid, DeviceRaceState *race) {
    devices_ = group;
    devid_ = devid;
    deviceRace_ = race;
    deviceFence_.assign(p_.threads, -1);
    deviceTraced_ = race && groupTracesRaces(group);
  }
  int64_t deviceGate() const { return deviceGate_; }
  bool exited() const { return exited_; }
  void markExited() { exited_ = true; }
  std::array<int64_t, 3> ctaId() const { return ctaId_; }

  // --- used by the tile primitives (Primitives.cpp) ---
  const Program &program() const { return p_; }
  const BufferPlan &plan(int buffer) const { return p_.buffers[buffer]; }
  // Encoded bits of element `flat` of a buffer as thread range `threads` sees
  // it (a register tile is read from its first owner inside the range).
  std::optional<uint64_t> readBits(int buffer, int64_t flat, ThreadRange threads, llvm::SMLoc loc);
  // Writes element `flat` (every owner inside the range for register tiles).
  bool writeBits(int buffer, int64_t flat, uint64_t bits, ThreadRange threads, llvm::SMLoc loc);
  int64_t bufferFlat(const Region &r, int64_t idx) const;
  // Whole-region fast paths (RegionAccess.cpp): the region's elements in
  // logical order as `threads` see them. They return false, having changed
  // nothing, where the per-element path must decide (clipping, tensor memory,
  // race detection, an element the threads do not hold); the
  // caller then counts the access with countAccess or takes that path.
  bool fastRegion(const Region &r) const;
  // Whether every element of r lies inside its buffer.
  bool insideBuffer(const Region &r) const;
  void regionFlats(const Region &r, std::vector<int64_t> &flats) const;
  // With `ownedOnly` (a register tile with a layout, a warp's share:
  // WarpShare.cpp), an element no thread of the range holds is no failure:
  // it reads as 0 and is not written.
  bool gatherBits(const Region &r, ThreadRange threads, std::vector<uint64_t> &out,
                  bool ownedOnly = false);
  // `bits` holds one value per element, or one value for all of them.
  bool scatterBits(const Region &r, ThreadRange threads, std::span<const uint64_t> bits,
                   bool ownedOnly = false);
  // A warp's share of a copy from a register tile with a layout into shared
  // memory (an epilogue's staging), element by element as the per-element
  // path does it, without its per-element calls: false, with nothing
  // written, where that path would report something or every access must
  // be traced. `done` counts the elements moved, as that path counts them.
  bool copyShareToShared(const Region &src, const Region &dst, int64_t n, ThreadRange warp,
                         int64_t &done);
  // The tensor-memory cells of a region's elements (`flats`), or null when
  // one is not allocated or outside its allocation (tmemIndex reports it).
  const int64_t *tmemCells(const Region &r, const std::vector<int64_t> &flats);
  void countAccess(const Region &r, bool write);
  // A register tile's region as `threads` hold it: for each element its first
  // owner's register (read) and every owner's register (written), or
  // `complete` false when some element has no owner among them. Owner tables
  // never change, so it is computed once per region and range.
  struct RegionRegs {
    bool complete = true;
    std::vector<int64_t> first;                   // by element of the region
    std::vector<std::pair<int64_t, int64_t>> all; // (element, register)
  };
  const RegionRegs &regionRegs(const Region &r, ThreadRange threads,
                               const std::vector<int64_t> &flats);
  // Appends what identifies region r (buffer, starts, extents, dimensions)
  // to a cache key.
  static void appendRegionKey(std::vector<int64_t> &key, const Region &r);
  bool inBounds(const Region &r, int64_t idx) const;
  // bufferFlat(r, idx) when inBounds(r, idx), else -1, from one computation
  // of the element's coordinates (the per-element copies past a tensor's edge).
  int64_t flatInBounds(const Region &r, int64_t idx) const;
  bool fail(llvm::SMLoc loc, const std::string &message);
  std::string where(llvm::SMLoc loc) const;
  Mbarrier *barrier(int index, llvm::SMLoc loc);
  bool barrierError(Mbarrier::Error e, int index, llvm::SMLoc loc);
  std::string barrierName(int index) const;
  RunStats &stats() { return stats_; }

  // A tile primitive executed by `threads`; `args` are evaluated operands.
  struct Operand {
    bool isRegion = false;
    Region region;
    ValueKind kind = ValueKind::Int;
    Dtype dtype = Dtype::i64;
    Scalar value{};
  };
  struct PrimitiveCall {
    const CallStmt *call = nullptr;
    std::vector<Operand> positional;
    std::map<std::string, Operand> keywords;
    int barrier = -1; // `mbar = ...`
    ThreadRange threads;
    bool warpgroupScope = false;
    // A warpgroup's wg.copy / wg.cast / wg.fill run by one warp (`threads`):
    // only that warp's share of the elements, each by its own thread
    // (splitsPerWarp, shareOf).
    bool warpShare = false;
    int asyncAgent = -1; // race detection: the agent of an asynchronous MMA
    // tcgen05.mma with cta_group = 2: B (N x K, row-major codes) gathered from
    // both CTAs of the pair, used instead of reading operand b.
    std::vector<uint64_t> bBits;
    int64_t bRows = 0;
  };
  bool executePrimitive(const PrimitiveCall &call);
  // WarpShare.cpp. wg.copy, wg.cast and wg.fill lower to per-thread code with
  // no barrier (dispatch/DispatchTable.cpp): each warp does its own share
  // when it reaches the call, with no synchronisation between warps. Not
  // for private register tiles or tensor memory (those stay rendezvous).
  bool splitsPerWarp(const CallStmt &c) const;
  // The threads of warp `warp` that do element i of the call's regions as
  // the lowering does: every owner of a register destination's element
  // (each writes its own register), else the first replica in the
  // warpgroup of a register source's element (it alone stores it), else
  // (memory to memory, a memory fill) thread i % 128 of the warpgroup.
  // dstFlat and srcFlat: the element's flat index in each buffer (-1
  // outside it).
  void shareOf(const Region &dst, const Region *src, int64_t i, int64_t dstFlat, int64_t srcFlat,
               ThreadRange warp, std::vector<int64_t> &out) const;
  // The warp's share of a call on these regions: each element with a
  // thread that does it and its flat indices (-1 outside the buffer), in
  // element order, computed once per regions and warp.
  struct ShareElement {
    int64_t element, thread, dstFlat, srcFlat;
  };
  const std::vector<ShareElement> &warpShare(const Region &dst, const Region *src, int64_t n,
                                             ThreadRange warp);
  // A block-scaled tcgen05.mma (BlockScaledMma.cpp): operands gathered by the
  // gemm (A M x K codes, Bt N x K codes), C M x N f32 bits updated.
  struct ScaledOperands {
    int64_t M, N, K;
    Dtype d, a, b;
    const std::vector<uint32_t> &A, &Bt;
  };
  bool blockScaledMma(const PrimitiveCall &call, const ScaledOperands &o, std::vector<uint32_t> &C);
  bool readScales(const Region &r, int64_t rows, int64_t blocks, llvm::SMLoc loc,
                  std::vector<uint32_t> &out);
  // A tcgen05.mma when its commit completes: on this CTA, or with
  // cta_group = 2 on both CTAs of the pair (AsyncMma.cpp).
  bool executeTcgen05Mma(const PrimitiveCall &mma);
  // ldmatrix / stmatrix with trans = true: the source is read with its last
  // two dimensions swapped (each 8x8 matrix transposed). Primitives.cpp.
  bool transposeSource(PrimitiveCall &call);

  // An asynchronous unit in flight: a TMA copy (complete_tx of `bytes` on
  // `barrier` when it lands), or a tcgen05.commit (the MMAs issued before it
  // run, then one arrival on `barrier`).
  struct AsyncCopy {
    Region dst, src;
    int barrier = -1;
    int64_t bytes = 0;
    llvm::SMLoc loc;
    std::vector<PrimitiveCall> mmas; // non-empty or `isCommit`: a tcgen05.commit
    bool isCommit = false;
    int agent = -1; // race detection: the unit's asynchronous agent
    // A member of a thread's cp.async or bulk-store group (AsyncGroups.cpp):
    // kind -1 otherwise. Bulk stores complete in two stages: the source is
    // read (`staged`), later the destination written.
    int groupKind = -1;
    int64_t groupThread = -1, groupSeq = -1;
    bool sourceRead = false;
    std::vector<uint64_t> staged;
    // A tcgen05.commit with multicast: the CTAs (by rank) whose `barrier`
    // gets the arrival; 0: this CTA's only.
    uint64_t multicastMask = 0;
    // devices(N) kernels: the CTA's stamp (deviceStamp_) at the issue of a
    // TMA copy, -1 otherwise.
    int64_t deviceIssue = -1;
  };
  // Race detection hooks (RaceHooks.cpp; each a no-op unless a detector is
  // attached).
  void attachRaceDetector(RaceDetector *detector) { race_ = detector; }
  // The layout lookups of regionRegs and warpShare depend on the program
  // alone (owner tables, buffer shapes, the region): the CTAs a run executes
  // one after another share one set (runProgram), instead of each making its
  // own.
  struct RegionCaches;
  void shareCaches(RegionCaches *caches) { caches_ = caches; }
  // The agent of this CTA's thread `t` (the CTAs of a cluster share one
  // detector group: RaceDetector.h).
  uint32_t raceThread(int64_t t) const { return static_cast<uint32_t>(rank_ * p_.threads + t); }
  // The agent making an access: the asynchronous operation being completed,
  // else the first thread of the range (a collective runs on the joined clock
  // of its threads).
  uint32_t raceAgent(ThreadRange threads) const {
    return asyncAgent_ >= 0 ? static_cast<uint32_t>(asyncAgent_) : raceThread(threads.begin);
  }
  void raceAccess(RaceSpace space, int buffer, int64_t flat, int64_t address, int units, bool write,
                  ThreadRange threads, llvm::SMLoc loc);
  // An access by `agent` to the memory of the CTA of rank `rank` (a peer's
  // shared memory through distributed shared memory).
  void raceAccessAs(uint32_t agent, int rank, RaceSpace space, int buffer, int64_t flat,
                    int64_t address, int units, bool write, llvm::SMLoc loc);
  // Whether accesses must take the per-element paths, which call raceAccess
  // (race detection, or the uninitialised-read check).
  bool traced() const { return race_ || options_.checkUninitialized || deviceTraced_; }
  // Whether every access, global and register ones included, must be seen
  // one by one (race detection). The uninitialised-read check alone sees
  // only shared and tensor memory: the whole-region paths (RegionAccess.cpp)
  // keep its record themselves, and the fused stores touch neither.
  bool everyAccessTraced() const { return race_ || deviceTraced_; }
  // Takes the storage the last CTA of this thread left (see ~CtaExecutor).
  void takeSpareStorage();
  // The uninitialised-read check of one shared (bytes [address, address +
  // units)) or tensor-memory (cell `address`) access of this CTA's memory by
  // the agent `agent()` names (RaceHooks.cpp; called only for a report).
  void initAccess(RaceSpace space, int buffer, int64_t flat, int64_t address, int units, bool write,
                  llvm::function_ref<std::string()> agent, llvm::SMLoc loc);
  void stampAsync(AsyncCopy &unit, ThreadRange threads);
  void stampAsyncMma(PrimitiveCall &mma, int64_t warpgroup);
  void releaseTo(int barrier, uint32_t agent, int64_t phaseBefore);
  void acquireFrom(Warp &w, uint32_t mask);
  // While one lives, accesses are asynchronous operation `agent`'s.
  struct AsyncAgentScope {
    int &current;
    AsyncAgentScope(int &slot, int agent) : current(slot) { current = agent; }
    ~AsyncAgentScope() { current = -1; }
  };
  void enqueue(AsyncCopy copy) { inflight_.push_back(std::move(copy)); }

private:
  // Engine.cpp: statements, expressions, scheduling.
  bool step(Warp &w);
  // The end of a loop body: steps the counters of the lanes still iterating
  // and starts the body again with them; false when none is left.
  bool nextIteration(Warp &w, Frame &f);
  // Pops the finished frame (the warp is done when it was the last).
  void leaveBlock(Warp &w);
  bool execStmt(Warp &w, Frame &f, const Stmt &s);
  bool execCall(Warp &w, Frame &f, const CallStmt &c);
  bool execNative(Warp &w, const CallStmt &c, uint32_t mask, ThreadRange threads, int lane);
  bool arriveCollective(Warp &w, const CallStmt &c, int convergence);
  bool runCollective(Warp &w, const CallStmt &c, ThreadRange threads);
  // Expressions.cpp: the compiled body's expressions over the active lanes.
  // `eval` evaluates an expression of the body by its tree node (a lookup);
  // the statements use `evalOp` with the operation's index.
  bool eval(const Expr &e, Warp &w, uint32_t mask, LaneValues &out);
  const LaneValues *evalOp(int op, Warp &w, uint32_t mask);
  bool binaryInto(BinaryOp op, llvm::SMLoc loc, const LaneValues &x, const LaneValues &y,
                  uint32_t mask, LaneValues &out);
  bool evalFma(const ExprOp &op, Warp &w, uint32_t mask, LaneValues &out);
  bool evalLoad(const ExprOp &op, Warp &w, uint32_t mask, LaneValues &out);
  bool evalCall(const ExprOp &op, Warp &w, uint32_t mask, LaneValues &out);
  bool evalMath(const ExprOp &op, llvm::ArrayRef<const LaneValues *> args, uint32_t mask,
                LaneValues &out);
  bool elementFlat(const ExprOp &op, Warp &w, uint32_t mask, std::array<int64_t, kWarpSize> &flat);
  // A load's subscripts when they are 1 to 3 points that cannot fail (false
  // otherwise, or when one failed: see failure_), and the bounds report.
  bool pointSubscripts(const ExprOp &op, Warp &w, uint32_t mask,
                       std::array<const LaneValues *, 3> &sub);
  bool boundsError(const ExprOp &op, Warp &w, uint32_t mask,
                   std::array<const LaneValues *, 3> &sub);
  bool outOfRange(const ExprOp &op, size_t dim, int64_t index, int64_t thread);
  // FusedStore.cpp: a fused store statement in one pass; false, having changed
  // nothing, where the general path must run it.
  bool execFusedStore(Warp &w, uint32_t mask, const FusedStore &f);
  // Its two halves: every access resolved (false where a subscript is out of
  // range), then the lanes computed and stored.
  bool resolveFusedStore(const FusedStore &f, Warp &w, uint32_t mask, ResolvedStore &out);
  void applyFusedStore(const FusedStore &f, uint32_t mask, const ResolvedStore &r);
  // FusedLoop.cpp: whole iterations of the fused loop body the warp is at the
  // start of, as many as `budget` steps hold; the steps taken (0: the warp
  // is elsewhere, or the general path must take the next statement).
  int runFusedLoop(Warp &w, int budget);
  // An access's base (uniform subscripts applied) and its lanes' offsets;
  // false where a subscript is out of range.
  bool resolveAccess(const FusedAccess &a, Warp &w, uint32_t mask, uint8_t *&base,
                     const int64_t *&offsets);
  bool laneOffsetsOf(const FusedAccess &a, Warp &w, uint32_t mask, FusedOffsets &out);
  bool ownedOffsets(const FusedAccess &a, const Warp &w, uint32_t mask,
                    std::array<int64_t, kWarpSize> &offset) const;
  bool cachedOffsets(const FusedAccess &a, Warp &w, uint32_t mask, const int64_t *&offsets);
  // Race detection: the global elements a load read, by lane (from flat
  // indices, or from in-range point subscripts).
  void raceLoads(const ExprOp &op, Warp &w, uint32_t mask,
                 const std::array<int64_t, kWarpSize> *flat,
                 const std::array<const LaneValues *, 3> *sub);
  std::optional<Region> region(const Expr &e, Warp &w, int lane);
  // The (dst, src) regions of a copy-like native's first two arguments.
  bool copyRegions(const CallStmt &c, Warp &w, int lane, std::optional<Region> &dst,
                   std::optional<Region> &src);
  std::optional<int> barrierRef(const Expr &e, Warp &w, int lane);
  std::optional<Operand> operand(const Expr &e, Warp &w, int lane, bool wantRegion);
  std::optional<PrimitiveCall> buildCall(Warp &w, const CallStmt &c, ThreadRange threads, int lane);
  bool execTcgen05(Warp &w, const CallStmt &c, ThreadRange threads, int lane);
  bool execWgmma(Warp &w, const CallStmt &c, ThreadRange threads, int lane);
  std::optional<int64_t> tmemIndex(int buffer, int64_t flat, llvm::SMLoc loc);
  // AsyncGroups.cpp: cp.async and TMA stores with their commit / wait groups.
  bool execAsyncGroupNative(Warp &w, const CallStmt &c, ThreadRange threads, int lane);
  bool execGroupWait(Warp &w, Frame &f, const CallStmt &c);
  bool groupWaitSatisfied(const Warp &w) const;
  bool completeGroupUnit(size_t index);
  bool checkTmaAlignment(const Region &global, const Region &shared, llvm::SMLoc loc);
  bool completeAsync(size_t index);
  bool copyClippedSource(const AsyncCopy &copy);
  // Cluster.cpp: cluster barrier, distributed shared memory, remote mbarrier
  // arrivals, multicast.
  bool execClusterBarrier(Warp &w, Frame &f, const CallStmt &c);
  bool clusterWaitSatisfied(const Warp &w) const;
  void clusterWarpExited(const Warp &w);
  bool execDsmem(Warp &w, const CallStmt &c, int lane);
  // The device scale (Devices.cpp).
  bool execDeviceThread(Warp &w, Frame &f, const CallStmt &c);
  bool execDeviceCta(Warp &w, const CallStmt &c, ThreadRange threads, int lane);
  bool completeDevicePhase(std::vector<DeviceArrival> &arrivals);
  bool runDeviceCollective(const std::vector<DeviceArrival> &arrivals);
  bool deviceWaitSatisfied(const Warp &w) const;
  bool acquireDeviceWaits(Warp &w, const CallStmt &c);
  std::string deviceWaitText(const Warp &w) const;
  bool deviceGateClosed();
  // A put or get between two tensors with declared placements (Devices.h).
  const Layout *placementOf(const BufferPlan &b) const;
  bool movesOntoItself(const Layout &srcPlacement, int64_t srcDevice, int64_t srcFlat,
                       const Layout &dstPlacement, int64_t dstDevice, int64_t dstFlat,
                       const CallStmt &c, const std::string &srcName, const std::string &dstName);
  void deviceAccess(int memDevice, int tensor, int64_t flat, bool write, llvm::SMLoc loc);
  // fence.proxy.async(space = "global") by a thread of this CTA.
  void deviceProxyFence();
  bool deviceProxyFenced(const DeviceShadow &s, int64_t issueStamp) const;
  bool execRemoteArrive(Warp &w, const CallStmt &c, int lane);
  bool multicast(Warp &w, const CallStmt &c, int lane,
                 const std::function<bool(CtaExecutor &)> &run);
  bool checkMulticastMask(uint64_t mask, llvm::SMLoc loc);
  bool arriveMulticast(const AsyncCopy &commit);
  CtaExecutor *pairPeer(llvm::SMLoc loc); // the other CTA of a cta_group::2 pair
  // TmemAlloc.cpp: tensor-memory allocation, by one warp or by a CTA pair.
  bool useCtaGroup(int64_t group, llvm::SMLoc loc);
  std::optional<int64_t> tmemColumns(Warp &w, const CallStmt &c, int lane, const BufferPlan &b);
  std::optional<int> tmemBuffer(Warp &w, const CallStmt &c, int lane);
  bool columnsFree(int64_t first, int64_t count) const;
  void takeColumns(int buffer, int64_t first, int64_t count, int warp);
  bool freeColumns(int buffer, int warp, llvm::SMLoc loc);
  bool execTmemAlloc(Warp &w, const CallStmt &c, int lane);
  bool allocPermitted(llvm::SMLoc loc); // no tcgen05.relinquish_alloc_permit yet
  // Alloc and dealloc write every cell of the allocation (the race hooks).
  void raceAllocation(int buffer, int64_t first, int64_t count, int64_t thread, llvm::SMLoc loc);
  std::optional<Failure> unfreedTensorMemory();
  bool execPairAlloc(Warp &w, Frame &f, const CallStmt &c);
  bool pairAllocSatisfied(const Warp &w) const;
  // Deadlock notes: what a warp blocked without an mbarrier wait waits for.
  std::string otherWaitText(const Warp &w) const;
  CtaExecutor *peer(int64_t rank, llvm::SMLoc loc);
  // peer() for an operation of warp w, which must have passed a cluster
  // barrier first when the rank is another CTA's (docs/simulator.md).
  CtaExecutor *startedPeer(const Warp &w, int64_t rank, llvm::SMLoc loc);
  bool adoptFailure(const CtaExecutor &other);
  // Where a shared element lives (its first bit, the bytes it spans), and
  // its bits there (packed for sub-byte dtypes); nothing when outside.
  struct SharedSpot {
    int64_t bit = 0, at = 0;
    int span = 0;
  };
  // Also poisons shared memory on first use (readyShared).
  std::optional<SharedSpot> sharedSpot(const BufferPlan &b, int64_t flat);
  uint64_t loadShared(const SharedSpot &s, Dtype d) const;
  void storeShared(const SharedSpot &s, Dtype d, uint64_t bits);
  bool waitSatisfied(const Warp &w) const;
  int64_t builtin(BuiltinKind b, int64_t thread) const;
  // Builtin b for every lane of warp w: a function of the thread and the CTA
  // alone, so computed once per CTA, at its first use.
  const LaneValues &builtinLanes(BuiltinKind b, const Warp &w);

  const Program &p_;
  const KernelCode *code_ = nullptr;
  std::vector<LaneValues> scratch_; // per operation of code_: its values
  // A fused store's evaluated operands (FusedStore::evaluated), as f32 lanes.
  alignas(32) std::array<std::array<float, kWarpSize>, 3> evaluatedLanes_{};
  LaneValues product_;              // an uncontracted a * b of an Fma operation
  std::vector<LaneValues> builtinLanes_; // per warp and builtin (builtinLanes)
  std::vector<bool> builtinFilled_;
  std::vector<HostTensor> &tensors_;
  const EngineOptions &options_;
  RunStats &stats_;
  uint32_t ticksSinceClock_ = 63; // ticks since the deadline was read (read on the first)
  std::array<int64_t, 3> ctaId_;
  std::mt19937_64 &rng_;
  std::vector<uint8_t> shared_;
  std::vector<uint64_t> regs_;
  std::vector<Mbarrier> barriers_;
  std::vector<Warp> warps_;
  std::vector<int> ready_; // scratch of tick()
  DeviceGroup *devices_ = nullptr; // devices(N) kernels: this CTA's device group
  DeviceRaceState *deviceRace_ = nullptr;
  int devid_ = 0;
  bool deviceTraced_ = false; // device races: every global access takes the per-element path
  static bool groupTracesRaces(const DeviceGroup *group);
  int64_t deviceGate_ = -1;         // the device phase this CTA waits to complete, -1 none
  int64_t deviceStamp_ = 0;         // orders the CTA's global accesses and fences
  std::vector<int64_t> deviceFence_; // by thread: stamp of its last device.fence
  int64_t tmaIssue_ = -1;            // while a TMA copy completes: its deviceIssue
  bool asyncCompleting_ = false;     // while an asynchronous unit (copy, bulk store) completes
  ClusterState *cluster_ = nullptr;
  std::unique_ptr<ClusterState> ownCluster_; // when run alone
  int rank_ = 0;
  bool exited_ = false;
  std::map<std::pair<int, int64_t>, Rendezvous> rendezvous_;
  std::vector<AsyncCopy> inflight_;
  std::optional<Failure> failure_;
  std::vector<uint64_t> bits_, bitsB_, bitsC_; // scratch of the whole-region paths

public:
  struct RegionCaches {
    // regionRegs by (buffer, thread range, region start, extents, dimensions).
    std::map<std::vector<int64_t>, RegionRegs> regionRegs;
    std::map<std::vector<int64_t>, std::vector<ShareElement>> warpShares;
  };

private:
  RegionCaches ownCaches_;
  RegionCaches *caches_ = &ownCaches_;
  // Tensor memory: 128 lanes x 512 columns of 32 bits, and who allocated what.
  std::vector<uint32_t> tmem_;
  std::vector<int> tmemOwner_;                           // per column: allocating warp, -1 free
  std::map<int, std::pair<int64_t, int64_t>> tmemAlloc_; // buffer -> (first column, columns)
  std::map<int, std::pair<int, llvm::SMLoc>> tmemAllocBy_;      // buffer -> (warp, where allocated)
  std::optional<std::pair<int, llvm::SMLoc>> tmemRelinquished_; // by warp, where
  std::vector<PrimitiveCall> tcgen05Issued_;             // tcgen05.mma not yet committed
  int tcgen05CtaGroup_ = 0; // the cta_group of the kernel's tcgen05 instructions (0: none yet)
  llvm::SMLoc tcgen05CtaGroupAt_; // ... first given here
  // wgmma per warpgroup: the open group and the committed groups, oldest first.
  std::map<int64_t, std::vector<PrimitiveCall>> wgmmaOpen_;
  std::map<int64_t, std::vector<std::vector<PrimitiveCall>>> wgmmaCommitted_;
  // cp.async (kind 0) and bulk-store (kind 1) groups of each thread, by group
  // sequence number; the last one of a thread is its open group.
  struct AsyncGroup {
    int64_t pending = 0; // units not yet complete
    int64_t unread = 0;  // bulk stores whose source is not read yet
    VectorClock done;    // race detection: clocks of the completed units
  };
  std::array<std::vector<std::vector<AsyncGroup>>, 2> groups_;
  // Race detection (owned by the run: global memory is tracked across CTAs).
  RaceDetector *race_ = nullptr;
  int asyncAgent_ = -1;     // the operation being completed, or -1
  bool tcgen05LdSt_ = false; // a tcgen05.ld / st runs (its TMEM accesses: RaceDetector::tcgen05Agent)
  // EngineOptions::checkUninitialized: a bit per shared byte, per tmem cell.
  std::vector<uint8_t> sharedInit_, tmemInit_;
  // Shared memory is poisoned (Poison.h) and its bytes marked unwritten when
  // something first reads or writes it, not at start(): the same bytes, but
  // the CTAs of a persistent grid that get no tile never touch their 227 KB
  // (at the small size of the persistent GEMMs, 124 of 132 CTAs). Every
  // access to shared_ or sharedInit_ asks readyShared first (sharedSpot, the
  // whole-region paths, initAccess). The whole of it at once: a page at a
  // time cost the CTAs that run more than it saved (a call per element
  // while their ring's later stages stay untouched).
  bool sharedPending_ = false;  // not poisoned yet
  uint64_t sharedStream_ = 0;   // Random: the splitmix64 state before shared memory's first word
  uint8_t sharedPoisonByte_ = 0; // the fixed patterns' byte
  bool sharedRandom_ = false;
  void poisonShared();
  void readyShared() {
    if (sharedPending_) [[unlikely]]
      poisonShared();
  }
  int remoteIssuer_ = -1;   // a multicast TMA issued by a peer's thread (this agent), or -1
  VectorClock tcgen05Pipe_; // the tcgen05 operations issued so far
  std::map<int64_t, VectorClock> wgmmaPipe_; // per warpgroup: its wgmmas issued so far
};

// The races `race` found, rendered with the program's buffer names and
// options.where's locations (RaceHooks.cpp).
std::vector<DetectedRace> describeRaces(const RaceDetector &race, const Program &program,
                                        const EngineOptions &options);
// Ticks a CTA of `ctas` picked at random among those that have neither
// exited nor are stuck, until none is left (progress or an exit unsticks the
// others); a CTA that fails ends the run with its failure. The CTAs that have
// not exited are then deadlocked (Cluster.cpp).
std::optional<Failure> runUntilBlocked(std::vector<std::unique_ptr<CtaExecutor>> &ctas,
                                       std::mt19937_64 &rng);
// Runs the CTAs of one cluster (by rank) interleaved to their end, under
// `race` when given (Cluster.cpp).
std::optional<Failure> runCluster(std::vector<std::unique_ptr<CtaExecutor>> &ctas,
                                  std::mt19937_64 &rng, RaceDetector *race = nullptr);
// Runs the clusters that hold `ctas` (a sampled CTA brings its whole cluster),
// one cluster after the other, into `result`.
void runClusters(const Program &program, std::vector<HostTensor> &tensors,
                 const EngineOptions &options, const std::vector<std::array<int64_t, 3>> &ctas,
                 std::mt19937_64 &rng, RaceDetector *race, RunResult &result);

} // namespace tilescope::sim
