#include "racecheck/StaticRaces.h"

#include "ir/ConcreteEval.h"

#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "verifier/BarrierSkeleton.h"
#include "verifier/LeastWitness.h"
#include "verifier/LinearPrecheck.h"
#include "verifier/NamedBarriers.h"
#include "verifier/ProtoEncoding.h"
#include "verifier/SharedContext.h"
#include "verifier/SolverBudget.h"
#include "verifier/StagePairs.h"

#include <fmt/format.h>

#include <array>

#include <algorithm>
#include <climits>
#include <functional>
#include <optional>
#include <set>

namespace tilescope {

namespace {

using detail::ProtoEncoder;

int64_t groupSize(ExecScope s, int64_t threads) {
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
ExecScope issueScope(const SyncEvent &e) {
  return e.warpCollective ? ExecScope::Warp : e.scope;
}

// A cp.async copy: `cp_async`, or `copy_async` without an mbarrier (which
// dispatch turns into cp.async and a commit).
bool isCpAsync(const SyncEvent &e) {
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
bool completesLater(const SyncEvent &e, const MemoryAccess &a) {
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

  RaceReport run() {
    try {
      checkPairs();
    } catch (const z3::exception &e) {
      report_.notChecked.push_back({llvm::SMLoc(), fmt::format("Z3 failed: {}", e.msg())});
    }
    checkProxyFences();
    return std::move(report_);
  }

private:
  // Thread indices as functions of the thread t, and blockIdx.x/y/z as
  // `cta` when given (an executor in a CTA of its own).
  std::map<BuiltinKind, z3::expr> builtinsOf(const z3::expr &t,
                                             const std::vector<z3::expr> &cta = {},
                                             const z3::expr *rank = nullptr) {
    std::map<BuiltinKind, z3::expr> b;
    const BuiltinKind blockIdx[] = {BuiltinKind::blockIdx_x, BuiltinKind::blockIdx_y,
                                    BuiltinKind::blockIdx_z};
    const BuiltinKind rankIdx[] = {BuiltinKind::clusterCtaIdx_x, BuiltinKind::clusterCtaIdx_y,
                                   BuiltinKind::clusterCtaIdx_z};
    if (rank) { // clusters along one axis (see clusterExtent)
      int axis = clusterAxis();
      b.emplace(rankIdx[axis], *rank);
      // The CTA of that rank in the cluster of the blockIdx symbol.
      if (cta.empty())
        if (auto bx = enc_.encode(Builtin::make(blockIdx[axis]), {})) {
          z3::expr first = *bx - z3::mod(*bx, ctx_.int_val(*clusterExtent()));
          b.emplace(blockIdx[axis], first + *rank);
        }
    } else if (int(cta.size()) > clusterAxis() && clusterExtent())
      b.emplace(rankIdx[clusterAxis()],
                z3::mod(cta[size_t(clusterAxis())], ctx_.int_val(*clusterExtent())));
    for (size_t d = 0; d < cta.size() && d < 3; ++d)
      b.emplace(blockIdx[d], cta[d]);
    for (BuiltinKind k : {BuiltinKind::threadIdx_x, BuiltinKind::laneid, BuiltinKind::warpid,
                          BuiltinKind::wgid, BuiltinKind::tid_in_wg, BuiltinKind::wid_in_wg})
      b.emplace(k, detail::threadIndexZ3(*threadIndexMap(k), t));
    return b;
  }

  // The loop variables of ev's loops bound to iteration unknowns. Bounds read
  // the executor's own builtins (a tile loop starting at blockIdx.x starts
  // elsewhere in another CTA).
  bool bindLoops(const SyncEvent &ev, const std::string &tag,
                 std::map<std::string, z3::expr> &bound, z3::expr_vector &ranges,
                 std::vector<z3::expr> &iters, const std::map<BuiltinKind, z3::expr> &builtins) {
    for (int l = ev.loop; l >= 0; l = sk_.loops[size_t(l)].parent) {
      const SkeletonLoop &loop = sk_.loops[size_t(l)];
      z3::expr i = enc_.fresh(tag + loop.var);
      // Outer loop variables first, so bounds of inner loops can use them.
      iters.insert(iters.begin(), i);
      auto b = enc_.encode(loop.begin, bound, builtins),
           s = enc_.encode(loop.step, bound, builtins);
      auto trip = enc_.encode(loop.trip(), bound, builtins);
      if (!b || !s || !trip)
        return false;
      bound.emplace(loop.var, *b + i * *s);
      ranges.push_back(i >= 0 && i < *trip);
    }
    return true;
  }

  bool threadMember(const ThreadSet &set, const z3::expr &t, z3::expr_vector &out) {
    auto member = detail::threadSetZ3(set, t);
    if (!member)
      return false;
    out.push_back(*member);
    return true;
  }

  // Whether barrier event e makes every thread of `a` and `b` wait for each
  // other: cta.sync by every thread, or a named barrier.sync whose
  // participants include them all (its thread count is checked by the
  // barrier proofs).
  // With warpLevel, warp.sync (by every lane of the warps of both sides, not
  // under a size-dependent guard) counts too: it orders two threads of one
  // warp only, which the caller adds to the query.
  bool joins(const SyncEvent &e, const ThreadSet &a, const ThreadSet &b,
             bool warpLevel = false) const {
    if (warpLevel && e.kind == SyncKind::WarpSync && e.guards.empty()) {
      ThreadSet cover = coverOf(e);
      return a.subsetOf(cover) && b.subsetOf(cover);
    }
    if (e.kind == SyncKind::CtaSync)
      return e.threads.count() == sk_.threads;
    if (e.kind != SyncKind::NamedSync)
      return false;
    ThreadSet cover = coverOf(e);
    return a.subsetOf(cover) && b.subsetOf(cover);
  }

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
  bool ctaSyncBetween(const ThreadSet &a, const ThreadSet &b, int fromOrder, int toOrder,
                      int loop = -2, bool cluster = false, bool warpLevel = false) const {
    auto inRange = [&](const SyncEvent &e, int from) {
      return e.order > from && e.order < toOrder && (loop == -2 || e.loop == loop);
    };
    if (!cluster && loop != -2)
      for (const NamedGeneration &g : named_.generations)
        if (g.loop == loop &&
            generationOrders(
                g, a, b, false, [&](const SyncEvent &e) { return inRange(e, fromOrder); },
                [&](const SyncEvent &e) { return inRange(e, fromOrder); }))
          return true;
    auto everyThread = [&](const SyncEvent &e) { return e.threads.count() == sk_.threads; };
    for (const SyncEvent &e : sk_.events) {
      if (!inRange(e, fromOrder))
        continue;
      if (!cluster && joins(e, a, b, warpLevel))
        return true;
      if (cluster && e.kind == SyncKind::CtaSync && e.scope == ExecScope::Cluster && everyThread(e))
        return true;
      if (cluster && e.kind == SyncKind::ClusterArrive && everyThread(e))
        for (const SyncEvent &w : sk_.events)
          if (w.kind == SyncKind::ClusterWait && everyThread(w) && inRange(w, e.order))
            return true;
    }
    return false;
  }

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
                         const std::vector<int> &common) const {
    for (const NamedGeneration &g : named_.generations)
      if ((g.loop < 0 || std::count(common.begin(), common.end(), g.loop)) &&
          generationOrders(
              g, first.threads, second.threads, true,
              [&](const SyncEvent &e) { return e.order > first.order; },
              [&](const SyncEvent &e) { return e.order < second.order; }))
        return true;
    return false;
  }
  // hi at one iteration of `loop`, lo at the next: a generation of that
  // loop's body at either iteration.
  bool generationWraps(const SyncEvent &lo, const SyncEvent &hi, int loop) const {
    auto any = [](const SyncEvent &) { return true; };
    for (const NamedGeneration &g : named_.generations)
      if (g.loop == loop &&
          (generationOrders(
               g, hi.threads, lo.threads, true,
               [&](const SyncEvent &e) { return e.order > hi.order; }, any) ||
           generationOrders(g, hi.threads, lo.threads, true, any,
                            [&](const SyncEvent &e) { return e.order < lo.order; })))
        return true;
    return false;
  }

  // The cluster's extent along its axis, when clusters have a constant
  // extent along one axis (the others 1): the shapes the cluster checks model.
  std::optional<int64_t> clusterExtent() const {
    if (sk_.cluster.empty())
      return std::nullopt;
    auto shape = clusterShapeOf(sk_);
    if (!shape)
      return std::nullopt;
    return shape->extent;
  }
  int clusterAxis() const {
    auto shape = sk_.cluster.empty() ? std::nullopt : clusterShapeOf(sk_);
    return shape ? shape->axis : 0;
  }
  static bool remote(const MemoryAccess &a) { return a.remoteCta != nullptr; }

  // Outside loops: `first` delivers to (TMA with mbar = B) or arrives on an
  // mbarrier B after writing (mbarrier.arrive, or tcgen05.commit, which
  // arrives once the issuing thread's tcgen05 operations completed), and
  // every thread of `second` waits on B between them. One-shot barriers only (both outside loops);
  // phases of barriers in loops are the barrier proofs' business.
  // An access that completes later is released only by its own completion:
  // a TMA's delivery, a tcgen05.mma's commit.
  bool handshake(const SyncEvent &first, const MemoryAccess &access,
                 const SyncEvent &second) const {
    // `second` may sit in a loop that starts after the wait: every iteration
    // comes after it.
    if (first.loop >= 0)
      return false;
    bool late = completesLater(first, access);
    std::set<std::string> signalled;
    if (first.kind == SyncKind::TxDelivery)
      signalled.insert(first.barrier.array);
    for (const SyncEvent &e : sk_.events)
      if (e.order > first.order && e.order < second.order && e.loop < 0 &&
          (!late || (e.kind == SyncKind::Tcgen05Commit && first.call == IntrinsicId::Tcgen05Mma)) &&
          (e.kind == SyncKind::MbarArrive || e.kind == SyncKind::MbarExpectTx ||
           e.kind == SyncKind::Tcgen05Commit) &&
          first.threads.subsetOf(coverOf(e)))
        signalled.insert(e.barrier.array);
    for (const SyncEvent &w : sk_.events)
      if (w.kind == SyncKind::MbarWait && w.loop < 0 && w.order > first.order &&
          w.order < second.order && signalled.count(w.barrier.array) &&
          second.threads.subsetOf(coverOf(w)))
        return true;
    return false;
  }

  void checkPairs() {
    std::vector<std::pair<size_t, size_t>> accesses; // (event, access)
    for (size_t e = 0; e < sk_.events.size(); ++e)
      for (size_t a = 0; a < sk_.events[e].accesses.size(); ++a)
        if (sk_.events[e].accesses[a].scope != MemScope::Reg)
          accesses.push_back({e, a});
    for (size_t x = 0; x < accesses.size(); ++x)
      for (size_t y = x; y < accesses.size(); ++y) {
        const SyncEvent &ea = sk_.events[accesses[x].first], &eb = sk_.events[accesses[y].first];
        const MemoryAccess &a = ea.accesses[accesses[x].second],
                           &b = eb.accesses[accesses[y].second];
        if (a.buffer != b.buffer || (!a.write && !b.write))
          continue;
        if (x == y && !a.write)
          continue;
        if (remote(a) || remote(b)) {
          // Distributed shared memory: the executors may sit in different
          // CTAs of the cluster; only cluster barriers order them.
          checkPair(ea, a, eb, b, Mode::InCluster);
          continue;
        }
        checkPair(ea, a, eb, b, Mode::SameCta);
        if (a.scope == MemScope::Global && b.scope == MemScope::Global)
          checkPair(ea, a, eb, b, Mode::AcrossCtas);
      }
    // Last, so that the queries above meet the shared solver as they did
    // without these (its search depends on the terms it holds).
    for (size_t x = 0; x < accesses.size(); ++x)
      for (size_t y = x; y < accesses.size(); ++y) {
        const SyncEvent &ea = sk_.events[accesses[x].first], &eb = sk_.events[accesses[y].first];
        const MemoryAccess &a = ea.accesses[accesses[x].second],
                           &b = eb.accesses[accesses[y].second];
        if (a.buffer == b.buffer && (a.write || b.write) && !remote(a) && !remote(b) &&
            intersects(ea.threads, eb.threads))
          checkSameThread(ea, a, eb, b);
      }
  }

  // Where the two executors are: one CTA; two CTAs of the grid (global
  // memory); two CTAs of one cluster, or one (a DSMEM access); one thread,
  // which issued an asynchronous access and makes another access later.
  enum class Mode { SameCta, AcrossCtas, InCluster, SameThread };

  // The budget of the first, cheaper question about a pair (solvePair).
  static constexpr unsigned kFirstQueryBudgetMs = 100;

  // One thread's asynchronous access and its own later access: program
  // order does not order them, since the asynchronous access completes
  // after its statement. Only the thread's observation of that completion
  // between them does (its mbarrier wait on the copy's phase, its
  // cp_async.wait or tma.store_wait retiring the group, the warpgroup's
  // wgmma.wait_group), in the same iteration or across loop iterations.
  void checkSameThread(const SyncEvent &ea, const MemoryAccess &a, const SyncEvent &eb,
                       const MemoryAccess &b) {
    // Two asynchronous accesses of one thread (two fills of a pipeline
    // stage, two MMAs on one accumulator, two stores to one tile) are not
    // compared: a ring's fills are ordered through the other role's release
    // (the barrier proofs' business), one thread's MMAs run in issue order.
    if (completesLater(ea, a) && completesLater(eb, b))
      return;
    for (bool issuerIsA : {true, false}) {
      if (!issuerIsA && &a == &b)
        break;
      const SyncEvent &issuer = issuerIsA ? ea : eb;
      if (!completesLater(issuer, issuerIsA ? a : b))
        continue;
      Ordering ord = orderingOf(ea, a, eb, b, false, false);
      ord.issuerIsA = issuerIsA;
      solvePair(ea, a, eb, b, ord, Mode::SameThread);
    }
  }

  void checkPair(const SyncEvent &ea, const MemoryAccess &a, const SyncEvent &eb,
                 const MemoryAccess &b, Mode mode) {
    if (mode != Mode::SameCta) {
      // Only cluster barriers order CTAs; between clusters nothing does.
      bool clustered = clusterExtent().has_value();
      if (mode == Mode::InCluster && !clustered) {
        report_.notChecked.push_back(
            {ea.loc, fmt::format("DSMEM access to {}: the cluster is not one-dimensional with a "
                                 "constant extent",
                                 a.buffer)});
        return;
      }
      Ordering ord = orderingOf(ea, a, eb, b, clustered, true);
      bool fully = ord.fully;
      if (mode == Mode::AcrossCtas && !(clustered && fully))
        ord = orderingOf(ea, a, eb, b, false, true); // no barrier orders them
      if (mode == Mode::InCluster && fully) {
        ++report_.pairsProved;
        return;
      }
      // Across the grid, a cluster-ordered pair races only between clusters.
      ord.differentClusters = mode == Mode::AcrossCtas && clustered && fully;
      if (solvePair(ea, a, eb, b, ord, mode) == z3::unsat && mode == Mode::InCluster)
        ++report_.pairsProved;
      return;
    }
    // Pipeline stages' fills and reads: the barrier proofs' business.
    if (isStagePair(sk_, ea, a, eb, b)) {
      ++report_.pairsOrderedByMbarrier;
      return;
    }
    // A fill and a read of two roles in loops that are not the same: the
    // orderings below do not follow a ring across its rounds, so a race found
    // here is not confirmed (solvePair).
    bool ringRounds = ea.role != eb.role && a.write != b.write && ea.loop >= 0 && eb.loop >= 0 &&
                      a.scope != MemScope::Global;
    bool sameEvent = &ea == &eb;
    // In program order within one iteration: `lo` first, `hi` second.
    const SyncEvent &lo = ea.order <= eb.order ? ea : eb, &hi = ea.order <= eb.order ? eb : ea;
    Ordering ord = orderingOf(ea, a, eb, b, true, false);
    if (!ord.sameIteration && !sameEvent && handshake(lo, &lo == &ea ? a : b, hi)) {
      ++report_.pairsProved;
      return;
    }
    if (ord.fully) {
      ++report_.pairsProved;
      return;
    }
    ord.warpOrdered = orderingOf(ea, a, eb, b, true, false, true).fully;
    ringRoundsUnmodelled_ = ringRounds;
    if (solvePair(ea, a, eb, b, ord, Mode::SameCta) == z3::unsat)
      ++report_.pairsProved;
    ringRoundsUnmodelled_ = false;
  }

  // What orders two accesses of one CTA (see checkPair).
  struct Ordering {
    bool sameLoop = false, sameIteration = false, anyInBody = false, wrapsAround = false;
    const SyncEvent *lo = nullptr;  // the access earlier in program order
    bool fully = false;             // every execution pair is ordered
    bool differentClusters = false; // across CTAs: only CTAs of different clusters race
    bool warpOrdered = false;       // fully ordered for two threads of one warp (warp.sync)
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
                      bool warpLevel = false) {
    const SyncEvent &lo = ea.order <= eb.order ? ea : eb, &hi = ea.order <= eb.order ? eb : ea;
    Ordering o;
    o.lo = &lo;
    o.loLate = completesLater(lo, &lo == &ea ? a : b);
    o.hiLate = completesLater(hi, &lo == &ea ? b : a);
    if (!useBarriers)
      return o;
    // The loops both sit in: accesses in different inner loops of one outer
    // loop meet again at its next iteration.
    std::vector<int> common = chainOf(ea), cb = chainOf(eb);
    size_t depth = 0;
    while (depth < common.size() && depth < cb.size() && common[depth] == cb[depth])
      ++depth;
    common.resize(depth);
    o.sameLoop = !common.empty();
    o.sameIteration =
        !o.loLate && &ea != &eb &&
        (ctaSyncBetween(ea.threads, eb.threads, lo.order, hi.order, -2, cluster, warpLevel) ||
         (!cluster && (generationBetween(lo, hi, common) || generationBetween(hi, lo, common))));
    auto inBody = [&](int loop, int from, int to) {
      return ctaSyncBetween(ea.threads, eb.threads, from, to, loop, cluster, warpLevel);
    };
    o.anyFrom.assign(depth, false);
    o.wrapFrom.assign(depth, false);
    o.direct.assign(depth, false);
    for (size_t m = depth; m-- > 0;) {
      bool any = inBody(common[m], -1, INT_MAX);
      bool wrap = inBody(common[m], hi.order, INT_MAX) || inBody(common[m], -1, lo.order) ||
                  (!cluster && generationWraps(lo, hi, common[m]));
      o.direct[m] = any;
      o.anyFrom[m] = any || (m + 1 < depth && o.anyFrom[m + 1]);
      o.wrapFrom[m] = wrap || (m + 1 < depth && o.wrapFrom[m + 1]);
    }
    o.anyInBody = o.sameLoop && o.anyFrom.back();
    o.wrapsAround = !o.hiLate && o.sameLoop && o.wrapFrom.back();
    // As checkPair reads it within a CTA: a barrier between accesses outside
    // common loops orders them; in loops it also needs the back edges (the
    // deepest common loop's barriers serve every level above it).
    o.fully = o.sameIteration &&
              (!o.sameLoop || (o.anyInBody && o.wrapsAround && !o.loLate && !o.hiLate));
    return o;
  }

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
                                             const ThreadSet &waiters, const SyncEvent &y) const {
    std::vector<const SyncEvent *> out;
    std::vector<int> cw = chainOf(w), cy = chainOf(y);
    for (const SyncEvent &b : sk_.events) {
      if (!b.guards.empty() || !joins(b, waiters, y.threads, true))
        continue;
      std::vector<int> cb = chainOf(b);
      bool between = b.order > w.order && b.order < y.order;
      bool placed = false;
      switch (at) {
      case WaitAt::OutsideLoops:
        placed = between && cb.size() <= 1 && isPrefix(cb, cy);
        break;
      case WaitAt::SameIteration:
        placed = between && cb == cw;
        break;
      case WaitAt::PreviousIteration:
        placed = cb == cw && (b.order > w.order || b.order < y.order);
        break;
      case WaitAt::ArrivalIteration:
        placed = (cb == cw && b.order > w.order) ||
                 (between && cb.size() <= 1 && isPrefix(cb, cy) && cb != cw);
        break;
      }
      if (placed)
        out.push_back(&b);
    }
    return out;
  }

  // Threads of `set` standing for it as the thread that observes a
  // completion before a relay: the first one (any thread of the set meets y
  // at a CTA or named barrier), or, with warp.sync, the first one of each
  // warp, with the condition that y's thread is in that warp.
  std::vector<std::pair<int64_t, std::optional<z3::expr>>>
  relayThreads(const std::vector<const SyncEvent *> &relays, const ThreadSet &set,
               const z3::expr &yThread) {
    std::vector<std::pair<int64_t, std::optional<z3::expr>>> out;
    bool cta = false, warp = false;
    for (const SyncEvent *b : relays)
      (b->kind == SyncKind::WarpSync ? warp : cta) = true;
    for (int64_t t = 0; t < set.launchThreads(); ++t) {
      if (!set.contains(t))
        continue;
      if (cta) {
        out.push_back({t, std::nullopt});
        return out;
      }
      if (warp && (out.empty() || out.back().first / 32 != t / 32))
        out.push_back({t, yThread / 32 == ctx_.int_val(t / 32)});
    }
    return out;
  }

  std::vector<int> chainOf(const SyncEvent &e) const { return sk_.loopChain(e); }
  static bool isPrefix(const std::vector<int> &a, const std::vector<int> &b) {
    return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  bool readsLoopVar(const std::vector<Expr> &guards) const {
    LoopVarFinder finder;
    finder.names = &loopVars_;
    for (const Expr &g : guards)
      finder.visit(g);
    return finder.found;
  }
  // e's size guards, encoded; false when one cannot be.
  bool encodeGuards(const SyncEvent &e, const std::map<std::string, z3::expr> &bound,
                    const std::map<BuiltinKind, z3::expr> &builtins, z3::expr_vector &out) {
    for (const Expr &g : e.guards) {
      auto x = enc_.encode(g, bound, builtins);
      if (!x || !x->is_bool())
        return false;
      out.push_back(*x);
    }
    return true;
  }
  // A copy of `v` (copying a z3::expr_vector shares it).
  z3::expr_vector copyOf(const z3::expr_vector &v) {
    z3::expr_vector out(ctx_);
    for (unsigned k = 0; k < v.size(); ++k)
      out.push_back(v[int(k)]);
    return out;
  }
  // Whether some model of the where clause satisfies `cons` (unknown: yes).
  bool satisfiable(const z3::expr_vector &cons) {
    // A one-shot solver first: a fresh default solver costs 8 ms before its
    // first answer (its first assertion sets up every theory), the one-shot
    // pipeline well under one. Its sat and unsat are answers; only where it
    // gives up does the default solver decide, as it always did.
    z3::solver once = oneShotSolver(ctx_, std::min(opt_.timeoutMs, detail::kPrecheckBudgetMs));
    once.add(enc_.assumptions());
    once.add(cons);
    if (z3::check_result r = once.check(); r != z3::unknown)
      return r == z3::sat;
    z3::solver s(ctx_);
    z3::params p(ctx_);
    setSolverBudget(p, opt_.timeoutMs);
    s.set(p);
    for (unsigned k = 0; k < enc_.assumptions().size(); ++k)
      s.add(enc_.assumptions()[int(k)]);
    for (unsigned k = 0; k < cons.size(); ++k)
      s.add(cons[int(k)]);
    z3::check_result r = s.check();
    if (r == z3::unknown)
      undecided_ = true;
    return r != z3::unsat;
  }

  // How the barrier index of an event in a top-level loop moves with the
  // iteration: 1 when it is constant, S (the array's size) when S
  // consecutive iterations touch S distinct elements and the pattern repeats
  // ((i + c) % S), 0 otherwise. Then the event's own round on its element at
  // iteration i is i / period.
  int64_t periodOf(const SyncEvent &e) {
    if (auto it = period_.find(&e); it != period_.end())
      return it->second;
    int64_t &period = period_[&e];
    period = 0;
    const SkeletonLoop &loop = sk_.loops[size_t(e.loop)];
    z3::expr t = enc_.fresh("pt"), i = enc_.fresh("pi"), j = enc_.fresh("pj");
    auto builtins = builtinsOf(t);
    auto begin = enc_.encode(loop.begin, {}, builtins), step = enc_.encode(loop.step, {}, builtins),
         trip = enc_.encode(loop.trip(), {}, builtins);
    if (!begin || !step || !trip)
      return period;
    auto index = [&](const z3::expr &at) {
      return enc_.encode(e.barrier.index, {{loop.var, *begin + at * *step}}, builtins);
    };
    auto inRange = [&](const z3::expr &at) { return at >= 0 && at < *trip; };
    auto ii = index(i), ij = index(j);
    if (!ii || !ij || !ii->is_int())
      return period;
    z3::expr_vector base(ctx_);
    base.push_back(t >= 0 && t < ctx_.int_val(sk_.threads));
    z3::expr_vector differ = copyOf(base);
    differ.push_back(inRange(i) && inRange(j) && *ii != *ij);
    if (!satisfiable(differ))
      return period = 1;
    const BarrierArray *array = sk_.barrier(e.barrier.array);
    int64_t size = array ? array->size : 1;
    if (size < 2)
      return period;
    // Distinct within a window of S iterations, and repeating after S.
    z3::expr_vector repeat = copyOf(base);
    repeat.push_back(inRange(i) && inRange(j) && j > i && j < i + ctx_.int_val(size) && *ii == *ij);
    z3::expr_vector drift = copyOf(base);
    auto next = index(i + ctx_.int_val(size));
    if (!next)
      return period;
    drift.push_back(inRange(i) && inRange(i + ctx_.int_val(size)) && *ii != *next);
    if (!satisfiable(repeat) && !satisfiable(drift))
      period = size;
    return period;
  }

  // The round of an arrival (arrive, tcgen05.commit), TMA delivery or wait on
  // its barrier element at iteration i of its loop, as the barrier proofs
  // count them: phase n of an element is completed by round n of every
  // arriving event, and a wait of parity p at round n means phase n when
  // p = n (mod 2), else n - 1. Outside loops the k-th event of its kind on
  // the element by its threads is round k (a delivery: that of the last
  // arrival before it). Nothing when the rounds are not that simple.
  std::optional<z3::expr> roundOf(const SyncEvent &e, const std::optional<z3::expr> &i,
                                  const std::map<BuiltinKind, z3::expr> &builtins) {
    bool wait = e.kind == SyncKind::MbarWait;
    auto counted = [&](const SyncEvent &o) {
      if (o.barrier.array != e.barrier.array)
        return false;
      if (wait)
        return o.kind == SyncKind::MbarWait;
      return o.kind == SyncKind::MbarArrive || o.kind == SyncKind::Tcgen05Commit ||
             o.kind == SyncKind::MbarExpectTx || o.kind == SyncKind::TxDelivery ||
             o.kind == SyncKind::MbarCompleteTx;
    };
    if (e.loop < 0) {
      auto c = constantValue(e.barrier.index);
      if (!c)
        return std::nullopt;
      int64_t n = 0;
      const SyncEvent *inLoop = nullptr; // a wait after the loop of the others
      for (const SyncEvent &o : sk_.events) {
        if (!counted(o) || &o == &e)
          continue;
        auto oc = constantValue(o.barrier.index);
        if (!oc)
          return std::nullopt;
        if (o.loop >= 0) {
          // Waits of one element in one top-level loop before this wait:
          // this one is round (executions of that wait).
          if (!wait || inLoop || sk_.loops[size_t(o.loop)].parent >= 0 || *oc != *c ||
              o.order > e.order || !intersects(o.threads, e.threads))
            return std::nullopt;
          inLoop = &o;
          continue;
        }
        bool arrival = o.kind == SyncKind::MbarWait || o.kind == SyncKind::MbarArrive ||
                       o.kind == SyncKind::Tcgen05Commit;
        if (arrival && *oc == *c && o.order < e.order && intersects(o.threads, e.threads))
          ++n;
      }
      if (e.kind == SyncKind::TxDelivery && n-- == 0)
        return std::nullopt;
      if (!inLoop)
        return ctx_.int_val(n);
      auto first = firstIteration(*inLoop);
      auto trip = enc_.encode(sk_.loops[size_t(inLoop->loop)].trip(), {}, builtins);
      if (n > 0 || !first || !trip || periodOf(*inLoop) != 1)
        return std::nullopt;
      z3::expr runs = *trip - ctx_.int_val(*first);
      return z3::ite(runs > 0, runs, ctx_.int_val(0));
    }
    if (!i || sk_.loops[size_t(e.loop)].parent >= 0)
      return std::nullopt;
    // Events of the element before the loop would shift its rounds; those
    // after it do not.
    int loopStart = e.order;
    for (const SyncEvent &o : sk_.events)
      if (o.loop == e.loop)
        loopStart = std::min(loopStart, o.order);
    for (const SyncEvent &o : sk_.events)
      if (counted(o) && o.loop != e.loop && o.order < loopStart)
        return std::nullopt;
    int64_t period = periodOf(e);
    auto first = firstIteration(e);
    if (period == 0 || !first || (*first > 0 && period != 1))
      return std::nullopt;
    if (period == 1)
      return *first == 0 ? *i : *i - ctx_.int_val(*first);
    return *i / ctx_.int_val(period);
  }

  // The first iteration from which e's guards hold, when they read its loop
  // variable only as a threshold (`if k > 0`: from iteration 1 on; no guard
  // over the loop variable: 0). Then its executions before iteration i are
  // i - first.
  std::optional<int64_t> firstIteration(const SyncEvent &e) {
    if (!readsLoopVar(e.guards))
      return 0;
    if (auto it = first_.find(&e); it != first_.end())
      return it->second;
    std::optional<int64_t> &first = first_[&e];
    const SkeletonLoop &loop = sk_.loops[size_t(e.loop)];
    z3::expr t = enc_.fresh("ft"), i = enc_.fresh("fi");
    auto builtins = builtinsOf(t);
    auto begin = enc_.encode(loop.begin, {}, builtins), step = enc_.encode(loop.step, {}, builtins),
         trip = enc_.encode(loop.trip(), {}, builtins);
    if (!begin || !step || !trip)
      return first;
    z3::expr_vector guards(ctx_);
    if (!encodeGuards(e, {{loop.var, *begin + i * *step}}, builtins, guards) || guards.empty())
      return first;
    for (int64_t l = 1; l <= 4 && !first; ++l) {
      z3::expr_vector differ(ctx_);
      differ.push_back(t >= 0 && t < ctx_.int_val(sk_.threads) && i >= 0 && i < *trip);
      differ.push_back(z3::mk_and(guards) != (i >= ctx_.int_val(l)));
      if (!satisfiable(differ))
        first = l;
    }
    return first;
  }
  static bool intersects(const ThreadSet &a, const ThreadSet &b) {
    for (int64_t t = 0; t < a.launchThreads(); ++t)
      if (a.contains(t) && b.contains(t))
        return true;
    return false;
  }

  // The condition under which barrier event r, executed by x's CTA, lands on
  // the barrier of y's CTA.
  std::optional<z3::expr> reaches(const SyncEvent &r, const Side &x, const Side &y) {
    if (!r.remoteCta && !r.multicast) {
      if (x.rank && y.rank)
        return *x.rank == *y.rank;
      return ctx_.bool_val(true); // one CTA
    }
    if (!y.rank || !clusterExtent())
      return std::nullopt;
    if (r.remoteCta) {
      auto target = enc_.encode(r.remoteCta, x.bound, x.builtins());
      if (!target || !target->is_int())
        return std::nullopt;
      return *target == *y.rank;
    }
    auto mask = constantValue(r.multicast);
    if (!mask)
      return std::nullopt;
    z3::expr_vector any(ctx_);
    for (int64_t rank = 0; rank < *clusterExtent() && rank < 63; ++rank)
      if ((*mask >> rank) & 1)
        any.push_back(*y.rank == ctx_.int_val(rank));
    return any.empty() ? ctx_.bool_val(false) : z3::mk_or(any);
  }

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
  bool storeCompletedBefore(const SyncEvent &x, const SyncEvent &r) {
    if (x.call != IntrinsicId::TmaStore)
      return false;
    ThreadSet issuers = coverOf(x);
    if (!coverOf(r).subsetOf(issuers) || !r.guards.empty())
      return false;
    std::vector<int> cr = chainOf(r);
    auto byIssuers = [&](const SyncEvent &e, SyncKind kind) {
      return e.kind == kind && e.guards.empty() && issuers.subsetOf(e.threads);
    };
    for (const SyncEvent &w : sk_.events) {
      if (!byIssuers(w, SyncKind::TmaStoreWait) || w.readOnly ||
          constantValue(w.amount).value_or(1) != 0 || w.order <= x.order ||
          w.order >= r.order || chainOf(w) != cr)
        continue;
      bool fenced = false;
      for (const SyncEvent &f : sk_.events)
        fenced |= byIssuers(f, SyncKind::FenceProxyAsync) && f.globalProxy && f.order > w.order &&
                  f.order < r.order && chainOf(f) == cr;
      if (!fenced)
        continue;
      for (const SyncEvent &c : sk_.events)
        if (byIssuers(c, SyncKind::TmaStoreCommit) && c.order > x.order && c.order < w.order &&
            isPrefix(chainOf(c), chainOf(x)) && isPrefix(cr, chainOf(c)))
          return true;
    }
    return false;
  }

  void addHandshakes(const Side &x, const Side &y, std::vector<z3::expr> &out) {
    bool late = completesLater(x.ev, x.acc);
    bool mma = x.ev.call == IntrinsicId::Tcgen05Mma;
    std::vector<int> cx = chainOf(x.ev), cy = chainOf(y.ev);
    for (const SyncEvent &r : sk_.events) {
      bool delivery =
          &r == &x.ev && r.kind == SyncKind::TxDelivery && x.acc.write && x.acc.asyncProxy;
      bool arrival =
          !delivery && r.order > x.ev.order &&
          ((r.kind == SyncKind::MbarArrive && (!late || storeCompletedBefore(x.ev, r))) ||
           (r.kind == SyncKind::Tcgen05Commit && (!late || mma)));
      if ((!delivery && !arrival) || r.barrier.array.empty())
        continue;
      std::vector<int> cr = chainOf(r);
      if (cr.size() > 1 || !isPrefix(cr, cx))
        continue;
      std::optional<z3::expr> iR;
      if (!cr.empty())
        iR = x.iters.front();
      auto bx = x.builtins();
      z3::expr_vector released(ctx_);
      if (!threadMember(coverOf(r), x.t, released) || !encodeGuards(r, x.bound, bx, released))
        continue;
      auto indexR = enc_.encode(r.barrier.index, x.bound, bx);
      auto roundR = roundOf(r, iR, bx);
      auto reach = reaches(r, x, y);
      if (!indexR || !roundR || !reach)
        continue;
      released.push_back(*reach);
      for (const SyncEvent &w : sk_.events) {
        if (w.kind != SyncKind::MbarWait || w.barrier.array != r.barrier.array)
          continue;
        std::vector<int> cw = chainOf(w);
        if (cw.size() > 1)
          continue;
        // The wait's iteration, if in a loop, and where it sits.
        std::vector<std::pair<std::optional<z3::expr>, WaitAt>> at;
        if (cw.empty()) {
          if (w.order < y.ev.order)
            at.push_back({std::nullopt, WaitAt::OutsideLoops});
        } else if (!cy.empty() && cy.front() == cw.front()) {
          if (w.order < y.ev.order)
            at.push_back({y.iters.front(), WaitAt::SameIteration});
          at.push_back({y.iters.front() - 1, WaitAt::PreviousIteration});
        } else if (iR && cr.front() == cw.front() && w.order < y.ev.order) {
          at.push_back({*iR, WaitAt::ArrivalIteration});
        }
        for (const auto &[iW, where] : at) {
          // Who observes the phase: y's own thread, or, for an access that
          // completes later, a waiting thread that then meets y's thread at
          // a barrier (a CTA barrier after a wait publishes what the wait
          // observed to every thread it joins).
          std::vector<std::pair<z3::expr, std::optional<z3::expr>>> observers;
          z3::expr_vector mine(ctx_);
          if (threadMember(coverOf(w), y.t, mine))
            observers.push_back({y.t, mine[0]});
          if (late)
            for (const auto &[u, cond] :
                 relayThreads(relaysAfter(w, where, w.threads, y.ev), w.threads, y.t))
              observers.push_back({ctx_.int_val(u), cond});
          for (const auto &[waiter, cond] : observers) {
            auto bw = y.builtinsAt(waiter);
            std::map<std::string, z3::expr> boundW;
            z3::expr_vector cons = copyOf(released);
            if (cond)
              cons.push_back(*cond);
            if (iW) {
              const SkeletonLoop &loop = sk_.loops[size_t(cw.front())];
              auto b = enc_.encode(loop.begin, {}, bw), s = enc_.encode(loop.step, {}, bw),
                   trip = enc_.encode(loop.trip(), {}, bw);
              if (!b || !s || !trip)
                continue;
              boundW.emplace(loop.var, *b + *iW * *s);
              cons.push_back(*iW >= 0 && *iW < *trip);
            }
            if (!encodeGuards(w, boundW, bw, cons))
              continue;
            auto indexW = enc_.encode(w.barrier.index, boundW, bw);
            auto parity = enc_.encode(w.parity, boundW, bw);
            auto roundW = roundOf(w, iW, bw);
            if (!indexW || !parity || !roundW || !indexW->is_int() || !indexR->is_int())
              continue;
            z3::expr meant = z3::ite(z3::mod(*parity - *roundW, 2) == 0, *roundW, *roundW - 1);
            cons.push_back(*indexR == *indexW);
            cons.push_back(*roundR <= meant);
            out.push_back(z3::mk_and(cons));
          }
        }
      }
    }
  }

  // A wgmma.mma_async's operand reads and accumulator writes are finished,
  // for its whole warpgroup, once the warpgroup committed its group and
  // waited with wgmma.wait_group(0) (both after it, before y, in the same
  // iterations of the loops they share).
  void addWgmmaRetired(const Side &x, const Side &y, std::vector<z3::expr> &out) {
    if (x.ev.kind != SyncKind::WgmmaMma || y.ev.order <= x.ev.order)
      return;
    std::vector<int> cx = chainOf(x.ev), cy = chainOf(y.ev);
    for (const SyncEvent &commit : sk_.events) {
      if (commit.kind != SyncKind::WgmmaCommit || commit.order <= x.ev.order ||
          commit.order >= y.ev.order || !commit.guards.empty() || commit.loop != x.ev.loop)
        continue;
      for (const SyncEvent &w : sk_.events) {
        if (w.kind != SyncKind::WgmmaWait || w.order <= commit.order || w.order >= y.ev.order ||
            !w.guards.empty() || w.loop != x.ev.loop || constantValue(w.amount) != 0)
          continue;
        std::vector<int> cw = chainOf(w);
        if (!isPrefix(cw, cy))
          continue;
        ThreadSet cover = coverOf(w), warpgroups = x.ev.threads.widened(128);
        if (!warpgroups.subsetOf(cover) || !warpgroups.subsetOf(coverOf(commit)))
          continue;
        z3::expr_vector same(ctx_);
        for (size_t k = 0; k < cw.size(); ++k)
          same.push_back(x.iters[k] == y.iters[k]);
        // A thread of the warpgroup, or any thread that a CTA or named
        // barrier after the wait joins with the warpgroup.
        z3::expr_vector cons = copyOf(same);
        if (threadMember(cover, y.t, cons)) {
          cons.push_back(x.t / 128 == y.t / 128);
          out.push_back(z3::mk_and(cons));
        }
        for (const SyncEvent *b : relaysAfter(w, WaitAt::SameIteration, warpgroups, y.ev))
          if (b->kind != SyncKind::WarpSync) {
            out.push_back(z3::mk_and(same));
            break;
          }
        return;
      }
    }
  }

  // Whether y comes after event b executed at iterations `at` of the loops
  // `chain` (b's, outermost first): later in the first of their common
  // loops where the iterations differ, or in the same iterations and after
  // b in program order.
  z3::expr afterAt(const SyncEvent &b, const std::vector<z3::expr> &at,
                   const std::vector<int> &chain, const Side &y) {
    std::vector<int> cy = chainOf(y.ev);
    z3::expr_vector later(ctx_), equal(ctx_);
    for (size_t k = 0; k < chain.size() && k < cy.size() && chain[k] == cy[k]; ++k) {
      later.push_back(z3::mk_and(equal) && at[k] < y.iters[k]);
      equal.push_back(at[k] == y.iters[k]);
    }
    if (y.ev.order > b.order)
      later.push_back(z3::mk_and(equal));
    return later.empty() ? ctx_.bool_val(false) : z3::mk_or(later);
  }

  // A cp.async write x is complete, for its thread, at a cp_async.wait(n)
  // of that thread with at least n commits after the one that closed x's
  // group (`copy_async` without an mbarrier closes its own), all in the same
  // iteration and unconditional (conditional commits only make the group
  // older). A barrier after that wait, joining x's threads with y's, orders
  // x before y when y comes after it: later in the same iteration or in a
  // later iteration of the loops they share. For y by x's own thread
  // (`own`), the wait itself orders x before y when y comes after it.
  void addCpAsyncCompleted(const Side &x, const Side &y, std::vector<z3::expr> &out,
                           bool own = false) {
    if (!isCpAsync(x.ev) || !x.acc.write)
      return;
    ThreadSet issuers = coverOf(x.ev);
    std::vector<int> cx = chainOf(x.ev), cy = chainOf(y.ev);
    auto byIssuers = [&](const SyncEvent &e, SyncKind kind) {
      return e.kind == kind && chainOf(e) == cx && e.guards.empty() && issuers.subsetOf(e.threads);
    };
    const SyncEvent *closed = x.ev.call == IntrinsicId::CpAsync ? nullptr : &x.ev;
    for (const SyncEvent &e : sk_.events)
      if (!closed && e.order > x.ev.order && byIssuers(e, SyncKind::CpAsyncCommit))
        closed = &e;
    if (!closed)
      return;
    int64_t newer = 0; // unconditional commits after the group's
    for (const SyncEvent &w : sk_.events) {
      if (w.order <= closed->order)
        continue;
      if (byIssuers(w, SyncKind::CpAsyncCommit))
        ++newer;
      auto allowed = constantValue(w.amount);
      if (!byIssuers(w, SyncKind::CpAsyncWait) || !allowed || newer < *allowed)
        continue;
      std::vector<const SyncEvent *> points;
      if (own)
        points.push_back(&w);
      for (const SyncEvent *b : relaysAfter(w, WaitAt::SameIteration, issuers, y.ev))
        if (chainOf(*b) == cx)
          points.push_back(b);
      for (const SyncEvent *b : points) {
        // y after b (the wait or a barrier in x's innermost loop, at x's
        // iterations).
        z3::expr cons = afterAt(*b, x.iters, cx, y);
        if (b->kind == SyncKind::WarpSync)
          cons = cons && x.t / 32 == y.t / 32;
        out.push_back(cons);
      }
      return;
    }
  }

  // A TMA store x reads its shared source (and writes global memory) until
  // a tma.store_wait(n) of its issuing threads (for the write, not a
  // `read = true` one) with at least n unconditional commits after the one
  // that closed x's group: the first unconditional tma.store_commit by
  // those threads after x, in x's loop or one around it. The wait sits in
  // that commit's loop, later in the same iteration or, textually before
  // it, in the next iteration (the library's epilogue waits at the top of
  // the next tile). A barrier after the wait in that loop, joining the
  // issuing threads with y's, orders x before y when y comes after it; for
  // y by x's own thread (`own`), the wait itself does.
  void addTmaStoreCompleted(const Side &x, const Side &y, std::vector<z3::expr> &out,
                            bool own = false) {
    if (x.ev.call != IntrinsicId::TmaStore)
      return;
    ThreadSet issuers = coverOf(x.ev);
    std::vector<int> cx = chainOf(x.ev), cy = chainOf(y.ev);
    auto byIssuers = [&](const SyncEvent &e, SyncKind kind) {
      return e.kind == kind && e.guards.empty() && issuers.subsetOf(e.threads);
    };
    const SyncEvent *closed = nullptr;
    for (const SyncEvent &e : sk_.events)
      if (!closed && e.order > x.ev.order && byIssuers(e, SyncKind::TmaStoreCommit) &&
          isPrefix(chainOf(e), cx))
        closed = &e;
    if (!closed)
      return;
    std::vector<int> cc = chainOf(*closed);
    for (const SyncEvent &w : sk_.events) {
      auto allowed = constantValue(w.amount);
      if (!byIssuers(w, SyncKind::TmaStoreWait) || chainOf(w) != cc || !allowed ||
          (x.acc.write && w.readOnly))
        continue;
      bool next = w.order < closed->order; // in the next iteration of cc's loop
      if (next && cc.empty())
        continue;
      int64_t newer = 0; // unconditional commits between the group's and the wait
      for (const SyncEvent &c : sk_.events)
        if (byIssuers(c, SyncKind::TmaStoreCommit) && chainOf(c) == cc &&
            (c.order > closed->order ? next || c.order < w.order : next && c.order < w.order))
          ++newer;
      if (newer < *allowed)
        continue;
      // The barrier's iterations: x's, one later in cc's loop for `next`,
      // which must then run.
      std::vector<z3::expr> atB(x.iters.begin(), x.iters.begin() + long(cc.size()));
      z3::expr_vector exists(ctx_);
      if (next) {
        atB.back() = atB.back() + 1;
        auto trip = enc_.encode(sk_.loops[size_t(cc.back())].trip(), x.bound, x.builtins());
        if (!trip)
          continue;
        exists.push_back(atB.back() < *trip);
      }
      std::vector<const SyncEvent *> points;
      if (own)
        points.push_back(&w);
      for (const SyncEvent &b : sk_.events)
        if (b.order > w.order && chainOf(b) == cc && b.guards.empty() &&
            joins(b, issuers, y.ev.threads, true))
          points.push_back(&b);
      for (const SyncEvent *b : points) {
        z3::expr later = afterAt(*b, atB, cc, y);
        if (later.is_false())
          continue;
        z3::expr cons = z3::mk_and(exists) && later;
        if (b->kind == SyncKind::WarpSync)
          cons = cons && x.t / 32 == y.t / 32;
        out.push_back(cons);
      }
    }
  }

  std::vector<z3::expr> orderingEscapes(const Side &a, const Side &b, const Ordering &ord,
                                        Mode mode) {
    std::vector<z3::expr> out;
    if (mode == Mode::AcrossCtas)
      return out;
    if (mode == Mode::SameThread) {
      // Only the issuing side's completion, observed before the other access.
      const Side &x = ord.issuerIsA ? a : b, &y = ord.issuerIsA ? b : a;
      addHandshakes(x, y, out);
      addWgmmaRetired(x, y, out);
      addCpAsyncCompleted(x, y, out, true);
      addTmaStoreCompleted(x, y, out, true);
      return out;
    }
    if (ord.warpOrdered)
      out.push_back(a.t / 32 == b.t / 32);
    addHandshakes(a, b, out);
    addHandshakes(b, a, out);
    if (mode == Mode::SameCta) {
      addWgmmaRetired(a, b, out);
      addWgmmaRetired(b, a, out);
      addCpAsyncCompleted(a, b, out);
      addCpAsyncCompleted(b, a, out);
      addTmaStoreCompleted(a, b, out);
      addTmaStoreCompleted(b, a, out);
    }
    return out;
  }

  // Two CTAs never synchronise: a global-memory pair is also asked for two
  // executors in distinct CTAs of the grid, with no ordering at all.
  bool ctaIndices(const std::string &tag, std::vector<z3::expr> &cta, z3::expr_vector &cons) {
    for (size_t d = 0; d < sk_.grid.size() && d < 3; ++d) {
      auto extent = enc_.encode(sk_.grid[d], {});
      if (!extent)
        return false;
      z3::expr v = enc_.fresh(fmt::format("{}blockIdx{}", tag, d));
      cons.push_back(v >= 0 && v < *extent);
      cta.push_back(v);
    }
    return !cta.empty();
  }

  // Regions that depend on the thread index only (constants, builtins of
  // the thread): decided by listing every thread's elements, no two
  // distinct threads of the two sides sharing one (guards only narrow who
  // runs them). Swizzled shared-memory addresses lifted from PTX are of this
  // kind, and their mod terms are slow in Z3.
  // The pairs of distinct threads whose elements meet (nullopt: not such
  // regions, or more than `cap` pairs).
  std::optional<std::vector<std::pair<int64_t, int64_t>>>
  collisionsPerThread(const SyncEvent &ea, const MemoryAccess &a, const SyncEvent &eb,
                      const MemoryAccess &b, size_t cap) const {
    if (a.region.size() != 1 || b.region.size() != 1 || !a.perThread || !b.perThread)
      return std::nullopt;
    auto intervals =
        [&](const SyncEvent &e,
            const MemoryAccess &m) -> std::optional<std::vector<std::array<int64_t, 3>>> {
      std::vector<std::array<int64_t, 3>> out; // begin, end, thread
      for (int64_t t = 0; t < e.threads.launchThreads(); ++t) {
        if (!e.threads.contains(t))
          continue;
        auto leaf = [&](const Expr &x) -> std::optional<int64_t> {
          if (x->kind != ExprKind::Builtin)
            return std::nullopt;
          switch (as<Builtin>(x).which) {
          case BuiltinKind::threadIdx_x:
            return t;
          case BuiltinKind::laneid:
            return t % 32;
          case BuiltinKind::warpid:
            return t / 32;
          case BuiltinKind::wgid:
            return t / 128;
          case BuiltinKind::tid_in_wg:
            return t % 128;
          case BuiltinKind::wid_in_wg:
            return t / 32 % 4;
          default:
            return std::nullopt;
          }
        };
        auto begin = evalConcrete(m.region[0].begin, leaf);
        auto extent = evalConcrete(m.region[0].extent, leaf);
        if (!begin || !extent)
          return std::nullopt;
        out.push_back({*begin, *begin + *extent, t});
      }
      return out;
    };
    auto ia = intervals(ea, a), ib = intervals(eb, b);
    if (!ia || !ib)
      return std::nullopt;
    std::sort(ib->begin(), ib->end());
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const auto &x : *ia) {
      // Intervals of b starting before x ends; one of another thread that
      // ends after x begins overlaps.
      auto end =
          std::lower_bound(ib->begin(), ib->end(), std::array<int64_t, 3>{x[1], INT64_MIN, 0});
      for (auto y = ib->begin(); y != end; ++y)
        if ((*y)[1] > x[0] && (*y)[2] != x[2]) {
          if (out.size() >= cap)
            return std::nullopt;
          out.push_back({x[2], (*y)[2]});
        }
    }
    return out;
  }

  // Looks for two executors touching one element under `ord`; sat reports
  // the race. With acrossCtas, the executors are in distinct CTAs.
  z3::check_result solvePair(const SyncEvent &ea, const MemoryAccess &a, const SyncEvent &eb,
                             const MemoryAccess &b, const Ordering &ord, Mode mode) {
    const SyncEvent &lo = *ord.lo;
    bool acrossCtas = mode == Mode::AcrossCtas, inCluster = mode == Mode::InCluster;
    bool sameLoop = ord.sameLoop && !acrossCtas;
    bool orderedSameIteration = ord.sameIteration;
    // Collective calls of the same group are ordered by their dispatch.
    ExecScope scopeA = issueScope(ea), scopeB = issueScope(eb);
    bool groupScoped = scopeA != ExecScope::Thread && scopeB != ExecScope::Thread;
    std::optional<std::vector<std::pair<int64_t, int64_t>>> collisions;
    if (mode == Mode::SameCta && !groupScoped) {
      collisions = collisionsPerThread(ea, a, eb, b, opt_.threadPairsListed);
      if (collisions && collisions->empty())
        return z3::unsat;
    }
    z3::expr t1 = enc_.fresh("t1"), t2 = enc_.fresh("t2");
    std::optional<z3::expr> rankA, rankB;
    z3::expr_vector cons(ctx_);
    if (!threadMember(ea.threads, t1, cons) || !threadMember(eb.threads, t2, cons))
      return z3::unsat;
    std::vector<z3::expr> ctaA, ctaB;
    if (acrossCtas) {
      if (!ctaIndices("a_", ctaA, cons) || !ctaIndices("b_", ctaB, cons)) {
        report_.notChecked.push_back(
            {ea.loc, fmt::format("{} between CTAs: a grid extent Z3 cannot read", a.buffer)});
        return z3::unknown;
      }
      // Terms are built only when used: Z3's search depends on the terms a
      // context holds, and stray ones slowed the persistent GEMM's queries 3x.
      z3::expr_vector differ(ctx_);
      for (size_t d = 0; d < ctaA.size(); ++d) {
        if (!ord.differentClusters) {
          differ.push_back(ctaA[d] != ctaB[d]);
          continue;
        }
        z3::expr extent = ctx_.int_val(int(d) == clusterAxis() ? clusterExtent().value_or(1) : 1);
        differ.push_back(ctaA[d] / extent != ctaB[d] / extent);
      }
      cons.push_back(z3::mk_or(differ));
    } else if (inCluster) {
      // Ranks in the cluster; the same rank is the same CTA.
      rankA.emplace(enc_.fresh("rankA"));
      rankB.emplace(enc_.fresh("rankB"));
      z3::expr n = ctx_.int_val(*clusterExtent());
      cons.push_back(*rankA >= 0 && *rankA < n && *rankB >= 0 && *rankB < n);
      cons.push_back(*rankA != *rankB || t1 != t2);
    } else if (mode == Mode::SameThread) {
      cons.push_back(t1 == t2);
    } else if (groupScoped && scopeA == scopeB) {
      int64_t g = groupSize(scopeA, sk_.threads);
      cons.push_back(t1 / ctx_.int_val(g) != t2 / ctx_.int_val(g));
    } else {
      cons.push_back(t1 != t2);
      // A thread inside a group that runs the other call collectively is
      // still a different executor from the group's other threads.
    }
    std::map<std::string, z3::expr> boundA, boundB;
    std::vector<z3::expr> itersA, itersB;
    if (!bindLoops(ea, "a_", boundA, cons, itersA, builtinsOf(t1, ctaA)) ||
        !bindLoops(eb, "b_", boundB, cons, itersB, builtinsOf(t2, ctaB))) {
      report_.notChecked.push_back(
          {ea.loc,
           fmt::format("accesses to {} here and at another site: loop bounds Z3 cannot read",
                       a.buffer)});
      return z3::unknown;
    }
    if (sameLoop) {
      // Level by level over the common loops (outermost first): where the
      // iterations first differ at level m, a barrier of that loop or a
      // deeper common one orders lo before hi at a later iteration, one
      // after hi or before lo orders hi before lo at a later iteration, and
      // one in that loop's own body orders them two or more iterations
      // apart; the earlier access must not complete later. Equal
      // iterations throughout: a barrier between them.
      const std::vector<z3::expr> &itLo = &lo == &ea ? itersA : itersB;
      const std::vector<z3::expr> &itHi = &lo == &ea ? itersB : itersA;
      z3::expr_vector ordered(ctx_), equal(ctx_);
      for (size_t m = 0; m < ord.anyFrom.size(); ++m) {
        const z3::expr &iLo = itLo[m], &iHi = itHi[m];
        z3::expr before = z3::mk_and(equal);
        if (ord.anyFrom[m] && !ord.loLate)
          ordered.push_back(before && iLo < iHi);
        if (!ord.hiLate && ord.wrapFrom[m])
          ordered.push_back(before && iHi < iLo);
        if (!ord.hiLate && ord.direct[m])
          ordered.push_back(before && iHi + 1 < iLo);
        equal.push_back(iLo == iHi);
      }
      if (orderedSameIteration)
        ordered.push_back(z3::mk_and(equal));
      if (!ordered.empty())
        cons.push_back(!z3::mk_or(ordered));
    }
    if (mode == Mode::SameThread) {
      // The asynchronous access is issued first: at an earlier iteration of
      // the first common loop where they differ, or at the same iterations
      // and earlier in the body. Executions the other way round are
      // ordered by program order.
      const SyncEvent &x = ord.issuerIsA ? ea : eb, &y = ord.issuerIsA ? eb : ea;
      const std::vector<z3::expr> &itX = ord.issuerIsA ? itersA : itersB;
      const std::vector<z3::expr> &itY = ord.issuerIsA ? itersB : itersA;
      std::vector<int> cx = chainOf(x), cy = chainOf(y);
      z3::expr_vector first(ctx_), equal(ctx_);
      for (size_t k = 0; k < cx.size() && k < cy.size() && cx[k] == cy[k]; ++k) {
        first.push_back(z3::mk_and(equal) && itX[k] < itY[k]);
        equal.push_back(itX[k] == itY[k]);
      }
      if (x.order < y.order)
        first.push_back(z3::mk_and(equal));
      if (first.empty())
        return z3::unsat;
      cons.push_back(z3::mk_or(first));
    }
    // Built at each use, in the order Z3 has always seen them (see above).
    // Two executors in one CTA of a cluster share its rank (an unknown in
    // the cluster), so indices that read clusterCtaIdx.x encode.
    std::optional<z3::expr> sharedRank;
    if (!acrossCtas && !inCluster && clusterExtent()) {
      sharedRank.emplace(enc_.fresh("rank"));
      cons.push_back(*sharedRank >= 0 && *sharedRank < ctx_.int_val(*clusterExtent()));
    }
    auto rankOf = [&](const std::optional<z3::expr> &own) {
      return own ? &*own : sharedRank ? &*sharedRank : nullptr;
    };
    auto builtinsA = [&] { return builtinsOf(t1, ctaA, rankOf(rankA)); };
    auto builtinsB = [&] { return builtinsOf(t2, ctaB, rankOf(rankB)); };
    for (const Expr &g : ea.guards)
      if (auto e = enc_.encode(g, boundA, builtinsA()); e && e->is_bool())
        cons.push_back(*e);
    for (const Expr &g : eb.guards)
      if (auto e = enc_.encode(g, boundB, builtinsB()); e && e->is_bool())
        cons.push_back(*e);
    if (inCluster) {
      // Both touch the shared memory of one CTA: its own, or the remote one.
      auto target = [&](const MemoryAccess &x, const z3::expr &rank, auto &bound,
                        auto builtins) -> std::optional<z3::expr> {
        return remote(x) ? enc_.encode(x.remoteCta, bound, builtins()) : std::optional(rank);
      };
      auto ta = target(a, *rankA, boundA, builtinsA), tb = target(b, *rankB, boundB, builtinsB);
      if (!ta || !tb || !ta->is_int() || !tb->is_int()) {
        report_.notChecked.push_back(
            {ea.loc, fmt::format("DSMEM access to {}: a CTA rank Z3 cannot read", a.buffer)});
        return z3::unknown;
      }
      cons.push_back(*ta == *tb);
    }
    if (a.region.size() != b.region.size())
      return z3::unsat;
    std::vector<z3::expr> element;
    if (collisions && opt_.threadPairsListed > 0) {
      // The thread pairs that meet, listed (RaceOptions::threadPairsListed).
      z3::expr_vector meet(ctx_);
      for (const auto &[x, y] : *collisions)
        meet.push_back(t1 == ctx_.int_val(x) && t2 == ctx_.int_val(y));
      cons.push_back(z3::mk_or(meet));
    }
    for (size_t d = 0; d < a.region.size() && !(collisions && opt_.threadPairsListed > 0); ++d) {
      auto ba = enc_.encode(a.region[d].begin, boundA, builtinsA());
      auto xa = enc_.encode(a.region[d].extent, boundA, builtinsA());
      auto bb = enc_.encode(b.region[d].begin, boundB, builtinsB());
      auto xb = enc_.encode(b.region[d].extent, boundB, builtinsB());
      if (!ba || !xa || !bb || !xb) {
        report_.notChecked.push_back(
            {ea.loc,
             fmt::format("access to {}: an index Z3 cannot read (data-dependent?)", a.buffer)});
        return z3::unknown;
      }
      z3::expr x = enc_.fresh("x");
      element.push_back(x);
      cons.push_back(x >= *ba && x < *ba + *xa && x >= *bb && x < *bb + *xb);
    }
    // One solver for all pairs: each pair's constraints hang off a fresh
    // literal and are checked under it.
    queueAssumptions();
    z3::expr pair = ctx_.bool_const(fmt::format("pair!{}", pairs_++).c_str());
    for (unsigned k = 0; k < cons.size(); ++k)
      pending_.push_back(z3::implies(pair, cons[int(k)]));
    // An over-approximation first, linear up to congruence: its unsat
    // decides most pairs in a few milliseconds (LinearPrecheck.h).
    if (linear_.unsat(enc_.assumptions(), cons))
      return z3::unsat;
    z3::expr_vector under(ctx_);
    under.push_back(pair);
    // Orderings that hold for some executor pairs only (warp.sync within a
    // warp, mbarrier handshakes of matching rounds, wgmma groups retired by
    // the warpgroup).
    auto builtinsAtA = [&](const z3::expr &t) { return builtinsOf(t, ctaA, rankOf(rankA)); };
    auto builtinsAtB = [&](const z3::expr &t) { return builtinsOf(t, ctaB, rankOf(rankB)); };
    Side sideA{ea, a, t1, itersA, boundA, builtinsA, rankOf(rankA), builtinsAtA};
    Side sideB{eb, b, t2, itersB, boundB, builtinsB, rankOf(rankB), builtinsAtB};
    std::vector<z3::expr> escapes = orderingEscapes(sideA, sideB, ord, mode);
    // The full query (with the orderings) in a one-shot solver on the first
    // question's budget: where the linear over-approximation cannot decide a
    // pair, it is an ordering that does, and this proves it in a few
    // milliseconds (the persistent GEMM's two such pairs: 2-4 ms, where the
    // first question below spent 6-17 ms to answer sat or give up). Only its
    // unsat is used; anything else goes on as before, so the shared solver's
    // history stays as it was.
    auto onceUnsat = [&](unsigned budgetMs) {
      z3::solver once = oneShotSolver(ctx_, budgetMs);
      once.add(enc_.assumptions());
      once.add(cons);
      for (const z3::expr &e : escapes)
        once.add(!e);
      return once.check() == z3::unsat;
    };
    if (!escapes.empty() && onceUnsat(kFirstQueryBudgetMs))
      return z3::unsat;
    // Without the orderings, on a small budget: when it is hard it is left
    // undecided and the full query below decides. Its sat answers can be a
    // search through non-linear sizes (a persistent tile loop whose step is
    // not the grid: 27 s at grid(7) on the persistent GEMM, where the full
    // query is unsat in 5 ms).
    z3::solver &s = pairSolver();
    z3::check_result r = checkFirst(s, under);
    if (r == z3::unsat)
      return r;
    auto gaveUp = [&] {
      report_.notChecked.push_back(
          {ea.loc, fmt::format("race on {}: Z3 gave up ({})", a.buffer, s.reason_unknown())});
      return z3::unknown;
    };
    if (r == z3::unknown) {
      // The first question was hard. The full one, with the orderings, in a
      // one-shot solver on a larger budget (they often make it easy: 5 ms for
      // the grid(7) GEMM's pair); then the first question on the full budget,
      // as before.
      if (onceUnsat(detail::kPrecheckBudgetMs))
        return z3::unsat;
      r = checkWithin(s, under, opt_.timeoutMs);
      if (r == z3::unsat)
        return r;
      if (r == z3::unknown)
        return gaveUp();
    }
    if (!escapes.empty()) {
      for (const z3::expr &e : escapes)
        s.add(z3::implies(pair, !e));
      r = checkWithin(s, under, opt_.timeoutMs);
      if (r == z3::unknown)
        return gaveUp();
      if (r == z3::unsat)
        return r;
    }
    // The least witness: threads, CTAs, iterations, element, then sizes.
    std::vector<z3::expr> witness{t1, t2};
    for (const auto *cta : {&ctaA, &ctaB})
      witness.insert(witness.end(), cta->begin(), cta->end());
    for (const std::optional<z3::expr> *rank : {&rankA, &rankB})
      if (*rank)
        witness.push_back(**rank);
    witness.insert(witness.end(), itersA.begin(), itersA.end());
    witness.insert(witness.end(), itersB.begin(), itersB.end());
    witness.insert(witness.end(), element.begin(), element.end());
    for (const auto &[name, v] : enc_.symbols())
      witness.push_back(v);
    z3::params full(ctx_);
    setSolverBudget(full, opt_.timeoutMs);
    s.set(full);
    z3::model m = detail::minimizeWitness(s, under, witness, pair.to_string());
    // A witness Z3 gave under a resource limit that does not satisfy the
    // query is no witness.
    z3::expr_vector all = copyOf(cons);
    for (const z3::expr &e : escapes)
      all.push_back(!e);
    if (!m.eval(z3::mk_and(all), true).is_true()) {
      report_.notChecked.push_back(
          {ea.loc, fmt::format("race on {}: Z3's model does not satisfy the query", a.buffer)});
      return z3::unknown;
    }
    auto threadText = [&](const z3::expr &t) {
      int64_t v = ProtoEncoder::value(m, t);
      std::string cta;
      for (const z3::expr &c : &t == &t1 ? ctaA : ctaB)
        cta += fmt::format("{}{}", cta.empty() ? "" : ", ", ProtoEncoder::value(m, c));
      const std::optional<z3::expr> &rank = &t == &t1 ? rankA : rankB;
      if (rank)
        cta = fmt::format("rank {} of the cluster", ProtoEncoder::value(m, *rank));
      return fmt::format("thread {} (warp {}, lane {}{})", v, v / 32, v % 32,
                         cta.empty() ? ""
                         : rank      ? ", CTA " + cta
                                     : ", CTA (" + cta + ")");
    };
    auto iterText = [&](const SyncEvent &e, const std::vector<z3::expr> &iters,
                        std::map<std::string, z3::expr> &bound) {
      std::string out;
      int l = e.loop;
      for (size_t k = iters.size(); k-- > 0 && l >= 0; l = sk_.loops[size_t(l)].parent) {
        const std::string &var = sk_.loops[size_t(l)].var;
        out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", var,
                           ProtoEncoder::value(m, bound.at(var)));
      }
      return out.empty() ? std::string("outside loops") : out;
    };
    std::string coords;
    for (const z3::expr &x : element)
      coords += fmt::format("{}{}", coords.empty() ? "" : ", ", ProtoEncoder::value(m, x));
    if (element.empty()) { // listed thread pairs: the first element both touch
      auto at = [&](const MemoryAccess &acc, const z3::expr &t) {
        return evalConcrete(acc.region[0].begin, [&](const Expr &x) -> std::optional<int64_t> {
          if (x->kind == ExprKind::Builtin && as<Builtin>(x).which == BuiltinKind::threadIdx_x)
            return ProtoEncoder::value(m, t);
          if (x->kind == ExprKind::Builtin && as<Builtin>(x).which == BuiltinKind::laneid)
            return ProtoEncoder::value(m, t) % 32;
          return std::nullopt;
        });
      };
      auto x = at(a, t1), y = at(b, t2);
      if (x && y)
        coords = std::to_string(std::max(*x, *y));
    }
    const SyncEvent &w = a.write ? ea : eb;
    const SyncEvent &o = a.write ? eb : ea;
    bool firstIsA = a.write;
    RaceFinding f;
    f.kind = RaceKind::DataRace;
    f.first = w.loc;
    f.second = o.loc;
    f.message = fmt::format(
        "data race on {} {}[{}]: written by {} in {} ({}) and {} by {} in {} ({}) {} ({})",
        memScopeName(a.scope), a.buffer, coords, threadText(firstIsA ? t1 : t2), w.what,
        firstIsA ? iterText(ea, itersA, boundA) : iterText(eb, itersB, boundB),
        (firstIsA ? b.write : a.write) ? "written" : "read", threadText(firstIsA ? t2 : t1), o.what,
        firstIsA ? iterText(eb, itersB, boundB) : iterText(ea, itersA, boundA),
        acrossCtas  ? (ord.differentClusters ? "in CTAs of different clusters, which no barrier "
                                               "orders"
                                             : "in different CTAs, which no barrier orders")
        : inCluster ? "with no cluster barrier between them"
        : mode == Mode::SameThread
            ? "with no wait by the issuing thread for the asynchronous access's completion "
              "between them"
        : ord.loLate || ord.hiLate ? "with no barrier after a wait for the asynchronous access's "
                                     "completion between them"
                                   : "with no barrier between them",
        enc_.describeSymbols(m));
    for (const RaceFinding &g : report_.findings)
      if (g.first == f.first && g.second == f.second)
        return r;
    // A race derived after a question about the orderings was left
    // undecided (its orderings may be missing), or between a ring's fill and
    // read whose rounds are not modelled, is not confirmed: not checked,
    // never a finding.
    if (undecided_ || ringRoundsUnmodelled_) {
      report_.notChecked.push_back(
          {ea.loc, fmt::format("{} [not confirmed: {}]", f.message,
                               undecided_ ? "a question about the orderings was left undecided"
                                          : "a fill and a read of two roles in loops that run "
                                            "differently; the race check does not follow the "
                                            "ring's rounds")});
      return z3::unknown;
    }
    report_.findings.push_back(std::move(f));
    return r;
  }

  // The solver every pair shares, with the where clause added as it grows
  // (blockIdx ranges appear lazily). What it is told waits in pending_ until
  // a pair needs it, and reaches it then in the order it always did (the
  // where clause as it stood at each pair, then that pair's constraints):
  // most kernels' pairs are all decided by the one-shot questions, and a
  // default solver costs 8 ms before its first answer.
  void queueAssumptions() {
    for (; assumed_ < enc_.assumptions().size(); ++assumed_)
      pending_.push_back(enc_.assumptions()[int(assumed_)]);
  }
  z3::solver &pairSolver() {
    if (!solver_)
      solver_.emplace(ctx_);
    for (unsigned k = 0; k < pending_.size(); ++k)
      solver_->add(pending_[int(k)]);
    pending_ = z3::expr_vector(ctx_);
    return *solver_;
  }

  // `s` checked under `assumptions` with the limits of `budgetMs`, set
  // anew for each query so that the command's deadline is current.
  z3::check_result checkWithin(z3::solver &s, const z3::expr_vector &assumptions,
                               unsigned budgetMs) {
    z3::params p(ctx_);
    setSolverBudget(p, budgetMs);
    s.set(p);
    return s.check(assumptions);
  }
  // The first question of solvePair: a budget of kFirstQueryBudgetMs in Z3's
  // units (if it gives up, the full query decides).
  z3::check_result checkFirst(z3::solver &s, const z3::expr_vector &assumptions) {
    z3::params p(ctx_);
    setSolverBudget(p, kFirstQueryBudgetMs);
    s.set(p);
    return s.check(assumptions);
  }

  void checkProxyFences() {
    struct Pending {
      const SyncEvent *write;
      std::string buffer;
    };
    std::vector<Pending> pending;
    for (int pass = 0; pass < 2; ++pass)
      for (const SyncEvent &e : sk_.events) {
        if (pass == 1 && e.loop < 0)
          continue; // the second pass covers loop back edges
        if (e.kind == SyncKind::FenceProxyAsync) {
          ThreadSet cover = coverOf(e);
          pending.erase(
              std::remove_if(pending.begin(), pending.end(),
                             [&](const Pending &p) { return p.write->threads.subsetOf(cover); }),
              pending.end());
          continue;
        }
        for (const MemoryAccess &a : e.accesses) {
          if (a.scope != MemScope::Shared)
            continue;
          if (a.write && !a.asyncProxy) {
            pending.push_back({&e, a.buffer});
            continue;
          }
          if (a.write || !a.asyncProxy)
            continue;
          for (const Pending &p : pending)
            if (p.buffer == a.buffer) {
              RaceFinding f;
              f.kind = RaceKind::MissingProxyFence;
              f.first = e.loc;
              f.second = p.write->loc;
              f.message = fmt::format("missing fence.proxy.async: {} by {} reads shared {} through "
                                      "the async proxy, but {} by {} "
                                      "wrote it through the generic proxy with no "
                                      "fence.proxy.async in the writing threads "
                                      "in between",
                                      e.what, e.threads.describe(), a.buffer, p.write->what,
                                      p.write->threads.describe());
              bool dup = false;
              for (const RaceFinding &g : report_.findings)
                dup |= g.first == f.first && g.second == f.second;
              if (!dup)
                report_.findings.push_back(std::move(f));
              break;
            }
        }
      }
  }

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
  RaceReport report_;
  std::set<std::string> loopVars_;
  bool undecided_ = false;            // satisfiable() met an undecided query
  bool ringRoundsUnmodelled_ = false; // see checkPair
  std::map<const SyncEvent *, int64_t> period_;               // see periodOf
  std::map<const SyncEvent *, std::optional<int64_t>> first_; // see firstIteration
};

} // namespace

RaceReport checkStaticRaces(const Kernel &kernel, const RaceOptions &options) {
  return RaceChecker(extractBarrierSkeleton(kernel), options).run();
}

RaceReport checkStaticRaces(const BarrierSkeleton &skeleton, const RaceOptions &options) {
  return RaceChecker(skeleton, options).run();
}

unsigned reportStaticRaces(const RaceReport &report, Diagnostics &diag) {
  for (const RaceFinding &f : report.findings) {
    diag.error(f.first, f.message);
    diag.note(f.second,
              f.kind == RaceKind::DataRace ? "the other access" : "the generic-proxy write");
  }
  for (const auto &[loc, text] : report.notChecked)
    diag.warning(loc, "not checked: " + text);
  return unsigned(report.findings.size());
}

unsigned verifyStaticRaces(const Kernel &kernel, Diagnostics &diag) {
  return reportStaticRaces(checkStaticRaces(kernel), diag);
}

} // namespace tilescope
