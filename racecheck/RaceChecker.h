// Internal to the static race check (racecheck/StaticRaces.h): the
// checker's shared context (the skeleton, the encoder, the solver, the named
// barriers) and its parts, one file each: StaticRaces.cpp (the thread map,
// barriers that join threads, handshakes, the entry points), RacePairs.cpp
// (the pairs of accesses and what orders them within a CTA),
// RaceOrderings.cpp (the orderings decided per execution pair: relays,
// rounds, completions), RaceSolve.cpp (the pair query and the proxy-fence
// rule). Exposes z3++.h: include it only from those files.
#pragma once

#include "racecheck/StaticRaces.h"

#include "ir/Visitor.h"
#include "sync/BarrierSkeleton.h"
#include "proof/LinearPrecheck.h"
#include "verifier/FallbackSizes.h"
#include "verifier/NamedBarriers.h"
#include "proof/ProtoEncoding.h"
#include "proof/SharedContext.h"

#include <z3++.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tilescope::detail {

inline int64_t groupSize(ExecScope s, int64_t threads) {
  switch (s) {
  case ExecScope::Thread:
    return 1;
  case ExecScope::Warp:
    return 32;
  case ExecScope::Warpgroup:
    return 128;
  default:
    return threads;
  }
}

// The scope whose groups issue one execution of `e`: warp-collective
// instructions called unqualified (tcgen05.ld / tcgen05.st) are one per warp.
inline ExecScope issueScope(const SyncEvent &e) {
  return e.warpCollective ? ExecScope::Warp : e.scope;
}

// A cp.async copy: `cp_async`, or `copy_async` without an mbarrier (which
// dispatch turns into cp.async and a commit).
inline bool isCpAsync(const SyncEvent &e) {
  return e.kind == SyncKind::Access &&
         (e.call == IntrinsicId::CpAsync || e.call == IntrinsicId::CopyAsync);
}

// Accesses that complete after their statement: a TMA write (until its
// delivery), a cp.async write (until a cp_async.wait of the issuing thread
// covers its group), the operands and accumulator of wgmma.mma_async (until
// wait_group) and of tcgen05.mma (until its commit's mbarrier phase). A
// barrier after the issuing statement does not order them: only their
// completion does, observed by the other access's thread or by a thread
// that then meets it at a barrier (addHandshakes, addWgmmaRetired,
// addCpAsyncCompleted, addTmaStoreCompleted). A TMA store reads its shared
// source and writes global memory until a tma.store_wait of the issuing
// thread retires its bulk group (with `read = true`: the read only).
inline bool completesLater(const SyncEvent &e, const MemoryAccess &a) {
  if (e.kind == SyncKind::TxDelivery)
    return a.write && a.asyncProxy;
  if (isCpAsync(e))
    return a.write;
  if (e.call == IntrinsicId::TmaStore)
    return true;
  return e.kind == SyncKind::WgmmaMma ||
         (e.call == IntrinsicId::Tcgen05Mma && a.scope != MemScope::Global);
}

struct LoopVarFinder : IRVisitor {
  const std::set<std::string> *names = nullptr;
  bool found = false;
  void visitVar(const Var &v) override { found |= names->count(v.name) > 0; }
};

class RaceChecker {
public:
  RaceChecker(BarrierSkeleton sk, const RaceOptions &opt)
      : sk_(std::move(sk)), opt_(opt), enc_(ctx_, sk_), named_(analyseNamedBarriers(sk_)) {
    for (const SkeletonLoop &l : sk_.loops)
      loopVars_.insert(l.var);
  }

  RaceReport run();

private:
  // Thread indices as functions of the thread t, and blockIdx.x/y/z as
  // `cta` when given (an executor in a CTA of its own).
  std::map<BuiltinKind, z3::expr> builtinsOf(const z3::expr &t,
                                             const std::vector<z3::expr> &cta = {},
                                             const z3::expr *rank = nullptr);

  // The loop variables of ev's loops bound to iteration unknowns. Bounds read
  // the executor's own builtins (a tile loop starting at blockIdx.x starts
  // elsewhere in another CTA).
  bool bindLoops(const SyncEvent &ev, const std::string &tag,
                 std::map<std::string, z3::expr> &bound, z3::expr_vector &ranges,
                 std::vector<z3::expr> &iters, const std::map<BuiltinKind, z3::expr> &builtins);

  bool threadMember(const ThreadSet &set, const z3::expr &t, z3::expr_vector &out);

  // Whether barrier event e makes every thread of `a` and `b` wait for each
  // other: cta.sync by every thread, or a named barrier.sync whose
  // participants include them all (its thread count is checked by the
  // barrier proofs).
  // With warpLevel, warp.sync (by every lane of the warps of both sides, not
  // under a size-dependent guard) counts too: it orders two threads of one
  // warp only, which the caller adds to the query.
  bool joins(const SyncEvent &e, const ThreadSet &a, const ThreadSet &b,
             bool warpLevel = false) const;

  // A barrier joining a's and b's threads strictly between two orders (in
  // the body of `loop` itself when one is given). With `cluster`, only
  // barriers that join the CTAs of a cluster count: cluster.sync by every
  // thread, or barrier.cluster.arrive by every thread followed by
  // barrier.cluster.wait by every thread.
  //
  // A generation of a named barrier (NamedBarriers.h) in that range (in
  // the body of `loop`) in which every thread of a and b syncs orders them
  // too, its events taken together (generationsOrder has the directed
  // cases).
  //
  // A barrier counts only where it runs whenever one of `runsWith` does (in
  // the same iteration of their loops; runsWith): one under a condition over
  // sizes, or in a loop that may run no iteration, orders nothing for an
  // access that runs without it.
  bool ctaSyncBetween(const ThreadSet &a, const ThreadSet &b, int fromOrder, int toOrder,
                      int loop, bool cluster, bool warpLevel,
                      std::initializer_list<const SyncEvent *> runsWith) const;
  // Whether barrier e runs whenever x does, in the same iteration of the
  // loops they share: its guards are a prefix of x's, and every loop e sits
  // in that x does not runs at least once (loopRunsOnce_).
  bool runsWith(const SyncEvent &e, const SyncEvent &x) const;
  // Per skeleton loop: whether it runs at least one iteration wherever it
  // is reached, under the where clause (its trip count over sizes and CTA
  // indices only; a bound that reads another loop's variable counts as no).
  void findLoopsRunningOnce();

  // Whether generation g orders `first`'s accesses before `second`'s: every
  // thread of `first` executes an event of g where firstOk (after its
  // access; with `directed` it may only arrive, else it syncs), and every
  // thread of `second` a sync of g where secondOk (before its access).
  template <typename FirstOk, typename SecondOk>
  static bool generationOrders(const NamedGeneration &g, const ThreadSet &first,
                               const ThreadSet &second, bool directed, FirstOk firstOk,
                               SecondOk secondOk) {
    for (int64_t t = 0; t < first.launchThreads(); ++t) {
      bool inFirst = first.contains(t), inSecond = second.contains(t);
      if (!inFirst && !inSecond)
        continue;
      const SyncEvent *e = g.eventOf(t);
      if (!e || (inFirst && !firstOk(*e)) || (inSecond && !secondOk(*e)))
        return false;
      if ((inSecond || !directed) && e->kind != SyncKind::NamedSync)
        return false;
    }
    return true;
  }

  // A generation of a named barrier that orders access `first` before
  // `second` in one execution of the loops both sit in: `first`'s threads
  // arrive after it and `second`'s threads sync before it, each in its own
  // program order. Accesses in different branches (a producer and a
  // consumer warpgroup) are ordered whichever comes first in the text.
  bool generationBetween(const SyncEvent &first, const SyncEvent &second,
                         const std::vector<int> &common) const;
  // Per thread, the same orderings as generationBetween outside common
  // loops: for each generation (of uses outside loops), the threads of
  // `first` whose event of it comes after their access and the threads of
  // `second` whose sync of it comes before theirs; any thread of the first
  // set is ordered before any thread of the second (the generation
  // completes only after every arrival of it). Pairs with an empty side are
  // left out.
  std::vector<std::pair<ThreadSet, ThreadSet>> generationPairs(const SyncEvent &first,
                                                               const SyncEvent &second) const;
  // hi at one iteration of `loop`, lo at the next: a generation of that
  // loop's body at either iteration.
  bool generationWraps(const SyncEvent &lo, const SyncEvent &hi, int loop) const;

  // The cluster's extent along its axis, when clusters have a constant
  // extent along one axis (the others 1): the shapes the cluster checks model.
  std::optional<int64_t> clusterExtent() const;
  int clusterAxis() const;
  static bool remote(const MemoryAccess &a) { return a.remoteCta != nullptr; }

  // Outside loops: `first` delivers to (TMA with mbar = B) or arrives on an
  // mbarrier B after writing (mbarrier.arrive, or tcgen05.commit, which
  // arrives once the issuing thread's tcgen05 operations completed), and
  // every thread of `second` waits on B between them. One-shot barriers only (both outside loops);
  // phases of barriers in loops are the barrier proofs' business.
  // An access that completes later is released only by its own completion:
  // a TMA's delivery, a tcgen05.mma's commit.
  // The wait's parity must name the phase the signal completes (or a later
  // one), on the same barrier element (straightRound).
  bool handshake(const SyncEvent &first, const MemoryAccess &access, const SyncEvent &second) const;
  // The round of a straight-line event on its barrier element: earlier
  // waits of its threads on that element (a wait), or their earlier
  // arrivals (an arrival; a TMA delivery belongs to the phase of the
  // expect_tx before it). None when the element is not a constant, or an
  // earlier event on the array sits in a loop or crosses CTAs.
  std::optional<int64_t> straightRound(const SyncEvent &e) const;

  void checkPairs();

  // Where the two executors are: one CTA; two CTAs of the grid (global
  // memory); two CTAs of one cluster, or one (a DSMEM access); one thread,
  // which issued an asynchronous access and makes another access later.
  enum class Mode { SameCta, AcrossCtas, InCluster, SameThread };

  // The budget of the first, cheaper question about a pair (solvePair).
  static constexpr unsigned kFirstQueryBudgetMs = 100;
  // The first look of the linear over-approximation (solvePair): 100,000
  // units of rlimit. The pairs it proves in the library take 0.1-3 ms; the
  // ones it cannot prove (an address a thread computes with C's signed
  // division and remainder by constants, lifted from PTX) ran 1.5-4 s of
  // CPU each to the pre-check's whole budget, 100 of the 115 s `ptx check`
  // took on an FP8 GEMM. The whole budget is asked where the first cheap
  // exact question leaves the pair undecided, and before any pair is left
  // undecided, so the proofs are those of the whole budget.
  static constexpr unsigned kLinearFirstLookMs = 50;

  // One thread's asynchronous access and its own later access: program
  // order does not order them, since the asynchronous access completes
  // after its statement. Only the thread's observation of that completion
  // between them does (its mbarrier wait on the copy's phase, its
  // cp_async.wait or tma.store_wait retiring the group, the warpgroup's
  // wgmma.wait_group), in the same iteration or across loop iterations.
  void checkSameThread(const SyncEvent &ea, const MemoryAccess &a, const SyncEvent &eb,
                       const MemoryAccess &b);

  void checkPair(const SyncEvent &ea, const MemoryAccess &a, const SyncEvent &eb,
                 const MemoryAccess &b, Mode mode);

  // What orders two accesses of one CTA (see checkPair).
  struct Ordering {
    bool sameLoop = false, sameIteration = false, anyInBody = false, wrapsAround = false;
    const SyncEvent *lo = nullptr;  // the access earlier in program order
    bool fully = false;             // every execution pair is ordered
    bool differentClusters = false; // across CTAs: only CTAs of different clusters race
    bool warpOrdered = false;       // fully ordered for two threads of one warp (warp.sync)
    // Outside common loops, with no generation ordering every thread of
    // both accesses: pairs of thread sets (lo's, hi's) that some generation
    // of a named barrier orders, lo's thread arriving after its access and
    // hi's syncing before its own (generationPairs). Each warpgroup syncing
    // its own id before a TMA store of its rows is ordered this way.
    std::vector<std::pair<ThreadSet, ThreadSet>> pairOrdered;
    // One thread (Mode::SameThread): whether the first access (a) is the
    // asynchronous one, executed before the other.
    bool issuerIsA = false;
    // The access of lo / hi completes later (completesLater): barriers do
    // not order it before the other one.
    bool loLate = false, hiLate = false;
    // Per level m of the loops both accesses sit in (outermost first), for
    // executions whose iterations first differ at m: a barrier in that
    // loop or a deeper common one (anyFrom: orders lo before hi at a later
    // iteration; wrapFrom: one after hi or before lo, orders hi before lo
    // at a later iteration), and one in that loop's own body (direct:
    // orders them two or more iterations apart, whichever comes first).
    std::vector<bool> anyFrom, wrapFrom, direct;
  };

  // The ordering barriers (cluster barriers with `cluster`) give ea and eb:
  // the same iteration, adjacent iterations, farther ones (see checkPair).
  // A barrier orders an access that completes later (a TMA or cp.async
  // write, an MMA's operands) only through its completion, which the
  // per-executor orderings model: it is not taken as ordering it here.
  Ordering orderingOf(const SyncEvent &ea, const MemoryAccess &a, const SyncEvent &eb,
                      const MemoryAccess &b, bool useBarriers, bool cluster,
                      bool warpLevel = false);

  // --- Orderings decided per execution pair (added to a query that found
  // two unordered-looking executors, see solvePair) ---

  // One executor of a pair: its access, thread, iterations (outermost loop
  // first), loop variables and builtins, and the rank of its CTA in the
  // cluster (null without a modelled cluster).
  struct Side {
    const SyncEvent &ev;
    const MemoryAccess &acc;
    const z3::expr &t;
    const std::vector<z3::expr> &iters;
    const std::map<std::string, z3::expr> &bound;
    std::function<std::map<BuiltinKind, z3::expr>()> builtins;
    const z3::expr *rank;
    // The builtins of another thread of this executor's CTA.
    std::function<std::map<BuiltinKind, z3::expr>(const z3::expr &)> builtinsAt;
  };

  // Where a wait sits relative to the access y it orders (addHandshakes):
  // outside loops before y; in y's top-level loop at y's iteration (before
  // y) or at the one before; in the arrival's loop, which y follows.
  enum class WaitAt { OutsideLoops, SameIteration, PreviousIteration, ArrivalIteration };

  // Barriers that make every thread of `waiters` meet y's threads after
  // the wait w (placed as `at` says) and before y: a CTA barrier or a named
  // barrier joining them, or warp.sync (one warp only: the caller matches
  // warps). Only barriers outside conditions over sizes, in the loop of w or
  // of y (never an inner loop that might not run).
  std::vector<const SyncEvent *> relaysAfter(const SyncEvent &w, WaitAt at,
                                             const ThreadSet &waiters, const SyncEvent &y) const;

  // Threads of `set` standing for it as the thread that observes a
  // completion before a relay: the first one (any thread of the set meets y
  // at a CTA or named barrier), or, with warp.sync, the first one of each
  // warp, with the condition that y's thread is in that warp.
  std::vector<std::pair<int64_t, std::optional<z3::expr>>>
  relayThreads(const std::vector<const SyncEvent *> &relays, const ThreadSet &set,
               const z3::expr &yThread);

  std::vector<int> chainOf(const SyncEvent &e) const { return sk_.loopChain(e); }
  static bool isPrefix(const std::vector<int> &a, const std::vector<int> &b);
  // Whether the guards of `e` are a prefix of `of`'s (e is under no
  // condition over sizes or loop variables that `of` is not under).
  static bool guardsCover(const SyncEvent &e, const SyncEvent &of);
  bool readsLoopVar(const std::vector<Expr> &guards) const;
  // e's size guards, encoded; false when one cannot be.
  bool encodeGuards(const SyncEvent &e, const std::map<std::string, z3::expr> &bound,
                    const std::map<BuiltinKind, z3::expr> &builtins, z3::expr_vector &out);
  // A copy of `v` (copying a z3::expr_vector shares it).
  z3::expr_vector copyOf(const z3::expr_vector &v);
  // Whether some model of the where clause satisfies `cons` (unknown: yes).
  bool satisfiable(const z3::expr_vector &cons);

  // How the barrier index of an event in a top-level loop moves with the
  // iteration: 1 when it is constant, S (the array's size) when S
  // consecutive iterations touch S distinct elements and the pattern repeats
  // ((i + c) % S), 0 otherwise. Then the event's own round on its element at
  // iteration i is i / period.
  int64_t periodOf(const SyncEvent &e);

  // The round of an arrival (arrive, tcgen05.commit), TMA delivery or wait on
  // its barrier element at iteration i of its loop, as the barrier proofs
  // count them: phase n of an element is completed by round n of every
  // arriving event, and a wait of parity p at round n means phase n when
  // p = n (mod 2), else n - 1. Outside loops the k-th event of its kind on
  // the element by its threads is round k (a delivery: that of the last
  // arrival before it). Nothing when the rounds are not that simple.
  std::optional<z3::expr> roundOf(const SyncEvent &e, const std::optional<z3::expr> &i,
                                  const std::map<BuiltinKind, z3::expr> &builtins);

  // The first iteration from which e's guards hold, when they read its loop
  // variable only as a threshold (`if k > 0`: from iteration 1 on; no guard
  // over the loop variable: 0). Then its executions before iteration i are
  // i - first.
  std::optional<int64_t> firstIteration(const SyncEvent &e);
  static bool intersects(const ThreadSet &a, const ThreadSet &b);

  // The condition under which barrier event r, executed by x's CTA, lands on
  // the barrier of y's CTA.
  std::optional<z3::expr> reaches(const SyncEvent &r, const Side &x, const Side &y);

  // mbarrier handshakes from x to y: x's thread releases its access by an
  // arrival on an element after it (mbarrier.arrive; tcgen05.commit, which
  // arrives when the thread's tcgen05 operations completed; for a TMA write,
  // the delivery itself), and y's thread waits, before y, for a phase that
  // the arrival's round completes. Each handshake is a formula over the two
  // executors' threads and iterations: the arrival at x's iteration of its
  // loop (in x's loop, after x, or outside loops), the wait at y's
  // iteration, the one before it, or, when y follows the wait's loop, the
  // arrival's iteration.
  // A TMA store x whose writes its issuing threads saw complete before
  // arrival r: a tma.store_wait(0) for the writes (not `read = true`) by
  // x's issuers, after a commit that closed x's group, then a
  // fence.proxy.async(space = "global") of theirs, before r in r's loop and
  // iteration; r is made by those issuers (the wait makes the async proxy's
  // writes visible to the issuing thread, the proxy fence orders them before
  // its generic accesses, its arrival releases them).
  bool storeCompletedBefore(const SyncEvent &x, const SyncEvent &r);

  void addHandshakes(const Side &x, const Side &y, std::vector<z3::expr> &out);

  // A wgmma.mma_async's operand reads and accumulator writes are finished,
  // for its whole warpgroup, once the warpgroup committed its group and
  // waited with wgmma.wait_group(0) (both after it, before y, in the same
  // iterations of the loops they share).
  void addWgmmaRetired(const Side &x, const Side &y, std::vector<z3::expr> &out);

  // Whether y comes after event b executed at iterations `at` of the loops
  // `chain` (b's, outermost first): later in the first of their common
  // loops where the iterations differ, or in the same iterations and after
  // b in program order.
  z3::expr afterAt(const SyncEvent &b, const std::vector<z3::expr> &at,
                   const std::vector<int> &chain, const Side &y);

  // A cp.async write x is complete, for its thread, at a cp_async.wait(n)
  // of that thread with at least n commits after the one that closed x's
  // group (`copy_async` without an mbarrier closes its own), all in the same
  // iteration and unconditional (conditional commits only make the group
  // older). A barrier after that wait, joining x's threads with y's, orders
  // x before y when y comes after it: later in the same iteration or in a
  // later iteration of the loops they share. For y by x's own thread
  // (`own`), the wait itself orders x before y when y comes after it.
  void addCpAsyncCompleted(const Side &x, const Side &y, std::vector<z3::expr> &out,
                           bool own = false);

  // A TMA store x reads its shared source (and writes global memory) until
  // a tma.store_wait(n) of its issuing threads (for the write, not a
  // `read = true` one) with at least n unconditional commits after the one
  // that closed x's group: the first unconditional tma.store_commit by
  // those threads after x, in x's loop or one around it. The wait sits in
  // that commit's loop, unconditional; the execution that retires x's group
  // is the first that has n such commits after the group's (the same
  // iteration, when the wait follows the commit with enough commits between,
  // else d iterations of that loop later: the library's epilogue waits at
  // the top of the next tile, a double-buffered one with n = 1 two rounds
  // on), counted on into later iterations of the loops around it when the
  // loop ends first (a round loop's last store, retired at the top of the
  // next tile's first round). A barrier joining the issuing threads with
  // y's that runs after that wait, in the commit's loop or one around it
  // (later in its iteration, or at a later iteration of its own loops),
  // orders x before y when y comes after it; for y by x's own thread
  // (`own`), the wait itself does. Commits under conditions or in inner
  // loops are not counted (they only make the group older); a wait under a
  // condition counts only at that execution where its condition holds, and
  // a barrier under one is not used.
  void addTmaStoreCompleted(const Side &x, const Side &y, std::vector<z3::expr> &out,
                            bool own = false);

  // Points `offset` iterations of the innermost loop of `chain` (outermost
  // first) after `at` (x's iterations of those loops, or more), one
  // alternative per level: in the same iterations of the outer loops, or
  // past the end of the innermost loop in a later iteration of an outer one
  // (the loops between at their first iteration, the innermost at the
  // iterations still owed, at least 0). Each comes with the condition that
  // its iterations exist; between `at` and any of them the innermost body
  // runs at least offset - 1 times. The bounds read x's builtins.
  // Each loop's trip count at iterations `at` of the loops `chain`
  // (outermost first; builtins: the executor's), and the loop variables
  // bound there (the innermost one only with bindAll: no trip count reads
  // it). Each term is encoded once: divisions in a bound bring fresh
  // unknowns, and the shared solver's search depends on the terms it holds.
  struct ChainBinding {
    std::map<std::string, z3::expr> bound;
    std::vector<z3::expr> trips;
  };
  std::optional<ChainBinding> bindChain(const std::vector<int> &chain,
                                        const std::vector<z3::expr> &at,
                                        const std::map<BuiltinKind, z3::expr> &builtins,
                                        bool bindAll = false);
  std::vector<std::pair<std::vector<z3::expr>, z3::expr>>
  laterIterations(const std::vector<int> &chain, const std::vector<z3::expr> &at, int64_t offset,
                  const Side &x);

  std::vector<z3::expr> orderingEscapes(const Side &a, const Side &b, const Ordering &ord,
                                        Mode mode);

  // Two CTAs never synchronise: a global-memory pair is also asked for two
  // executors in distinct CTAs of the grid, with no ordering at all.
  bool ctaIndices(const std::string &tag, std::vector<z3::expr> &cta, z3::expr_vector &cons);

  // Regions that depend on the thread index only (constants, builtins of
  // the thread): decided by listing every thread's elements, no two
  // distinct threads of the two sides sharing one (guards only narrow who
  // runs them). Swizzled shared-memory addresses lifted from PTX are of this
  // kind, and their mod terms are slow in Z3.
  // The pairs of distinct threads whose elements meet (nullopt: not such
  // regions, or more than `cap` pairs).
  std::optional<std::vector<std::pair<int64_t, int64_t>>>
  collisionsPerThread(const SyncEvent &ea, const MemoryAccess &a, const SyncEvent &eb,
                      const MemoryAccess &b, size_t cap) const;

  // Looks for two executors touching one element under `ord`; sat reports
  // the race. With acrossCtas, the executors are in distinct CTAs.
  z3::check_result solvePair(const SyncEvent &ea, const MemoryAccess &a, const SyncEvent &eb,
                             const MemoryAccess &b, const Ordering &ord, Mode mode);

  // The solver every pair shares, with the where clause added as it grows
  // (blockIdx ranges appear lazily). What it is told waits in pending_ until
  // a pair needs it, and reaches it then in the order it always did (the
  // where clause as it stood at each pair, then that pair's constraints):
  // most kernels' pairs are all decided by the one-shot questions, and a
  // default solver costs 8 ms before its first answer.
  void queueAssumptions();
  z3::solver &pairSolver();

  // `s` checked under `assumptions` with the limits of `budgetMs`, set
  // anew for each query so that the command's deadline is current.
  z3::check_result checkWithin(z3::solver &s, const z3::expr_vector &assumptions,
                               unsigned budgetMs);
  // The first question of solvePair: a budget of kFirstQueryBudgetMs in Z3's
  // units (if it gives up, the full query decides).
  z3::check_result checkFirst(z3::solver &s, const z3::expr_vector &assumptions);

  void checkProxyFences();

  // --- The witness of a race (RaceWitness.cpp) ---

  // The skeleton's integer size symbols that the encoder holds, in the
  // skeleton's order.
  std::vector<std::pair<std::string, z3::expr>> sizeSymbols() const;
  // Rung k of the ladder of witness sizes: the least admitted sizes (each
  // lowered in turn, in sizeSymbols' order, under the where clause alone)
  // with every size at least 2^k times its value on rung 0. Nothing past
  // the ladder's end (no admitted sizes, or the same as the rung below).
  const std::optional<SizeAssignment> &sizeRung(size_t k);
  // The first rung at which `query` (a pair's constraints with its
  // orderings) is satisfiable, each asked in a one-shot solver of its own
  // (constant sizes make the divisions by sizes linear: milliseconds where
  // the symbolic lowering took seconds), then each size in turn lowered to
  // its value on the lowest rung below where the query still is, the others
  // held. Nothing when no rung of kSizeRungs is, or a rung's query is
  // undecided.
  std::optional<SizeAssignment> witnessSizes(const z3::expr_vector &query);
  // Every size equal to its value in `at`.
  z3::expr pinnedAt(const SizeAssignment &at);
  // The least witness of `query` at the sizes witnessSizes gives, `values`
  // lowered in turn in a solver of the query's own (so the witness does not
  // depend on what the shared solver was asked before); nothing when there
  // are no such sizes or that solver gives up.
  std::optional<z3::model> leastAtSizes(const z3::expr_vector &query,
                                        const std::vector<z3::expr> &values,
                                        const std::string &name);
  static constexpr size_t kSizeRungs = 12;
  std::vector<std::optional<SizeAssignment>> rungs_;

  BarrierSkeleton sk_;
  RaceOptions opt_;
  z3::context &ctx_ = detail::sharedContext();
  ProtoEncoder enc_;
  // The named barriers' generations (those proved consistent).
  NamedBarrierModel named_;
  std::optional<z3::solver> solver_;
  unsigned assumed_ = 0;
  z3::expr_vector pending_{ctx_};
  // The linear over-approximation (LinearPrecheck.h), tried first.
  detail::LinearPrecheck linear_{ctx_, opt_.timeoutMs};
  int pairs_ = 0;
  // Pairs per buffer on which Z3 gave up (see solvePair).
  static constexpr int kGiveUpsPerBuffer = 2;
  std::map<std::string, int> gaveUpOn_;
  RaceReport report_;
  std::set<std::string> loopVars_;
  bool undecided_ = false;                      // satisfiable() met an undecided query
  bool ringRoundsUnmodelled_ = false;           // see checkPair
  std::vector<bool> loopRunsOnce_;               // see findLoopsRunningOnce
  bool handshakeUnmodelled_ = false;            // see addHandshakes
  std::map<const SyncEvent *, int64_t> period_; // see periodOf
  std::map<const SyncEvent *, std::optional<int64_t>> first_; // see firstIteration
};

} // namespace tilescope::detail
