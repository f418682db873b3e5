// Internal to the barrier proofs (verifier/BarrierProofs.h): the prover's
// shared proof context (the solver, the encoder, the loops' nests, the
// barriers' patterns and rounds) and its obligations, one file each:
// BarrierEncoding.cpp (encoding, solver queries, index patterns and rounds,
// witnesses), BarrierPhases.cpp (arrivals, transaction bytes and waits per
// phase, clusters), BarrierDeadlock.cpp (the ordering graph, deadlock cycles,
// parity aliasing, lagging waiters), BarrierStages.cpp (pipeline stages),
// BarrierStructural.cpp (the size-independent structural checks), and
// BarrierProofs.cpp (the order of the proofs and the entry points). Exposes
// z3++.h: include it only from those files.
#pragma once

#include "proof/QueryDeadline.h"
#include "proof/LeastWitness.h"
#include "proof/LinearPrecheck.h"
#include "proof/ProtoEncoding.h"
#include "proof/SharedContext.h"
#include "proof/SolverBudget.h"
#include "sync/BarrierPatterns.h"
#include "sync/BarrierSkeleton.h"
#include "verifier/BarrierProofs.h"
#include "verifier/StagePairs.h"
#include "verifier/StructuralChecks.h"

#include <z3++.h>

#include <climits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tilescope::detail {
constexpr int64_t kNoPath = INT64_MIN / 4;

// How an index (a barrier element or a pipeline stage) moves with the
// iteration of its loop: sync/BarrierPatterns.h, shared with the race
// check.
using Pattern = IndexPattern;

inline bool isArrival(SyncKind k) {
  return k == SyncKind::MbarArrive || k == SyncKind::Tcgen05Commit;
}
inline bool isTx(SyncKind k) {
  return k == SyncKind::MbarExpectTx || k == SyncKind::TxDelivery || k == SyncKind::MbarCompleteTx;
}
// Events a wait needs for its phase to complete.
inline bool completesPhase(SyncKind k) {
  return isArrival(k) || k == SyncKind::TxDelivery || k == SyncKind::MbarCompleteTx;
}

class BarrierProver {
public:
  BarrierProver(const BarrierSkeleton &sk, const BarrierProofOptions &opt)
      : original_(sk), view_(hoistInnerAccesses(sk)), sk_(view_), opt_(opt), enc_(ctx_, view_) {}

  BarrierReport run();

private:
  // The size-independent checks, then the exhaustive fallback where a proof
  // left an obligation open.
  void finishStructural();

  // --- encoding helpers ---

  // The loop variables of ev's loops at flattened iteration i (see
  // prepareLoops): level m of a nest runs (i / stride_m) % trip_m.
  std::optional<std::map<std::string, z3::expr>> loopValues(const SyncEvent &ev, const z3::expr &i);

  std::optional<z3::expr> at(const Expr &e, const SyncEvent &ev, const z3::expr &i);

  // Whether ev's loop takes part in the symbolic proofs.
  bool modelled(const SyncEvent &ev) const;

  z3::expr fires(const SyncEvent &ev, const z3::expr &i);

  // Barrier events outside loops run once; several on one element in one
  // role are consecutive rounds: the k-th arrival (or wait) is round k, an
  // expect_tx belongs to the arrival it comes with, a delivery to the last
  // expect_tx before it.
  void numberOneShotRounds();

  void prepareLoops();

  // One solver for every query: each query's constraints are guarded by a
  // fresh literal and checked under it, so nothing leaks between queries and
  // the solver (with the where clause) is built once. Two cheaper questions
  // come first, each of which can only answer what the exact query would:
  // a query that only asks whether a model exists (no witness wanted) is
  // tried at the sample sizes (chooseSampleSizes(); a model there is a model), and
  // every query is asked as its linear over-approximation (LinearPrecheck.h;
  // its unsat is a proof).
  class Query {
  public:
    Query(BarrierProver &prover, z3::expr literal)
        : prover_(prover), literal_(std::move(literal)), constraints_(literal_.ctx()) {}
    void add(const z3::expr &e) { constraints_.push_back(e); }
    // Witness values to make least, in order (iterations first, then sizes;
    // LeastWitness.h), so a counterexample reads "k = 0, K = 64" whatever
    // model Z3 found first.
    void prefer(const z3::expr &e) { small_.push_back(e); }
    z3::check_result check() {
      if (small_.empty() && satAtSample())
        return z3::sat;
      if (prover_.linear_.unsat(prover_.enc_.assumptions(), constraints_))
        return z3::unsat;
      // The exact query, in the shared solver under this query's literal.
      for (unsigned k = 0; k < constraints_.size(); ++k)
        base().add(z3::implies(literal_, constraints_[int(k)]));
      z3::expr_vector a(literal_.ctx());
      a.push_back(literal_);
      // The limits again, so that the command's deadline is current.
      z3::params p(literal_.ctx());
      setSolverBudget(p, prover_.opt_.timeoutMs);
      base().set(p);
      z3::check_result r = checkWithinBudget(base(), a);
      if (r == z3::unknown && !prover_.gaveUp_) {
        prover_.gaveUp_ = true;
        prover_.gaveUpReason_ = reasonUnknown(base());
      }
      if (r != z3::sat)
        return r;
      sampleModel_ = detail::minimizeWitness(base(), a, small_, literal_.to_string());
      return z3::sat;
    }
    // The model of the sample sizes or the least witness, else the solver's.
    z3::model get_model() const { return sampleModel_ ? *sampleModel_ : base().get_model(); }
    std::string reason_unknown() const { return reasonUnknown(base()); }

  private:
    z3::solver &base() const { return *prover_.base_; }
    // With every size fixed the query is linear, and a one-shot solver that
    // propagates the values first decides it in well under a millisecond.
    bool satAtSample() {
      if (prover_.sample_.empty())
        return false;
      z3::solver s = oneShotSolver(literal_.ctx(),
                                   std::min(prover_.opt_.timeoutMs, detail::kPrecheckBudgetMs));
      s.add(prover_.enc_.assumptions());
      s.add(prover_.sample_);
      s.add(constraints_);
      bool sat = checkWithinBudget(s) == z3::sat;
      if (sat)
        sampleModel_ = s.get_model();
      return sat;
    }

    BarrierProver &prover_;
    z3::expr literal_;
    z3::expr_vector constraints_;
    std::optional<z3::model> sampleModel_;
    std::vector<z3::expr> small_;
  };

  Query solver();

  // Every shape symbol fixed to one value the where clause admits (the
  // first of a few round sizes that fits), for the existence queries of
  // Query::check; none when no candidate fits.
  void chooseSampleSizes();

  bool provedEqual(const z3::expr &a, const z3::expr &b);

  // sat: a model in `model`, small where it can be (a witness); unsat;
  // unknown is recorded as not proved.
  z3::check_result check(Query &s, std::optional<z3::model> &model, llvm::SMLoc loc,
                         const std::string &what);
  // The same without a witness.
  z3::check_result decide(Query &s, llvm::SMLoc loc, const std::string &what);

  // Patterns depend on the loop, the index and the period alone; events of
  // one loop often share an index (`s` for the wait, the arrival and the
  // copies of one stage), so each is derived once.
  Pattern patternOf(const SyncEvent &ev, const Expr &index, int64_t period);

  // The one derivation of index patterns (proof/IndexPatterns.h,
  // elementPattern), shared with the race check, over this prover's
  // encoding and solver.
  Pattern derivePattern(const SyncEvent &ev, const Expr &index, int64_t period);

  // The iteration at which an event with pattern p touches element j for
  // the n-th time (n from 0), and whether it ever touches j.
  z3::expr iterOf(const Pattern &p, const z3::expr &j, const z3::expr &n);
  z3::expr touches(const Pattern &p, const z3::expr &j);
  std::pair<z3::expr, z3::expr> roundOf(const Pattern &p, const z3::expr &i);

  // --- witnesses ---

  std::string iterationText(const z3::model &m, const SyncEvent &ev, const z3::expr &i);
  std::string sizes(const z3::model &m);
  static std::string phaseText(int64_t phase);

  void finding(ProtocolViolationKind kind, llvm::SMLoc loc, std::string message,
               std::vector<std::pair<llvm::SMLoc, std::string>> notes = {}, bool symbolic = true);
  void result(std::string property, bool proved, std::string status);

  // --- mbarrier phases ---

  struct BarrierInfo {
    const BarrierArray *arr = nullptr;
    std::optional<int64_t> count;
    std::vector<size_t> events;
    bool symbolic = false; // every event's pattern is known
  };

  z3::expr amountOf(const SyncEvent &ev, const z3::expr &i, bool &ok);

  // A ring whose index runs past the array (a stage count off by one).
  void checkIndexRange(const BarrierArray &arr, const SyncEvent &ev);

  void analyseBarrier(const BarrierArray &arr);

  // The release of the previous stage in a mainloop that keeps one wgmma
  // group in flight:
  //   for k in 0 .. kt { ...  if k > 0 { mbarrier.arrive(empty[(k + d) % S]) } }
  //   mbarrier.arrive(empty[(kt + d) % S])
  // The arrival at iteration k >= 1 is the release of iteration k - 1 (its
  // element (k - 1 + c) % S with c = (d + 1) % S, its round (k - 1) / S),
  // and the arrival after the loop that of iteration kt - 1: one release per
  // iteration, each one iteration later in program order (Pattern::shift).
  // Matched only exactly: a loop from 0 in steps of 1, not nested; `k > 0`
  // (or `k >= 1`) its only guard; the arrival after the loop by the same
  // threads of the same role with the same count, unguarded, and, for every
  // admitted size, kt >= 1 and its element (kt - 1 + c) % S. Without such
  // an arrival the loop's releases are modelled alone (iteration kt - 1 is
  // then never released). Returns the arrival after the loop it absorbs.
  std::optional<size_t> matchShiftedRelease(const BarrierArray &arr, size_t e,
                                            const std::vector<size_t> &events);

  // A prefetch d iterations ahead, a loop peeled into a prologue and a
  // steady state (Triton's pipelined loops):
  //   if n > 0 { arrive(full[0]) } ... if n > d - 1 { arrive(full[d - 1]) }
  //   for it in 0 .. n { wait(full[it % S]); ...; if it < n - d { arrive(full[(it + d) % S]) } }
  // The arrival at iteration it is the one of iteration it + d (Pattern::
  // shift = -d), and copy k of the prologue that of iteration k, run at the
  // virtual iteration k - d. Each runs exactly when its own guards hold
  // (fires() encodes them as written: nothing is assumed about their form).
  // Matched for an arrival, expect_tx, delivery or complete_tx in a loop
  // from 0 in steps of 1, not nested, whose guards read the loop variable,
  // with index (it + c) % S over the whole array; the copies are events
  // outside loops before it, of the same kind, role, threads and scope (each
  // with its own amount, which amountOf reads), in program order, copy k on element (k + c - d) %
  // S, for the largest d in 1 .. S - 1 that has them all. Returns the copies (absorbed: their
  // rounds are the shifted event's), or nothing.
  std::optional<std::vector<size_t>> matchPrefetch(const BarrierArray &arr, size_t e,
                                                   const std::vector<size_t> &events,
                                                   const std::set<size_t> &taken);

  // Rounds are phases only when the rounds each element gets arrivals in
  // have no gap (a guard that skips a round in the middle shifts the later
  // phases): with prefetches, proved for every element and round n >= 1 (an
  // arrival in round n implies one in round n - 1) before their phases are
  // trusted.
  bool roundsWithoutGaps(const BarrierInfo &info);

  // `k > 0` or `k >= 1` (either way round) over the loop variable k.
  static bool firstIterationGuard(const Expr &g, const std::string &var);

  // Whether the arrival `after`, outside loops, touches element
  // (trip - 1 + c) % S of the loop of `release` for every admitted size,
  // and the loop runs at least once (else it would release an iteration
  // that never ran).
  bool releasesLastIteration(const SyncEvent &after, const SyncEvent &release, const Pattern &p);

  bool guardedByIteration(const SyncEvent &ev) const;
  bool txOfUnguardedRound(const BarrierInfo &info, const SyncEvent &ev) const;

  // The round-n events of element j of `arr` that match `pick`, as
  // (fires, amount) terms.
  // In a cluster the terms are those reaching element j of the CTA of rank
  // receiver() (see clusterTerms).
  struct Term {
    size_t event;
    z3::expr fires, amount, iteration;
    int64_t sender = -1; // the CTA rank issuing a cross-CTA term
  };
  // Where a term's event runs in the model: a prefetch's prologue copy at
  // its virtual iterations, else the event.
  llvm::SMLoc termLoc(const z3::model &m, const Term &t);
  std::vector<Term> roundTerms(const BarrierInfo &info, const z3::expr &j, const z3::expr &n,
                               bool (*pick)(SyncKind), bool &ok);

  // --- clusters ---
  //
  // Every CTA of a cluster runs the same code with its own rank (its
  // clusterCtaIdx along the cluster's axis, ClusterShape), so the arrivals and bytes that element j
  // of the barrier of the CTA of rank ρ (receiver()) receives in round n are its own local events
  // at ρ, plus, from every rank σ of the cluster, the remote arrivals
  // (`cta = r`) whose r is ρ at σ and the multicasts whose mask has bit ρ
  // at σ. With the cluster's extent a constant C, σ runs over 0 .. C - 1:
  // one term per sender. The rounds are numbered alike in every CTA (the
  // barrier index may not read the rank: patternOf refuses what it cannot
  // encode).

  static BuiltinKind clusterCtaIdxOf(int axis);
  static BuiltinKind blockIdxOf(int axis);

  // The receiving CTA is the one whose blockIdx the encoder's symbol names;
  // its rank is that blockIdx modulo C (clusters tile the grid along the
  // axis), and a sender of rank σ has blockIdx (blockIdx - ρ + σ).
  z3::expr receiverBlock();
  z3::expr receiver() { return z3::mod(receiverBlock(), ctx_.int_val(*clusterCtas_)); }
  void encodeAsRank(const z3::expr &rank);

  // Whether the cross-CTA event ev issued by rank σ at iteration i reaches
  // the barrier of the CTA of rank `target` (the receiver's by default;
  // rank_ is σ while this runs).
  std::optional<z3::expr> reaches(const SyncEvent &ev, const z3::expr &i,
                                  std::optional<z3::expr> target = std::nullopt);

  void clusterTerms(size_t e, const z3::expr &i, const z3::expr &touched, std::vector<Term> &out,
                    bool &ok);

  // " of the CTA of rank 1" in a cluster, for the witnesses of counts.
  std::string receiverText(const z3::model &m);

  // The barriers that cross-CTA events in loops reach. (Events outside
  // loops are not in the graph at all.)
  std::string crossCtaBarriers() const;

  // --- the ordering graph over the CTAs of a cluster (BarrierCluster.cpp) ---
  //
  // Where cross-CTA events in loops reach a barrier, the graph has one node
  // per event and rank of a constant cluster of C <= kMaxClusterRanks CTAs
  // (ranks enumerated, C copies of one CTA's events): program order inside
  // each CTA, and a wait of rank ρ needs the events completing its phase in
  // every CTA that sends to it (a remote arrival whose `cta` is ρ, a
  // multicast whose mask has bit ρ). What a node says is encoded for its
  // CTA (RankScope: rank r, blockIdx the cluster's first plus r; the
  // cluster itself, its first blockIdx, stays symbolic). Taken only when
  // every loop runs alike in every CTA of the cluster (begin, step and trip
  // count proved equal for every rank, so an iteration number means the
  // same loop values everywhere), no cluster barrier sits in a loop (its
  // cross-CTA joins are not edges), and no DSMEM access touches a buffer a
  // multicast writes; otherwise `why` says what is missing and the graph's
  // proofs stay not proved. Returns whether the graph is built per rank.
  bool clusterGraphModelled(std::string &why);
  static constexpr int64_t kMaxClusterRanks = 4;
  // Ranks the graph enumerates (1 without: the CTA of the symbolic receiver).
  int64_t graphRanks() const { return perRank_ ? *clusterCtas_ : 1; }
  // The node of event e in the CTA of rank r (r < 0: the one node).
  size_t nodeAt(size_t e, int64_t r) const {
    return size_t(nodeOf_.at(e)) + size_t(r < 0 ? 0 : r) * baseNodes_;
  }
  int64_t rankOfNode(size_t node) const {
    return perRank_ ? int64_t(node / baseNodes_) : -1;
  }
  // rank >= 0: encode for the CTA of that rank while the scope lives.
  class RankScope {
  public:
    RankScope(BarrierProver &p, int64_t rank) : p_(p), rank_(p.rank_), block_(p.block_) {
      if (rank >= 0)
        p.encodeAsRank(p.ctx_.int_val(rank));
    }
    RankScope(BarrierProver &p, const z3::expr &rank) : p_(p), rank_(p.rank_), block_(p.block_) {
      p.encodeAsRank(rank);
    }
    ~RankScope() {
      p_.rank_ = rank_;
      p_.block_ = block_;
    }
    RankScope(const RankScope &) = delete;
    RankScope &operator=(const RankScope &) = delete;

  private:
    BarrierProver &p_;
    std::optional<z3::expr> rank_, block_;
  };
  z3::expr firesAt(const SyncEvent &ev, const z3::expr &i, int64_t rank) {
    RankScope scope(*this, rank);
    return fires(ev, i);
  }
  // " of the CTA of rank r" (nothing for r < 0).
  static std::string rankText(int64_t r);
  // The edge from the wait w of rank rho to the completing event e of rank
  // sigma (extraRounds: the phase after the wait's, for aliasing): its
  // constant iteration distance when e at sigma reaches rho's phase in every
  // execution of the wait, nothing when it never does; `unknown` is set
  // when neither is proved.
  std::optional<int64_t> crossDelta(size_t w, int64_t rho, size_t e, int64_t sigma, int64_t d,
                                    int64_t extraRounds, bool &unknown);
  bool perRank_ = false;
  size_t baseNodes_ = 0;

  static z3::expr sumOf(z3::context &ctx, const std::vector<Term> &terms);
  static z3::expr anyOf(z3::context &ctx, const std::vector<Term> &terms);

  std::string termList(const z3::model &m, const std::vector<Term> &terms, const char *unit);

  void checkArrivals(const BarrierInfo &info);

  // Where the rounds of a barrier are out of the model's reach, what needs
  // no rounds: one execution of an arrival brings more arrivals than the
  // count (a phase takes at most `count`), a linear fact of the amount and
  // the executing threads, decided for all sizes and iterations without
  // exploring states.
  void checkArrivalsPerExecution(const BarrierInfo &info);

  void checkTransactions(const BarrierInfo &info);

  void checkWait(const BarrierInfo &info, size_t w);

  // --- the dependency graph: who must happen before whom ---
  //
  // Nodes are events in non-nested loops. An edge a -> b of weight w says
  // "a at iteration x happens after b at iteration x + w" (w <= 0): program
  // order within a role (same iteration: w = 0 to an earlier statement;
  // earlier iterations: w = -1), and a wait's need for the arrivals and
  // transactions of the phase it waits for. D[a][b] is the heaviest path:
  // a at x happens after b at every iteration <= x + D[a][b].

  void buildGraph();

  // A path a -> ... -> b of D_ says that each thread of a runs after b as
  // executed by the same thread (program order) or by whoever completes a
  // phase (a wait): not that a follows every thread's b. A refill of a stage
  // must follow the reads of EVERY reading thread, so the stage proofs use
  // everyD_: heaviest paths over (node, every) states, where `every` says
  // that the path's start follows the node as executed by all its threads.
  // A wait's edge to the events completing its phase reaches all of them; a
  // program-order edge a -> b keeps `every` when each thread (or collective
  // unit) of b is one of a's, and a barrier that joins its threads (cta.sync,
  // a named barrier of its own threads) restores it. So a release by one
  // thread orders only its own plain reads before the refill.
  bool joinsItsThreads(const SyncEvent &e) const;

  template <class Edges> void closeEveryThreadPaths(const Edges &edges);

  // Heaviest path from a to b such that a follows b as executed by every
  // thread of b (closeEveryThreadPaths).
  // A path may end at an MMA's `own` state (2N + b): a follows b's
  // retirement for its whole warpgroup, not what b's threads did before it.
  int64_t everyPath(size_t a, size_t b) const {
    return std::max(everyD_[2 * a + 1][2 * b + 1], everyD_[2 * a + 1][2 * nodes_.size() + b]);
  }

  // Heaviest paths (weights <= 0; a cycle of weight 0 is a deadlock).
  template <class Edges>
  void closePaths(const Edges &edges, bool withCycleOnly, std::vector<std::vector<int64_t>> &D,
                  std::vector<std::vector<int>> &next, size_t N = SIZE_MAX) {
    if (N == SIZE_MAX)
      N = nodes_.size();
    D.assign(N, std::vector<int64_t>(N, kNoPath));
    next.assign(N, std::vector<int>(N, -1));
    for (const auto &e : edges)
      if ((withCycleOnly || !e.cycleOnly) && e.w > D[e.a][e.b]) {
        D[e.a][e.b] = e.w;
        next[e.a][e.b] = int(e.b);
      }
    for (size_t k = 0; k < N; ++k)
      for (size_t a = 0; a < N; ++a) {
        if (D[a][k] == kNoPath)
          continue;
        for (size_t b = 0; b < N; ++b) {
          if (D[k][b] == kNoPath)
            continue;
          // A path of positive weight (through a wait for a later
          // iteration's arrival) still orders a after b at iteration x: capped
          // at 0, so the heavier first edge does not hide the cycle.
          int64_t w = std::min<int64_t>(std::max(D[a][k] + D[k][b], kNoPath), 0);
          if (w > D[a][b]) {
            D[a][b] = w;
            next[a][b] = next[a][k];
          }
        }
      }
  }

  // A wgmma.mma_async whose group is retired by a wgmma.wait_group(n >= 1)
  // of a later iteration: the smallest such n for `later`, when the wait lies
  // after the commit that closes the MMA's group and before `later` in the
  // body. Every iteration commits at least one group, so n groups in flight
  // are at most n iterations: `later` at iteration x runs after the MMA of
  // iteration x - n completed (the "one group in flight" mainloop).
  std::optional<int64_t> groupsInFlight(size_t mma, size_t later) const;

  // Whether a wgmma.wait_group of the same role and loop that retires
  // `mma`'s group lies between `mma` and `before` in program order (anywhere
  // after mma when before is SIZE_MAX): a wait_group(0), or a wait_group(n)
  // with n unguarded commits of the same iteration between the commit that
  // closes the MMA's group and the wait (S = Q K^T retired by wait_group(1)
  // while O += P V still runs).
  bool waitedAfter(size_t mma, size_t before) const;

  // iteration(event e in the wait's phase) - iteration(wait), when constant.
  std::optional<int64_t> constantDelta(size_t w, size_t e, int64_t d, int64_t extraRounds = 0);

  std::vector<size_t> cycleThrough(size_t a);

  void findDeadlockCycles();

  // A wait for phase t must not see phase t + 1 complete before it runs
  // (per rank of the per-rank graph; rho < 0 without).
  void checkAliasing();
  void checkAliasing(size_t w, int64_t d, int64_t rho);
  // ", over every rank of the cluster of C CTAs ..." for the per-rank graph.
  std::string clusterScopeText() const;

  // The DESIGN's "arriving more often than the count in one phase is an
  // error", as an order: an arrival or expect_tx of round n >= 1 on element
  // j must run after phase n - 1 of j completed, and the only thing that
  // tells a thread so is a wait for that phase (by the thread, or before
  // whatever orders the thread after it: a path of D_). Asked per
  // arrival in the graph: the iterations where no wait for the phase
  // before it lies on such a path (a one-shot wait before the loop, by
  // the same threads, counts too; on a barrier of plain arrivals alone,
  // following every arrival of that phase as all their threads does) are a
  // finding when the graph holds every wait's edges (graphComplete_), else
  // not proved.
  // In the per-rank graph of a cluster, asked for every rank's nodes: a
  // local arrival on its own CTA's barrier, a remote one on the barrier of
  // every rank it may reach, ordered by that CTA's waits.
  void checkArrivalOrder();
  // The over-arrival witness of node a on the barrier of the CTA of rank r
  // (r < 0 outside the per-rank graph), nothing where the order is proved;
  // `undecided` when the arrival's target is not encoded.
  std::optional<std::string> arrivalAhead(size_t a, int64_t r, bool &undecided);

  // A warp that waits on an mbarrier in a loop but neither feeds a barrier
  // there nor meets a feeding warp of its role in a collective is not held
  // back by anything: the feeding warps can lap it by two phases, after which
  // its parity wait refers to a phase two behind, and its last waits may never
  // complete. The proofs above model a role as one sequential process, so
  // they cannot see this; it is checked here per warp, structurally.
  void checkLaggingWaiters();

  // --- pipeline stages: read-after-write and write-after-read ---

  void checkStages();

  // The fill x by the CTA of rank sigma of the buffer of the CTA of rank rho,
  // the read r by rho (both -1 outside the per-rank graph).
  bool readAfterWrite(const std::string &buffer, size_t x, const Pattern &px, size_t r,
                      const Pattern &pr, int64_t sigma = -1, int64_t rho = -1);

  bool writeAfterRead(const std::string &buffer, size_t x, const Pattern &px, size_t r,
                      const Pattern &pr, int64_t sigma = -1, int64_t rho = -1);

  // Whether x (by sigma) writes the buffer of rho at iteration i: always for
  // one CTA; a multicast where its mask has bit rho, a plain write where
  // sigma == rho.
  z3::expr writesInto(const SyncEvent &x, const z3::expr &i, int64_t sigma, int64_t rho);

  // --- structural checks ---

  // mbarrier inits per element and named barriers as generations
  // (StructuralChecks.h); CTA barriers reached by every thread.
  void checkInit();

  void checkCtaBarriers();

  // Findings into the report; open obligations into `open` (the report's
  // notProved by default).
  template <typename Check>
  void mergeStructural(Check check,
                       std::vector<std::pair<llvm::SMLoc, std::string>> *open = nullptr) {
    StructuralResult r;
    check(r);
    for (ProtocolFinding &f : r.findings)
      finding(f.kind, f.loc, std::move(f.message), std::move(f.notes), false);
    for (auto &n : r.notProved)
      (open ? *open : report_.notProved).push_back(std::move(n));
  }

  // Per role, in program order (a loop body read twice covers the back edge).
  std::vector<const SyncEvent *> roleSequence(int role);

  static bool touchesAny(const SyncEvent &e, const std::set<std::string> &registers);
  static bool writesAny(const SyncEvent &e, const std::set<std::string> &registers);

  void checkWgmma();

  // tcgen05.mma results in tensor memory are read only after a wait on a
  // barrier that a tcgen05.commit after the MMA arrives on.
  void checkTcgen05Results();

  void checkTcgen05();

  // The skeleton as given (the exhaustive fallback and the structural checks
  // read it), and as the symbolic proofs read it: accesses in inner loops of
  // plain accesses moved to their enclosing loop (StagePairs.h).
  const BarrierSkeleton &original_;
  BarrierSkeleton view_;
  const BarrierSkeleton &sk_;
  BarrierProofOptions opt_;
  z3::context &ctx_ = detail::sharedContext();
  ProtoEncoder enc_;
  std::optional<z3::solver> base_;
  detail::LinearPrecheck linear_{ctx_, opt_.timeoutMs};
  z3::expr_vector sample_{ctx_};
  int queries_ = 0;
  bool gaveUp_ = false; // some query was left undecided (see finding())
  std::string gaveUpReason_;
  unsigned assumed_ = 0;
  BarrierReport report_;
  // Named-barrier obligations the exhaustive fallback cannot decide.
  std::vector<std::pair<llvm::SMLoc, std::string>> namedOpen_;
  // Cluster-lifetime obligations (ClusterLifetime.h): the fallback runs no
  // CTA exits against its peers' operations, so it cannot decide them.
  std::vector<std::pair<llvm::SMLoc, std::string>> clusterOpen_;
  struct NestLevel {
    std::string var;
    z3::expr begin, step, trip, stride;
  };
  std::vector<std::vector<NestLevel>> nest_; // per loop: its nest, outermost first
  std::vector<std::optional<z3::expr>> loopTrip_;
  std::vector<int> loopClass_;
  std::map<size_t, Pattern> barrierPattern_;
  // Releases of the previous stage (matchShiftedRelease): the pattern of the
  // iteration released, and whether the arrival after the loop releases the
  // last one.
  struct Shifted {
    int64_t shift = 1;
    bool afterLoop = false;
    Pattern pattern;
    // A prefetch (shift -d): its prologue copies, copy k run at virtual
    // iteration k - d.
    std::vector<size_t> prologue;
  };
  // Whether ev runs at iteration i by its own guards (and its one-shot
  // round outside loops).
  z3::expr firesAsWritten(const SyncEvent &ev, const z3::expr &i);
  // Its guards at iteration i (ok cleared where one is not encoded: that
  // one is left out, so the result may hold where the guard does not).
  z3::expr guardsHold(const SyncEvent &ev, const z3::expr &i, bool *ok = nullptr);
  std::map<const SyncEvent *, Shifted> shifted_;
  // Clusters (see clusterTerms): the shape; the extent, set only for a
  // kernel with clusters of a shape the proofs model; the receiving CTA's
  // blockIdx along the axis; the rank and blockIdx the CTA-dependent
  // builtins are encoded as while a count term for a sender is built.
  std::optional<ClusterShape> clusterShape_ = clusterShapeOf(sk_);
  std::optional<int64_t> clusterCtas_ =
      sk_.cluster.empty() || !clusterShape_ ? std::nullopt : std::optional(clusterShape_->extent);
  int clusterAxis_ = clusterShape_ ? clusterShape_->axis : 0;
  std::optional<z3::expr> receiverBlock_, rank_, block_;
  std::vector<z3::expr> gridBounds_; // blockIdx < grid, added to the solver as made
  size_t gridAssumed_ = 0;
  struct KnownPattern {
    int loop;
    Expr index;
    int64_t period;
    Pattern pattern;
  };
  std::vector<KnownPattern> patterns_;
  std::map<const SyncEvent *, int64_t> oneShotRound_;
  std::map<std::string, BarrierInfo> barriers_;
  std::map<size_t, int64_t> waitShift_;
  std::map<size_t, int> nodeOf_;
  std::vector<size_t> nodes_;
  std::vector<std::vector<int64_t>> D_;
  std::vector<std::vector<int>> next_;
  // Over (node, every) states: see closeEveryThreadPaths.
  std::vector<std::vector<int64_t>> everyD_;
  // The same with the edges only deadlock cycles may use (buildGraph).
  std::vector<std::vector<int64_t>> cycleD_;
  // Whether buildGraph gave every wait its edges to the events completing
  // its phase and every synchronising event in a loop is a node: only then
  // is a missing path an absent order (checkArrivalOrder).
  bool graphComplete_ = true;
  std::string graphGap_;
  std::vector<std::vector<int>> cycleNext_;
};

} // namespace tilescope::detail
