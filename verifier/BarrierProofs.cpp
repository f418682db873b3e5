#include "verifier/BarrierProofs.h"
#include "verifier/StructuralChecks.h"

#include "ir/Affine.h"
#include "ir/ConcreteEval.h"
#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "verifier/AsyncDrain.h"
#include "verifier/BarrierFallback.h"
#include "verifier/LeastWitness.h"
#include "verifier/LinearPrecheck.h"
#include "verifier/ProtoEncoding.h"
#include "verifier/SharedContext.h"
#include "verifier/SolverBudget.h"
#include "verifier/StagePairs.h"
#include "verifier/TmemProtocol.h"

#include <fmt/format.h>
#include <llvm/ADT/StringRef.h>

#include <algorithm>
#include <climits>
#include <set>
#include <tuple>

namespace tilescope {

std::string_view protocolViolationName(ProtocolViolationKind k) {
  switch (k) {
  case ProtocolViolationKind::Deadlock:
    return "deadlock";
  case ProtocolViolationKind::ParityAliasing:
    return "parity aliasing";
  case ProtocolViolationKind::OverArrival:
    return "over-arrival";
  case ProtocolViolationKind::PhaseNeverCompletes:
    return "phase never completes";
  case ProtocolViolationKind::TxBytesMismatch:
    return "expect_tx bytes mismatch";
  case ProtocolViolationKind::InitOrder:
    return "mbarrier init";
  case ProtocolViolationKind::Divergence:
    return "divergent barrier";
  case ProtocolViolationKind::NamedBarrierThreads:
    return "named barrier threads";
  case ProtocolViolationKind::WgmmaDiscipline:
    return "wgmma discipline";
  case ProtocolViolationKind::Tcgen05Discipline:
    return "tcgen05 discipline";
  case ProtocolViolationKind::ReadBeforeFilled:
    return "read before filled";
  case ProtocolViolationKind::OverwriteWhileRead:
    return "overwrite while read";
  case ProtocolViolationKind::IndexOutOfRange:
    return "barrier index out of range";
  }
  return "?";
}

namespace {

using detail::ProtoEncoder;
constexpr int64_t kNoPath = INT64_MIN / 4;

// How an index (a barrier element or a pipeline stage) moves with the
// iteration i of its loop: (i + c) % period, or the constant c. A shifted
// release (see matchShiftedRelease) acts at iteration i for the earlier
// iteration i - shift: element (i - shift + c) % period, its rounds those of
// iteration i - shift.
struct Pattern {
  bool ok = false;
  bool constant = false;
  int64_t c = 0;
  int64_t period = 1;
  int64_t shift = 0;
};

bool isArrival(SyncKind k) {
  return k == SyncKind::MbarArrive || k == SyncKind::Tcgen05Commit;
}
bool isTx(SyncKind k) {
  return k == SyncKind::MbarExpectTx || k == SyncKind::TxDelivery || k == SyncKind::MbarCompleteTx;
}
// Events a wait needs for its phase to complete.
bool completesPhase(SyncKind k) {
  return isArrival(k) || k == SyncKind::TxDelivery || k == SyncKind::MbarCompleteTx;
}

class Prover {
public:
  Prover(const BarrierSkeleton &sk, const BarrierProofOptions &opt)
      : sk_(sk), opt_(opt), enc_(ctx_, sk) {}

  BarrierReport run() {
    try {
      prepareLoops();
      for (const auto &[name, arr] : sk_.barriers)
        analyseBarrier(arr);
      // The ordering graph needs every wait's phase: with a barrier whose
      // phases are not modelled, its waits and arrivals would be missing
      // from the graph, which could hide a deadlock and invent a race.
      std::string unmodelled;
      for (const auto &[name, info] : barriers_)
        if (!info.symbolic)
          unmodelled += (unmodelled.empty() ? "" : ", ") + name;
      // Arrivals and copies between the CTAs of a cluster are counted
      // (clusterTerms), but the graph orders the events of one CTA only.
      std::string crossCta = crossCtaBarriers();
      if (!unmodelled.empty() || !crossCta.empty()) {
        std::string name = unmodelled.empty() ? crossCta : unmodelled;
        std::string why =
            unmodelled.empty()
                ? fmt::format("{} receive arrivals or copies from other CTAs of the cluster, and "
                              "the ordering graph does not link the CTAs",
                              crossCta)
                : fmt::format("the phases of {} are not modelled, so the waits and arrivals on "
                              "it are missing from the ordering",
                              unmodelled);
        result("deadlock freedom, parity aliasing and pipeline stages", false, "not proved: " + why);
        report_.notProved.push_back(
            {sk_.barriers.at(name.substr(0, name.find(','))).loc,
             "deadlock freedom, parity aliasing and pipeline stages: " + why});
        checkLaggingWaiters();
        finishStructural();
        return std::move(report_);
      }
      buildGraph();
      findDeadlockCycles();
      // Aliasing and stage ordering read the phases as the waits intend them;
      // with a phase that never completes or is over-filled, every later
      // conclusion would be a consequence of that first finding.
      bool phasesBroken = std::any_of(
          report_.findings.begin(), report_.findings.end(), [](const ProtocolFinding &f) {
            return f.kind == ProtocolViolationKind::Deadlock ||
                   f.kind == ProtocolViolationKind::IndexOutOfRange ||
                   f.kind == ProtocolViolationKind::PhaseNeverCompletes ||
                   f.kind == ProtocolViolationKind::OverArrival ||
                   f.kind == ProtocolViolationKind::TxBytesMismatch;
          });
      if (phasesBroken) {
        result("parity aliasing and pipeline stages", false,
               "not checked: fix the phase findings first");
      } else {
        checkAliasing();
        checkLaggingWaiters();
        checkStages();
      }
    } catch (const z3::exception &e) {
      report_.notProved.push_back({llvm::SMLoc(), fmt::format("Z3 failed: {}", e.msg())});
    }
    finishStructural();
    return std::move(report_);
  }

private:
  // The size-independent checks, then the exhaustive fallback where a proof
  // left an obligation open.
  void finishStructural() {
    // Many queries ask whether a simpler case holds (a pattern, a constant
    // distance, an equality of trip counts), and an undecided one is read as
    // "no". A proof for all sizes cannot rest on such an answer: it stays
    // open (the exhaustive check may still decide it at concrete sizes).
    if (gaveUp_)
      report_.notProved.push_back(
          {llvm::SMLoc(),
           fmt::format("a query the symbolic proof rests on was left undecided (Z3 gave "
                       "up: {})",
                       gaveUpReason_)});
    checkInit();
    checkCtaBarriers();
    checkWgmma();
    checkTcgen05();
    // Asynchronous copies of shared memory retired before the CTA exits
    // (AsyncDrain.h).
    for (ProtocolFinding &f : checkAsyncDrainedAtExit(sk_))
      finding(f.kind, f.loc, std::move(f.message), std::move(f.notes), false);
    for (const auto &u : sk_.unsupported)
      report_.notProved.push_back(u);
    if (!report_.notProved.empty())
      runExhaustiveFallback(sk_, opt_, report_);
    // Named-barrier generations stay open whatever the fallback found: it
    // runs each role as one process, so it cannot see a role's warps split
    // between two generations.
    if (!namedOpen_.empty()) {
      // What the fallback decided stays said, as part of an open verdict.
      for (auto &[loc, text] : report_.checkedExhaustively)
        report_.notProved.push_back({loc, fmt::format("{}: {}", report_.method, text)});
      report_.checkedExhaustively.clear();
      if (report_.findings.empty()) {
        report_.method =
            "not proved (named barrier generations: " + namedOpen_.front().second + ")";
        result("named barrier generations", false, "not proved: " + namedOpen_.front().second);
      }
      for (auto &n : namedOpen_)
        report_.notProved.push_back(std::move(n));
    }
  }

  // --- encoding helpers ---

  // The loop variables of ev's loops at flattened iteration i (see
  // prepareLoops): level m of a nest runs (i / stride_m) % trip_m.
  std::optional<std::map<std::string, z3::expr>> loopValues(const SyncEvent &ev,
                                                            const z3::expr &i) {
    std::map<std::string, z3::expr> bound;
    if (ev.loop < 0)
      return bound;
    const auto &levels = nest_[size_t(ev.loop)];
    if (levels.empty())
      return std::nullopt;
    for (size_t m = 0; m < levels.size(); ++m) {
      const NestLevel &lv = levels[m];
      bool innermost = m + 1 == levels.size();
      z3::expr scaled = innermost ? i : i / lv.stride;
      z3::expr index = m == 0 ? scaled : z3::mod(scaled, lv.trip);
      bound.emplace(lv.var, lv.begin + index * lv.step);
    }
    return bound;
  }

  std::optional<z3::expr> at(const Expr &e, const SyncEvent &ev, const z3::expr &i) {
    auto bound = loopValues(ev, i);
    if (!bound)
      return std::nullopt;
    // In a cluster, clusterCtaIdx is the rank of the CTA a proof is about
    // (receiver()), or of the sender a count term is for (rank_).
    if (clusterCtas_) {
      z3::expr rank = rank_ ? *rank_ : receiver();
      z3::expr block = rank_ ? *block_ : receiverBlock();
      return enc_.encode(
          e, *bound, {{clusterCtaIdxOf(clusterAxis_), rank}, {blockIdxOf(clusterAxis_), block}});
    }
    return enc_.encode(e, *bound);
  }

  // Whether ev's loop takes part in the symbolic proofs.
  bool modelled(const SyncEvent &ev) const {
    return ev.loop < 0 || loopTrip_[size_t(ev.loop)].has_value();
  }

  z3::expr fires(const SyncEvent &ev, const z3::expr &i) {
    z3::expr_vector all(ctx_);
    if (auto s = shifted_.find(&ev); s != shifted_.end()) {
      // Its guard is exactly `i >= shift`; the release after the loop is
      // its iteration `trip` (the release of iteration trip - 1).
      z3::expr trip = *loopTrip_[size_t(ev.loop)];
      z3::expr shift = ctx_.int_val(s->second.shift);
      return i >= shift && i < trip + (s->second.afterLoop ? shift : ctx_.int_val(0));
    }
    if (ev.loop < 0) {
      auto it = oneShotRound_.find(&ev);
      all.push_back(i == ctx_.int_val(it == oneShotRound_.end() ? 0 : it->second));
    } else {
      all.push_back(i >= 0);
      all.push_back(i < *loopTrip_[size_t(ev.loop)]);
    }
    for (const Expr &g : ev.guards) {
      auto e = at(g, ev, i);
      if (e && e->is_bool())
        all.push_back(*e);
    }
    return z3::mk_and(all);
  }

  // Barrier events outside loops run once; several on one element in one
  // role are consecutive rounds: the k-th arrival (or wait) is round k, an
  // expect_tx belongs to the arrival it comes with, a delivery to the last
  // expect_tx before it.
  void numberOneShotRounds() {
    std::map<std::tuple<int, std::string, int64_t, int>, int64_t> seen;
    std::map<std::tuple<int, std::string, int64_t>, int64_t> lastArrival, lastExpect;
    for (const SyncEvent &e : sk_.events) {
      if (e.loop >= 0 || e.barrier.array.empty())
        continue;
      auto elem = constantValue(e.barrier.index);
      if (!elem)
        continue;
      auto key = std::make_tuple(e.role, e.barrier.array, *elem);
      auto next = [&](int cls) { return seen[std::tuple_cat(key, std::make_tuple(cls))]++; };
      switch (e.kind) {
      case SyncKind::MbarArrive:
      case SyncKind::Tcgen05Commit:
        oneShotRound_[&e] = lastArrival[key] = next(0);
        break;
      case SyncKind::MbarWait:
        oneShotRound_[&e] = next(1);
        break;
      case SyncKind::MbarExpectTx: {
        bool withArrival = &e != &sk_.events.front() && (&e - 1)->loc == e.loc &&
                           (&e - 1)->kind == SyncKind::MbarArrive;
        int64_t r = withArrival ? lastArrival[key] : next(2);
        oneShotRound_[&e] = lastExpect[key] = r;
        break;
      }
      case SyncKind::TxDelivery:
      case SyncKind::MbarCompleteTx:
        oneShotRound_[&e] = lastExpect[key];
        break;
      default:
        break;
      }
    }
  }

  void prepareLoops() {
    numberOneShotRounds();
    // A nest of loops whose bounds do not depend on outer loop variables
    // (a persistent kernel's tile loop around its k loop) is one loop of
    // trip_0 * ... * trip_n flattened iterations. Products and the divisions
    // by inner trip counts stay linear when the inner counts are constants;
    // with symbolic ones the queries are non-linear and Z3 may give up (then
    // reported as not proved).
    for (size_t l = 0; l < sk_.loops.size(); ++l) {
      std::vector<int> chain;
      for (int x = int(l); x >= 0; x = sk_.loops[size_t(x)].parent)
        chain.insert(chain.begin(), x);
      std::vector<NestLevel> levels;
      for (int x : chain) {
        const SkeletonLoop &loop = sk_.loops[size_t(x)];
        auto b = enc_.encode(loop.begin, {}), st = enc_.encode(loop.step, {}),
             t = enc_.encode(loop.trip(), {});
        if (!b || !st || !t) {
          levels.clear();
          break;
        }
        levels.push_back({loop.var, *b, *st, *t, ctx_.int_val(1)});
      }
      std::optional<z3::expr> trip;
      if (!levels.empty()) {
        z3::expr stride = ctx_.int_val(1);
        for (size_t m = levels.size(); m-- > 0;) {
          levels[m].stride = stride;
          stride = stride * levels[m].trip;
        }
        trip = stride.simplify();
      }
      nest_.push_back(std::move(levels));
      loopTrip_.push_back(trip);
    }
    // Loops whose trip counts are equal for every size share iteration numbers.
    loopClass_.assign(sk_.loops.size(), -1);
    for (size_t a = 0; a < sk_.loops.size(); ++a) {
      if (!loopTrip_[a] || loopClass_[a] >= 0)
        continue;
      loopClass_[a] = int(a);
      for (size_t b = a + 1; b < sk_.loops.size(); ++b)
        if (loopTrip_[b] && loopClass_[b] < 0 && provedEqual(*loopTrip_[a], *loopTrip_[b]))
          loopClass_[b] = int(a);
    }
  }

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
    Query(Prover &prover, z3::expr literal)
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
      z3::check_result r = base().check(a);
      if (r == z3::unknown && !prover_.gaveUp_) {
        prover_.gaveUp_ = true;
        prover_.gaveUpReason_ = base().reason_unknown();
      }
      if (r != z3::sat)
        return r;
      sampleModel_ = detail::minimizeWitness(base(), a, small_, literal_.to_string());
      return z3::sat;
    }
    // The model of the sample sizes or the least witness, else the solver's.
    z3::model get_model() const { return sampleModel_ ? *sampleModel_ : base().get_model(); }
    std::string reason_unknown() const { return base().reason_unknown(); }

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
      bool sat = s.check() == z3::sat;
      if (sat)
        sampleModel_ = s.get_model();
      return sat;
    }

    Prover &prover_;
    z3::expr literal_;
    z3::expr_vector constraints_;
    std::optional<z3::model> sampleModel_;
    std::vector<z3::expr> small_;
  };

  Query solver() {
    if (!base_) {
      base_.emplace(ctx_);
      z3::params p(ctx_);
      setSolverBudget(p, opt_.timeoutMs);
      base_->set(p);
      chooseSampleSizes();
    }
    // Assumptions the encoder added since (blockIdx ranges appear lazily).
    for (; assumed_ < enc_.assumptions().size(); ++assumed_)
      base_->add(enc_.assumptions()[int(assumed_)]);
    for (; gridAssumed_ < gridBounds_.size(); ++gridAssumed_)
      base_->add(gridBounds_[gridAssumed_]);
    return Query(*this, ctx_.bool_const(fmt::format("query!{}", queries_++).c_str()));
  }

  // Every shape symbol fixed to one value the where clause admits (the
  // first of a few round sizes that fits), for the existence queries of
  // Query::check; none when no candidate fits.
  void chooseSampleSizes() {
    for (int64_t v : {128, 256, 64, 512, 1024, 32, 16, 8, 4, 2, 1}) {
      LeafValue leaf = [&](const Expr &e) -> std::optional<int64_t> {
        if (e->kind == ExprKind::Var && enc_.symbols().count(as<Var>(e).name))
          return v;
        return std::nullopt;
      };
      if (!std::all_of(sk_.constraints.begin(), sk_.constraints.end(),
                       [&](const Expr &c) { return evalConcrete(c, leaf).value_or(0) != 0; }))
        continue;
      for (const std::string &name : sk_.symbols)
        sample_.push_back(enc_.symbols().at(name) == ctx_.int_val(v));
      return;
    }
  }

  bool provedEqual(const z3::expr &a, const z3::expr &b) {
    Query s = solver();
    s.add(a != b);
    return s.check() == z3::unsat;
  }

  // sat: a model in `model`, small where it can be (a witness); unsat;
  // unknown is recorded as not proved.
  z3::check_result check(Query &s, std::optional<z3::model> &model, llvm::SMLoc loc,
                         const std::string &what) {
    for (const auto &[name, v] : enc_.symbols())
      s.prefer(v);
    z3::check_result r = decide(s, loc, what);
    if (r == z3::sat)
      model = s.get_model();
    return r;
  }
  // The same without a witness.
  z3::check_result decide(Query &s, llvm::SMLoc loc, const std::string &what) {
    z3::check_result r = s.check();
    if (r == z3::unknown)
      report_.notProved.push_back(
          {loc, fmt::format("{}: Z3 gave up ({})", what, s.reason_unknown())});
    return r;
  }

  // The common shapes without a solver: a constant index, and `k % S`
  // (or `(k + c) % S`) over a loop from 0 in steps of 1.
  std::optional<Pattern> quickPattern(const SyncEvent &ev, const Expr &index, int64_t period) {
    Pattern p;
    p.period = std::max<int64_t>(period, 1);
    if (auto c = constantValue(index)) {
      if (*c < 0 || *c >= p.period)
        return std::nullopt;
      p.ok = p.constant = true;
      p.c = *c;
      return p;
    }
    if (ev.loop < 0 || p.period == 1)
      return std::nullopt;
    const SkeletonLoop &l = sk_.loops[size_t(ev.loop)];
    if (l.parent >= 0 || constantValue(l.begin) != 0 || constantValue(l.step) != 1)
      return std::nullopt; // nested: the iteration is not the loop variable
    if (index->kind != ExprKind::Binary || as<Binary>(index).op != BinaryOp::Mod ||
        constantValue(as<Binary>(index).rhs) != p.period)
      return std::nullopt;
    Affine a = Affine::of(as<Binary>(index).lhs);
    if (a.terms.size() != 1 || a.terms.begin()->first != l.var || a.terms.begin()->second != 1 ||
        a.constant < 0)
      return std::nullopt;
    p.ok = true;
    p.c = a.constant % p.period;
    return p;
  }

  // Patterns depend on the loop, the index and the period alone; events of
  // one loop often share an index (`s` for the wait, the arrival and the
  // copies of one stage), so each is derived once.
  Pattern patternOf(const SyncEvent &ev, const Expr &index, int64_t period) {
    for (const KnownPattern &k : patterns_)
      if (k.loop == ev.loop && k.period == period && equal(k.index, index))
        return k.pattern;
    Pattern p = derivePattern(ev, index, period);
    patterns_.push_back({ev.loop, index, period, p});
    return p;
  }

  Pattern derivePattern(const SyncEvent &ev, const Expr &index, int64_t period) {
    Pattern p;
    p.period = std::max<int64_t>(period, 1);
    if (!modelled(ev))
      return p;
    if (auto quick = quickPattern(ev, index, period))
      return *quick;
    if (ev.loop < 0) {
      z3::expr zero = ctx_.int_val(0);
      auto v = at(index, ev, zero);
      if (!v)
        return p;
      Query s = solver();
      z3::expr probe = enc_.fresh("probe");
      s.add(probe == *v);
      if (s.check() != z3::sat)
        return p;
      int64_t c = ProtoEncoder::value(s.get_model(), probe);
      Query t = solver();
      t.add(*v != ctx_.int_val(c));
      if (t.check() != z3::unsat)
        return p;
      p.ok = p.constant = true;
      p.c = c;
      return p;
    }
    z3::expr i = enc_.fresh("i");
    auto v = at(index, ev, i);
    if (!v || !v->is_int())
      return p;
    z3::expr trip = *loopTrip_[size_t(ev.loop)];
    Query s = solver();
    s.add(i == 0 && trip >= 1);
    z3::expr probe = enc_.fresh("probe");
    s.add(probe == *v);
    if (z3::check_result r = s.check(); r != z3::sat) {
      // The loop never runs: any pattern is vacuously right (not when Z3
      // gave up: then no pattern is known).
      p.ok = p.constant = r == z3::unsat;
      return p;
    }
    int64_t c = ProtoEncoder::value(s.get_model(), probe);
    if (p.period > 1 && c >= 0 && c < p.period) {
      Query t = solver();
      t.add(i >= 0 && i < trip && *v != z3::mod(i + ctx_.int_val(c), ctx_.int_val(p.period)));
      if (t.check() == z3::unsat) {
        p.ok = true;
        p.c = c;
        return p;
      }
    }
    Query t = solver();
    t.add(i >= 0 && i < trip && *v != ctx_.int_val(c));
    if (t.check() == z3::unsat) {
      p.ok = p.constant = true;
      p.c = c;
    }
    return p;
  }

  // The iteration at which an event with pattern p touches element j for
  // the n-th time (n from 0), and whether it ever touches j.
  z3::expr iterOf(const Pattern &p, const z3::expr &j, const z3::expr &n) {
    if (p.constant)
      return n;
    z3::expr S = ctx_.int_val(p.period);
    return z3::mod(j - ctx_.int_val(p.c), S) + n * S + ctx_.int_val(p.shift);
  }
  z3::expr touches(const Pattern &p, const z3::expr &j) {
    if (p.constant)
      return j == ctx_.int_val(p.c);
    return j >= 0 && j < ctx_.int_val(p.period);
  }
  std::pair<z3::expr, z3::expr> roundOf(const Pattern &p, const z3::expr &i) {
    if (p.constant)
      return {ctx_.int_val(p.c), i};
    z3::expr S = ctx_.int_val(p.period);
    z3::expr logical = i - ctx_.int_val(p.shift);
    z3::expr j = z3::mod(logical + ctx_.int_val(p.c), S);
    return {j, (logical - z3::mod(j - ctx_.int_val(p.c), S)) / S};
  }

  // --- witnesses ---

  std::string iterationText(const z3::model &m, const SyncEvent &ev, const z3::expr &i) {
    if (ev.loop < 0)
      return "its one execution (outside loops)";
    z3::expr iv = ctx_.int_val(ProtoEncoder::value(m, i));
    if (auto s = shifted_.find(&ev); s != shifted_.end()) {
      // A release of the previous stage: say which iteration it releases.
      const std::string &var = sk_.loops[size_t(ev.loop)].var;
      int64_t k = ProtoEncoder::value(m, i),
              trip = ProtoEncoder::value(m, *loopTrip_[size_t(ev.loop)]);
      if (k >= trip)
        return fmt::format("after the loop, the release of {} = {}", var, k - s->second.shift);
      return fmt::format("{} = {}, the release of {} = {}", var, k, var, k - s->second.shift);
    }
    auto bound = loopValues(ev, iv);
    std::string out;
    if (bound)
      for (const NestLevel &lv : nest_[size_t(ev.loop)])
        out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", lv.var,
                           ProtoEncoder::value(m, bound->at(lv.var)));
    return out.empty() ? fmt::format("iteration {}", ProtoEncoder::value(m, i)) : out;
  }
  std::string sizes(const z3::model &m) {
    std::string text = enc_.describeSymbols(m);
    return text.empty() ? std::string("every size") : text;
  }
  static std::string phaseText(int64_t phase) {
    return phase < 0 ? std::string("the phase before the first (it passes at once)")
                     : fmt::format("phase {}", phase);
  }

  void finding(ProtocolViolationKind kind, llvm::SMLoc loc, std::string message,
               std::vector<std::pair<llvm::SMLoc, std::string>> notes = {}, bool symbolic = true) {
    for (const ProtocolFinding &f : report_.findings)
      if (f.kind == kind && f.loc == loc)
        return; // one report per site and kind
    // A symbolic finding rests on the questions asked before it (is there an
    // ordering, a constant distance, a proved equality?). Once one of them was
    // left undecided (Z3 gave up, or the wall-time budget cancelled it), an
    // answer that would have ruled this one out may be missing: the finding
    // is then reported as not proved, never as a finding.
    if (symbolic && gaveUp_) {
      report_.notProved.push_back(
          {loc, fmt::format("{} [not confirmed: a query it depends on was left undecided]",
                            message)});
      return;
    }
    report_.findings.push_back({kind, loc, std::move(message), std::move(notes), symbolic});
  }
  void result(std::string property, bool proved, std::string status) {
    report_.results.push_back({std::move(property), std::move(status), proved});
  }

  // --- mbarrier phases ---

  struct BarrierInfo {
    const BarrierArray *arr = nullptr;
    std::optional<int64_t> count;
    std::vector<size_t> events;
    bool symbolic = false; // every event's pattern is known
  };

  z3::expr amountOf(const SyncEvent &ev, const z3::expr &i, bool &ok) {
    auto a = ev.amount ? at(ev.amount, ev, i) : std::optional<z3::expr>(ctx_.int_val(1));
    if (!a || !a->is_int()) {
      ok = false;
      return ctx_.int_val(0);
    }
    return *a * ctx_.int_val(ev.issuers());
  }

  // A ring whose index runs past the array (a stage count off by one).
  void checkIndexRange(const BarrierArray &arr, const SyncEvent &ev) {
    if (!modelled(ev))
      return;
    if (auto c = constantValue(ev.barrier.index); c && *c >= 0 && *c < arr.size)
      return;
    z3::expr i = enc_.fresh("i");
    auto idx = at(ev.barrier.index, ev, i);
    if (!idx || !idx->is_int())
      return;
    Query s = solver();
    s.add(fires(ev, i) && (*idx < 0 || *idx >= ctx_.int_val(arr.size)));
    s.prefer(i);
    std::optional<z3::model> m;
    if (check(s, m, ev.loc, "barrier index") != z3::sat)
      return;
    finding(ProtocolViolationKind::IndexOutOfRange, ev.loc,
            fmt::format("barrier index out of range: {} by {} uses {}[{}] at {}, but {} has {} "
                        "element{} (for {})",
                        ev.what, ev.threads.describe(), arr.name, ProtoEncoder::value(*m, *idx),
                        iterationText(*m, ev, i), arr.name, arr.size, arr.size == 1 ? "" : "s",
                        sizes(*m)),
            {{arr.loc, "declared here"}});
  }

  void analyseBarrier(const BarrierArray &arr) {
    BarrierInfo info;
    info.arr = &arr;
    info.count = arr.count;
    for (size_t e = 0; e < sk_.events.size(); ++e)
      if (sk_.events[e].barrier.array == arr.name)
        info.events.push_back(e);
    if (info.events.empty())
      return;
    if (!info.count)
      for (size_t e : info.events)
        if (sk_.events[e].kind == SyncKind::MbarInit && sk_.events[e].amount)
          info.count = constantValue(sk_.events[e].amount);
    info.symbolic = info.count.has_value();
    // Releases of the previous stage (matchShiftedRelease): the release
    // after the loop becomes the last iteration of the one in the loop.
    std::set<size_t> absorbed;
    for (size_t e : info.events)
      if (auto after = matchShiftedRelease(arr, e, info.events))
        absorbed.insert(*after);
    for (size_t e : info.events)
      checkIndexRange(arr, sk_.events[e]);
    info.events.erase(std::remove_if(info.events.begin(), info.events.end(),
                                     [&](size_t e) { return absorbed.count(e) > 0; }),
                      info.events.end());
    for (size_t e : info.events) {
      const SyncEvent &ev = sk_.events[e];
      if (auto s = shifted_.find(&ev); s != shifted_.end()) {
        barrierPattern_[e] = s->second.pattern;
        continue;
      }
      if (ev.kind != SyncKind::MbarInit && ev.kind != SyncKind::MbarInval &&
          guardedByIteration(ev)) {
        // Rounds are numbered from the first iteration touching an element,
        // guarded or not: a guard over the loop variable (`if k > 0`) shifts
        // which round an execution belongs to, which the model cannot see.
        info.symbolic = false;
        report_.notProved.push_back(
            {ev.loc, fmt::format("{}: a condition over the loop variable decides whether it "
                                 "runs, which shifts the rounds of {}; its phases are not proved",
                                 ev.what, arr.name)});
      }
      if (ev.crossCta() && !sk_.cluster.empty() && !clusterCtas_) {
        info.symbolic = false;
        report_.notProved.push_back(
            {ev.loc,
             fmt::format("{}: it reaches {} in other CTAs of a cluster whose extent is not a "
                         "constant along one axis; its phases are not proved",
                         ev.what, arr.name)});
      }
      Pattern p = patternOf(ev, ev.barrier.index, arr.size);
      barrierPattern_[e] = p;
      if (!p.ok && ev.kind != SyncKind::MbarInit && ev.kind != SyncKind::MbarInval) {
        info.symbolic = false;
        report_.notProved.push_back(
            {ev.loc, fmt::format("{}: the index of {} is neither (iteration + c) % {} nor constant "
                                 "in the (flattened) iteration of its loops, so its phases are "
                                 "not proved",
                                 ev.what, arr.name, arr.size)});
      }
    }
    barriers_[arr.name] = info;
    if (!info.symbolic) {
      checkArrivalsPerExecution(info);
      result(arr.name + ": phases", false, "not proved: see warnings");
      return;
    }
    checkArrivals(info);
    checkTransactions(info);
    for (size_t e : info.events)
      if (sk_.events[e].kind == SyncKind::MbarWait)
        checkWait(info, e);
  }

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
                                            const std::vector<size_t> &events) {
    const SyncEvent &ev = sk_.events[e];
    if (ev.kind != SyncKind::MbarArrive || ev.loop < 0 || ev.crossCta() || ev.guards.size() != 1 ||
        !modelled(ev) || arr.size < 2)
      return std::nullopt;
    const SkeletonLoop &loop = sk_.loops[size_t(ev.loop)];
    if (loop.parent >= 0 || constantValue(loop.begin) != 0 || constantValue(loop.step) != 1)
      return std::nullopt;
    if (!firstIterationGuard(ev.guards.front(), loop.var))
      return std::nullopt;
    if (ev.amount && namesUsed(ev.amount).count(loop.var))
      return std::nullopt;
    Pattern p = patternOf(ev, ev.barrier.index, arr.size);
    if (!p.ok || p.constant || p.period != arr.size)
      return std::nullopt;
    Shifted shifted;
    shifted.shift = 1;
    shifted.pattern = p;
    shifted.pattern.c = (p.c + 1) % p.period;
    shifted.pattern.shift = 1;
    int lastInLoop = ev.order;
    for (const SyncEvent &x : sk_.events)
      if (x.loop == ev.loop)
        lastInLoop = std::max(lastInLoop, x.order);
    std::optional<size_t> after;
    int candidates = 0;
    for (size_t a : events) {
      const SyncEvent &x = sk_.events[a];
      if (x.kind != SyncKind::MbarArrive || x.loop >= 0 || x.order <= lastInLoop ||
          x.role != ev.role || !(x.threads == ev.threads) || x.scope != ev.scope ||
          !x.guards.empty() || x.crossCta())
        continue;
      ++candidates;
      bool sameAmount =
          (!x.amount && !ev.amount) || (x.amount && ev.amount && equal(x.amount, ev.amount));
      if (sameAmount && releasesLastIteration(x, ev, shifted.pattern))
        after = a;
    }
    if (candidates > 1)
      after.reset(); // which one releases the last iteration is not clear
    shifted.afterLoop = after.has_value();
    shifted_[&ev] = shifted;
    return after;
  }

  // `k > 0` or `k >= 1` (either way round) over the loop variable k.
  static bool firstIterationGuard(const Expr &g, const std::string &var) {
    if (g->kind != ExprKind::Binary)
      return false;
    const Binary &b = as<Binary>(g);
    auto isVar = [&](const Expr &x) { return x->kind == ExprKind::Var && as<Var>(x).name == var; };
    auto c = [](const Expr &x) { return constantValue(x); };
    switch (b.op) {
    case BinaryOp::Gt:
      return isVar(b.lhs) && c(b.rhs) == 0;
    case BinaryOp::Ge:
      return isVar(b.lhs) && c(b.rhs) == 1;
    case BinaryOp::Lt:
      return isVar(b.rhs) && c(b.lhs) == 0;
    case BinaryOp::Le:
      return isVar(b.rhs) && c(b.lhs) == 1;
    default:
      return false;
    }
  }

  // Whether the arrival `after`, outside loops, touches element
  // (trip - 1 + c) % S of the loop of `release` for every admitted size,
  // and the loop runs at least once (else it would release an iteration
  // that never ran).
  bool releasesLastIteration(const SyncEvent &after, const SyncEvent &release, const Pattern &p) {
    auto idx = at(after.barrier.index, after, ctx_.int_val(0));
    if (!idx || !idx->is_int())
      return false;
    z3::expr trip = *loopTrip_[size_t(release.loop)];
    Query runs = solver();
    runs.add(trip < 1);
    if (runs.check() != z3::unsat)
      return false;
    Query last = solver();
    last.add(*idx != z3::mod(trip - 1 + ctx_.int_val(p.c), ctx_.int_val(p.period)));
    return last.check() == z3::unsat;
  }

  bool guardedByIteration(const SyncEvent &ev) const {
    for (int l = ev.loop; l >= 0; l = sk_.loops[size_t(l)].parent)
      for (const Expr &g : ev.guards)
        if (namesUsed(g).count(sk_.loops[size_t(l)].var))
          return true;
    return false;
  }

  // The round-n events of element j of `arr` that match `pick`, as
  // (fires, amount) terms.
  // In a cluster the terms are those reaching element j of the CTA of rank
  // receiver() (see clusterTerms).
  struct Term {
    size_t event;
    z3::expr fires, amount, iteration;
    int64_t sender = -1; // the CTA rank issuing a cross-CTA term
  };
  std::vector<Term> roundTerms(const BarrierInfo &info, const z3::expr &j, const z3::expr &n,
                               bool (*pick)(SyncKind), bool &ok) {
    std::vector<Term> out;
    for (size_t e : info.events) {
      const SyncEvent &ev = sk_.events[e];
      if (!pick(ev.kind))
        continue;
      const Pattern &p = barrierPattern_[e];
      z3::expr i = iterOf(p, j, n);
      if (clusterCtas_) {
        clusterTerms(e, i, touches(p, j), out, ok);
        continue;
      }
      z3::expr f = touches(p, j) && fires(ev, i);
      out.push_back({e, f, amountOf(ev, i, ok), i});
    }
    return out;
  }

  // --- clusters ---
  //
  // Every CTA of a cluster runs the same code with its own rank (its
  // clusterCtaIdx along the cluster's axis, ClusterShape), so the arrivals and bytes that element j of the barrier of the CTA of
  // rank ρ (receiver()) receives in round n are its own local events at ρ,
  // plus, from every rank σ of the cluster, the remote arrivals
  // (`cta = r`) whose r is ρ at σ and the multicasts whose mask has bit ρ
  // at σ. With the cluster's extent a constant C, σ runs over 0 .. C - 1:
  // one term per sender. The rounds are numbered alike in every CTA (the
  // barrier index may not read the rank: patternOf refuses what it cannot
  // encode).

  static BuiltinKind clusterCtaIdxOf(int axis) {
    const BuiltinKind k[] = {BuiltinKind::clusterCtaIdx_x, BuiltinKind::clusterCtaIdx_y,
                             BuiltinKind::clusterCtaIdx_z};
    return k[axis];
  }
  static BuiltinKind blockIdxOf(int axis) {
    const BuiltinKind k[] = {BuiltinKind::blockIdx_x, BuiltinKind::blockIdx_y,
                             BuiltinKind::blockIdx_z};
    return k[axis];
  }

  // The receiving CTA is the one whose blockIdx the encoder's symbol names;
  // its rank is that blockIdx modulo C (clusters tile the grid along the
  // axis), and a sender of rank σ has blockIdx (blockIdx - ρ + σ).
  z3::expr receiverBlock() {
    if (!receiverBlock_) {
      receiverBlock_ = *enc_.encode(Builtin::make(blockIdxOf(clusterAxis_)), {});
      // Inside the grid: a sender's blockIdx past its end is no CTA.
      if (size_t(clusterAxis_) < sk_.grid.size())
        if (auto g = enc_.encode(sk_.grid[size_t(clusterAxis_)], {}); g && g->is_int())
          gridBounds_.push_back(*receiverBlock_ < *g);
    }
    return *receiverBlock_;
  }
  z3::expr receiver() { return z3::mod(receiverBlock(), ctx_.int_val(*clusterCtas_)); }
  void encodeAsRank(const z3::expr &rank) {
    rank_ = rank;
    block_ = receiverBlock() - receiver() + rank;
  }

  // Whether the cross-CTA event ev issued by rank σ at iteration i reaches
  // the receiver's barrier (rank_ is σ while this runs).
  std::optional<z3::expr> reaches(const SyncEvent &ev, const z3::expr &i) {
    if (ev.remoteCta) {
      auto r = at(ev.remoteCta, ev, i);
      if (!r || !r->is_int())
        return std::nullopt;
      return *r == receiver();
    }
    auto mask = at(ev.multicast, ev, i);
    if (!mask || !mask->is_int())
      return std::nullopt;
    z3::expr_vector bits(ctx_);
    for (int64_t rho = 0; rho < *clusterCtas_; ++rho)
      bits.push_back(receiver() == ctx_.int_val(rho) &&
                     z3::mod(*mask / ctx_.int_val(int64_t(1) << rho), 2) == 1);
    return z3::mk_or(bits);
  }

  void clusterTerms(size_t e, const z3::expr &i, const z3::expr &touched, std::vector<Term> &out,
                    bool &ok) {
    const SyncEvent &ev = sk_.events[e];
    if (!ev.crossCta()) {
      encodeAsRank(receiver());
      out.push_back({e, touched && fires(ev, i), amountOf(ev, i, ok), i});
      rank_.reset();
      return;
    }
    for (int64_t sigma = 0; sigma < *clusterCtas_; ++sigma) {
      encodeAsRank(ctx_.int_val(sigma));
      auto reached = reaches(ev, i);
      if (!reached)
        ok = false;
      z3::expr f = touched && fires(ev, i) && reached.value_or(ctx_.bool_val(false));
      out.push_back({e, f, amountOf(ev, i, ok), i, sigma});
      rank_.reset();
    }
  }

  // " of the CTA of rank 1" in a cluster, for the witnesses of counts.
  std::string receiverText(const z3::model &m) {
    if (!clusterCtas_)
      return "";
    return fmt::format(" of the CTA of rank {} in the cluster", ProtoEncoder::value(m, receiver()));
  }

  // The barriers that cross-CTA events in loops reach: the ordering graph
  // has no edges between CTAs, so with them its proofs would be about one
  // CTA. (Events outside loops are not in the graph at all.)
  std::string crossCtaBarriers() const {
    std::set<std::string> names;
    for (const SyncEvent &e : sk_.events)
      if (e.crossCta() && e.loop >= 0 && !e.barrier.array.empty() && clusterCtas_)
        names.insert(e.barrier.array);
    std::string out;
    for (const std::string &n : names)
      out += (out.empty() ? "" : ", ") + n;
    return out;
  }

  static z3::expr sumOf(z3::context &ctx, const std::vector<Term> &terms) {
    z3::expr sum = ctx.int_val(0);
    for (const Term &t : terms)
      sum = sum + z3::ite(t.fires, t.amount, ctx.int_val(0));
    return sum;
  }
  static z3::expr anyOf(z3::context &ctx, const std::vector<Term> &terms) {
    z3::expr_vector v(ctx);
    for (const Term &t : terms)
      v.push_back(t.fires);
    return v.empty() ? ctx.bool_val(false) : z3::mk_or(v);
  }

  std::string termList(const z3::model &m, const std::vector<Term> &terms, const char *unit) {
    std::string out;
    for (const Term &t : terms) {
      if (!m.eval(t.fires, true).is_true())
        continue;
      const SyncEvent &ev = sk_.events[t.event];
      if (!out.empty())
        out += " + ";
      out += fmt::format("{} {} ({} by {}{}, {})", ProtoEncoder::value(m, t.amount), unit, ev.what,
                         ev.threads.describe(),
                         t.sender >= 0 ? fmt::format(" of the CTA of rank {}", t.sender) : "",
                         iterationText(m, ev, t.iteration));
    }
    return out.empty() ? "none" : out;
  }

  void checkArrivals(const BarrierInfo &info) {
    const BarrierArray &arr = *info.arr;
    z3::expr j = enc_.fresh("j"), n = enc_.fresh("n");
    bool ok = true;
    auto terms = roundTerms(info, j, n, isArrival, ok);
    if (!ok || terms.empty()) {
      result(arr.name + ": arrivals per phase", false, "not proved: no arrival with a known count");
      return;
    }
    z3::expr sum = sumOf(ctx_, terms);
    z3::expr C = ctx_.int_val(*info.count);
    for (bool over : {true, false}) {
      Query s = solver();
      s.add(j >= 0 && j < ctx_.int_val(arr.size) && n >= 0);
      s.add(anyOf(ctx_, terms));
      s.add(over ? sum > C : sum < C);
      std::optional<z3::model> m;
      s.prefer(n);
      s.prefer(j);
      if (check(s, m, arr.loc, arr.name + " arrivals") != z3::sat)
        continue;
      int64_t jv = ProtoEncoder::value(*m, j), nv = ProtoEncoder::value(*m, n),
              got = ProtoEncoder::value(*m, sum);
      size_t firstEvent = terms.front().event;
      for (const Term &t : terms)
        if (m->eval(t.fires, true).is_true()) {
          firstEvent = t.event;
          break;
        }
      std::vector<std::pair<llvm::SMLoc, std::string>> notes;
      for (const Term &t : terms)
        if (m->eval(t.fires, true).is_true())
          notes.push_back({sk_.events[t.event].loc,
                           fmt::format("arrives {} time(s) per execution: {} by {}",
                                       ProtoEncoder::value(*m, t.amount), sk_.events[t.event].what,
                                       sk_.events[t.event].threads.describe())});
      notes.push_back(
          {arr.loc, fmt::format("{} is declared with count {}", arr.name, *info.count)});
      if (over) {
        finding(ProtocolViolationKind::OverArrival, sk_.events[firstEvent].loc,
                fmt::format(
                    "over-arrival: phase {} of {}[{}]{} receives {} arrivals but its count is {} "
                    "({}; for {})",
                    nv, arr.name, jv, receiverText(*m), got, *info.count,
                    termList(*m, terms, "arrivals"), sizes(*m)),
                notes);
      } else {
        // Report at the first wait on this barrier (who hangs), else the arrive.
        llvm::SMLoc loc = sk_.events[firstEvent].loc;
        for (size_t e : info.events)
          if (sk_.events[e].kind == SyncKind::MbarWait) {
            loc = sk_.events[e].loc;
            break;
          }
        finding(
            ProtocolViolationKind::PhaseNeverCompletes, loc,
            fmt::format(
                "phase {} of {}[{}]{} never completes: it receives {} of {} arrivals ({}; for {})",
                nv, arr.name, jv, receiverText(*m), got, *info.count,
                termList(*m, terms, "arrivals"), sizes(*m)),
            notes);
      }
      result(arr.name + ": arrivals per phase", false, "violated");
      return;
    }
    result(arr.name + ": arrivals per phase", true,
           fmt::format("proved for all sizes: every phase receives exactly {}", *info.count));
  }

  // Where the rounds of a barrier are out of the model's reach, what needs
  // no rounds: one execution of an arrival brings more arrivals than the
  // count (a phase takes at most `count`), a linear fact of the amount and
  // the executing threads, decided for all sizes and iterations without
  // exploring states.
  void checkArrivalsPerExecution(const BarrierInfo &info) {
    if (!info.count)
      return;
    const BarrierArray &arr = *info.arr;
    for (size_t e : info.events) {
      const SyncEvent &ev = sk_.events[e];
      if (!isArrival(ev.kind) || ev.crossCta() || !modelled(ev) || clusterCtas_)
        continue;
      z3::expr i = enc_.fresh("i");
      bool ok = true;
      z3::expr amount = amountOf(ev, i, ok);
      // An index that reads the thread (`bar[warpid]`) spreads one
      // execution over several elements: not one phase.
      auto index = at(ev.barrier.index, ev, i);
      if (!ok || !index || !index->is_int())
        continue;
      Query s = solver();
      s.add(fires(ev, i));
      s.add(amount > ctx_.int_val(*info.count));
      s.prefer(i);
      std::optional<z3::model> m;
      if (check(s, m, ev.loc, arr.name + " arrivals per execution") != z3::sat)
        continue;
      std::string element = fmt::format("{}[{}]", arr.name, ProtoEncoder::value(*m, *index));
      finding(ProtocolViolationKind::OverArrival, ev.loc,
              fmt::format("over-arrival: one execution of {} by {} at {} brings {} arrivals to "
                          "{}, but a phase of {} takes {} (for {})",
                          ev.what, ev.threads.describe(), iterationText(*m, ev, i),
                          ProtoEncoder::value(*m, amount), element, arr.name, *info.count,
                          sizes(*m)),
              {{arr.loc, fmt::format("{} is declared with count {}", arr.name, *info.count)}});
    }
  }

  void checkTransactions(const BarrierInfo &info) {
    const BarrierArray &arr = *info.arr;
    z3::expr j = enc_.fresh("j"), n = enc_.fresh("n");
    bool ok = true;
    auto expected = roundTerms(
        info, j, n, [](SyncKind k) { return k == SyncKind::MbarExpectTx; }, ok);
    auto delivered = roundTerms(
        info, j, n,
        [](SyncKind k) { return k == SyncKind::TxDelivery || k == SyncKind::MbarCompleteTx; }, ok);
    if (expected.empty() && delivered.empty())
      return;
    if (!ok) {
      result(arr.name + ": transaction bytes", false,
             "not proved: a byte count is not an integer expression");
      return;
    }
    z3::expr want = sumOf(ctx_, expected), got = sumOf(ctx_, delivered);
    Query s = solver();
    s.add(j >= 0 && j < ctx_.int_val(arr.size) && n >= 0);
    s.add(anyOf(ctx_, expected) || anyOf(ctx_, delivered));
    s.add(want != got);
    std::optional<z3::model> m;
    s.prefer(n);
    s.prefer(j);
    if (check(s, m, arr.loc, arr.name + " bytes") == z3::sat) {
      int64_t jv = ProtoEncoder::value(*m, j), nv = ProtoEncoder::value(*m, n);
      int64_t w = ProtoEncoder::value(*m, want), g = ProtoEncoder::value(*m, got);
      llvm::SMLoc loc = !expected.empty() ? sk_.events[expected.front().event].loc
                                          : sk_.events[delivered.front().event].loc;
      std::vector<std::pair<llvm::SMLoc, std::string>> notes;
      for (const Term &t : delivered)
        if (m->eval(t.fires, true).is_true())
          notes.push_back(
              {sk_.events[t.event].loc,
               fmt::format(
                   "delivers {} bytes to {}[{}]{}", ProtoEncoder::value(*m, t.amount), arr.name, jv,
                   t.sender >= 0 ? fmt::format(" (issued by the CTA of rank {})", t.sender) : "")});
      finding(ProtocolViolationKind::TxBytesMismatch, loc,
              fmt::format(
                  "expect_tx bytes mismatch: phase {} of {}[{}]{} expects {} bytes but the copies "
                  "signalling it deliver {} (expected: {}; delivered: {}; for {})",
                  nv, arr.name, jv, receiverText(*m), w, g, termList(*m, expected, "bytes"),
                  termList(*m, delivered, "bytes"), sizes(*m)),
              notes);
      result(arr.name + ": transaction bytes", false, "violated");
      return;
    }
    if (!m && !std::any_of(report_.notProved.begin(), report_.notProved.end(),
                           [&](const auto &n) { return n.first == arr.loc; }))
      result(arr.name + ": transaction bytes", true,
             "proved for all sizes: expect_tx equals the bytes delivered in every phase");
  }

  // A wait reads only the low bit of its parity, and (x mod 2m) mod 2 =
  // x mod 2 (Z3's mod is Euclidean): remainders by even constants around
  // the parity are dropped before it is taken mod 2. A parity written
  // `% 65536` instead of `% 2` otherwise cost Z3 seconds per query.
  static z3::expr parityOperand(z3::expr p) {
    int64_t m = 0;
    while (p.is_app() && p.decl().decl_kind() == Z3_OP_MOD && p.arg(1).is_numeral_i64(m) && m > 0 &&
           m % 2 == 0)
      p = p.arg(0);
    return p;
  }

  void checkWait(const BarrierInfo &info, size_t w) {
    const SyncEvent &ev = sk_.events[w];
    const BarrierArray &arr = *info.arr;
    const Pattern &p = barrierPattern_[w];
    z3::expr i = enc_.fresh("i");
    auto [j, n] = roundOf(p, i);
    auto parity = ev.parity ? at(ev.parity, ev, i) : std::nullopt;
    if (!parity || !parity->is_int()) {
      report_.notProved.push_back(
          {ev.loc, "the parity of this wait is not an integer expression Z3 can read"});
      return;
    }
    z3::expr two = ctx_.int_val(2);
    z3::expr same = z3::mod(parityOperand(*parity), two) == z3::mod(n, two);
    // Whether some execution waits for its round's phase (current) or the
    // one before; witnesses are sought only when both do (aliasing).
    auto waitsFor = [&](bool current, std::optional<z3::model> *witness) {
      Query s = solver();
      s.add(fires(ev, i) && (current ? same : !same));
      if (!witness)
        return decide(s, ev.loc, "wait parity");
      s.prefer(i);
      return check(s, *witness, ev.loc, "wait parity");
    };
    bool waitsCurrent = waitsFor(true, nullptr) == z3::sat;
    bool waitsPrevious = waitsFor(false, nullptr) == z3::sat;
    std::optional<z3::model> cur, prev;
    if (waitsCurrent && waitsPrevious && waitsFor(true, &cur) == z3::sat &&
        waitsFor(false, &prev) == z3::sat) {
      // Read the wait as its first round does, so the rest of the proof is
      // not a cascade of this finding.
      Query first = solver();
      first.add(fires(ev, i) && same && n == 0);
      waitShift_[w] = first.check() == z3::sat ? 0 : -1;
      finding(
          ProtocolViolationKind::ParityAliasing, ev.loc,
          fmt::format(
              "parity aliasing: the parity {} does not follow the phases of {}: at {} (the "
              "wait's round {} on {}[{}]) it waits for phase {}, but at {} (round {} on {}[{}]) "
              "for phase {}, so one of them is satisfied by a phase two behind (for {})",
              print(ev.parity), arr.name, iterationText(*cur, ev, i), ProtoEncoder::value(*cur, n),
              arr.name, ProtoEncoder::value(*cur, j), ProtoEncoder::value(*cur, n),
              iterationText(*prev, ev, i), ProtoEncoder::value(*prev, n), arr.name,
              ProtoEncoder::value(*prev, j), ProtoEncoder::value(*prev, n) - 1, sizes(*prev)));
      return;
    }
    if (!waitsCurrent && !waitsPrevious)
      return; // never runs
    int64_t d = waitsCurrent ? 0 : -1;
    waitShift_[w] = d;
    // The phase it waits for must complete.
    z3::expr tau = n + ctx_.int_val(d);
    bool ok = true;
    auto completing = roundTerms(info, j, tau, completesPhase, ok);
    auto arrivals = roundTerms(info, j, tau, isArrival, ok);
    Query s = solver();
    s.add(fires(ev, i) && tau >= 0 && !anyOf(ctx_, arrivals));
    std::optional<z3::model> m;
    s.prefer(i);
    if (check(s, m, ev.loc, "wait completion") == z3::sat) {
      int64_t phase = ProtoEncoder::value(*m, tau);
      finding(
          ProtocolViolationKind::Deadlock, ev.loc,
          fmt::format("deadlock: this wait on {}[{}] (parity {}) at {} by {} waits for phase {}, "
                      "which never completes: nothing arrives on {}[{}] in that phase (for {})",
                      arr.name, ProtoEncoder::value(*m, j), ProtoEncoder::value(*m, *parity) % 2,
                      iterationText(*m, ev, i), sk_.roles[size_t(ev.role)].describe(), phase,
                      arr.name, ProtoEncoder::value(*m, j), sizes(*m)));
    }
  }

  // --- the dependency graph: who must happen before whom ---
  //
  // Nodes are events in non-nested loops. An edge a -> b of weight w says
  // "a at iteration x happens after b at iteration x + w" (w <= 0): program
  // order within a role (same iteration: w = 0 to an earlier statement;
  // earlier iterations: w = -1), and a wait's need for the arrivals and
  // transactions of the phase it waits for. D[a][b] is the heaviest path:
  // a at x happens after b at every iteration <= x + D[a][b].

  void buildGraph() {
    for (size_t e = 0; e < sk_.events.size(); ++e) {
      const SyncEvent &ev = sk_.events[e];
      if (ev.loop >= 0 && loopClass_[size_t(ev.loop)] >= 0) {
        nodeOf_[e] = int(nodes_.size());
        nodes_.push_back(e);
      }
    }
    size_t N = nodes_.size();
    // A shifted release (matchShiftedRelease) at iteration x follows the
    // statements before it in iteration x, but it does not run at iteration
    // 0 (where a wait that passes at once, phase -1, meets it) and the
    // release after the loop (its iteration trip) has no iteration trip to
    // follow. Those edges are kept for the deadlock cycles (true at every
    // iteration that runs, and a cycle needs them), not for the orderings the
    // safety proofs (aliasing, stages) rely on.
    struct Edge {
      size_t a, b;
      int64_t w;
      bool cycleOnly;
      bool programOrder = true;
    };
    std::vector<Edge> edges;
    auto edge = [&](size_t a, size_t b, int64_t w) {
      bool cycleOnly = w == 0 && shifted_.count(&sk_.events[nodes_[a]]);
      edges.push_back({a, b, w, cycleOnly});
    };
    for (size_t a = 0; a < N; ++a)
      for (size_t b = 0; b < N; ++b) {
        const SyncEvent &later = sk_.events[nodes_[a]], &earlier = sk_.events[nodes_[b]];
        if (later.role != earlier.role || later.loop != earlier.loop)
          continue;
        if (!later.threads.subsetOf(coverOf(earlier)))
          continue;
        bool asyncUnwaited =
            earlier.kind == SyncKind::WgmmaMma && !waitedAfter(nodes_[b], nodes_[a]);
        if (later.order > earlier.order && !asyncUnwaited)
          edge(a, b, 0);
        if (!(earlier.kind == SyncKind::WgmmaMma && !waitedAfter(nodes_[b], SIZE_MAX)))
          edge(a, b, -1);
        else if (auto lag = groupsInFlight(nodes_[b], nodes_[a]))
          edge(a, b, -*lag); // wgmma groups kept in flight: retired n iterations later
      }
    // A wait needs the events completing its phase.
    for (const auto &[w, d] : waitShift_) {
      if (!nodeOf_.count(w))
        continue;
      const SyncEvent &wait = sk_.events[w];
      const BarrierInfo &info = barriers_.at(wait.barrier.array);
      for (size_t e : info.events) {
        if (!completesPhase(sk_.events[e].kind) || !nodeOf_.count(e))
          continue;
        if (loopClass_[size_t(sk_.events[e].loop)] != loopClass_[size_t(wait.loop)])
          continue;
        if (auto delta = constantDelta(w, e, d))
          edges.push_back({size_t(nodeOf_[w]), size_t(nodeOf_[e]), *delta, false, false});
        else
          report_.notProved.push_back(
              {wait.loc,
               fmt::format("the iteration distance between this wait and {} is not constant; "
                           "deadlock freedom through it is not proved",
                           sk_.events[e].what)});
      }
    }
    closePaths(edges, false, D_, next_);
    closeEveryThreadPaths(edges);
    if (std::any_of(edges.begin(), edges.end(), [](const Edge &e) { return e.cycleOnly; }))
      closePaths(edges, true, cycleD_, cycleNext_);
    else
      cycleD_ = D_, cycleNext_ = next_;
  }

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
  bool joinsItsThreads(const SyncEvent &e) const {
    if (e.kind == SyncKind::CtaSync)
      return true;
    if (e.kind != SyncKind::NamedSync || e.namedId < 0 ||
        e.namedThreads != int64_t(e.threads.count()))
      return false;
    for (const SyncEvent &o : sk_.events)
      if (&o != &e && o.namedId == e.namedId &&
          (o.kind == SyncKind::NamedSync || o.kind == SyncKind::NamedArrive))
        return false; // another use of the id may complete its generation
    return true;
  }

  template <class Edges> void closeEveryThreadPaths(const Edges &edges) {
    struct StateEdge {
      size_t a, b;
      int64_t w;
      bool cycleOnly;
    };
    std::vector<StateEdge> states;
    auto at = [](size_t n, bool every) { return 2 * n + (every ? 1 : 0); };
    for (const auto &e : edges) {
      if (e.cycleOnly)
        continue;
      const SyncEvent &later = sk_.events[nodes_[e.a]], &earlier = sk_.events[nodes_[e.b]];
      if (!e.programOrder || joinsItsThreads(earlier)) {
        for (bool every : {false, true})
          states.push_back({at(e.a, every), at(e.b, true), e.w, false});
        continue;
      }
      // Only an MMA's completion is the collective's (wgmma, a tile gemm
      // dispatched to one: it retires for the whole warpgroup); other
      // accesses, tile primitives included, are each thread's own.
      bool mma = earlier.kind == SyncKind::WgmmaMma ||
                 (earlier.scope == ExecScope::Warpgroup &&
                  (earlier.call == IntrinsicId::Gemm || earlier.call == IntrinsicId::GemmAsync));
      ThreadSet units = mma ? later.threads.widened(128) : later.threads;
      states.push_back({at(e.a, true), at(e.b, earlier.threads.subsetOf(units)), e.w, false});
      states.push_back({at(e.a, false), at(e.b, false), e.w, false});
    }
    // Joining barriers split by thread (a named barrier per warpgroup, under
    // `if wgid == ...`): a after b for every thread of b when each thread of
    // b passes, after b, a joining barrier that some thread of a passes
    // before a (same iteration: w = 0; b in the iteration before: w = -1).
    size_t N = nodes_.size();
    for (size_t a = 0; a < N; ++a)
      for (size_t b = 0; b < N; ++b) {
        const SyncEvent &later = sk_.events[nodes_[a]], &earlier = sk_.events[nodes_[b]];
        if (a == b || later.role != earlier.role || later.loop != earlier.loop)
          continue;
        for (int64_t w : {0, -1}) {
          if (w == 0 && (later.order <= earlier.order || shifted_.count(&later)))
            continue;
          ThreadSet joined(sk_.threads);
          for (size_t j : nodes_) {
            const SyncEvent &J = sk_.events[j];
            if (J.role != later.role || J.loop != later.loop || !J.guards.empty() ||
                !joinsItsThreads(J))
              continue;
            bool meets = false;
            for (int64_t t = 0; t < sk_.threads && !meets; ++t)
              meets = J.threads.contains(t) && later.threads.contains(t);
            bool between = w == 0 ? earlier.order < J.order && J.order < later.order
                                  : earlier.order < J.order || J.order < later.order;
            if (meets && between)
              for (int64_t t = 0; t < sk_.threads; ++t)
                if (J.threads.contains(t))
                  joined.add(t);
          }
          if (earlier.threads.subsetOf(joined))
            states.push_back({at(a, true), at(b, true), w, false});
        }
      }
    std::vector<std::vector<int>> next;
    closePaths(states, false, everyD_, next, 2 * N);
  }

  // Heaviest path from a to b such that a follows b as executed by every
  // thread of b (closeEveryThreadPaths).
  int64_t everyPath(size_t a, size_t b) const { return everyD_[2 * a + 1][2 * b + 1]; }

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

  // Whether a wgmma.wait_group(0) of the same role and loop lies between
  // `mma` and `before` in program order (anywhere after mma when before is
  // SIZE_MAX).
  // A wgmma.mma_async whose group is retired by a wgmma.wait_group(n >= 1)
  // of a later iteration: the smallest such n for `later`, when the wait lies
  // after the commit that closes the MMA's group and before `later` in the
  // body. Every iteration commits at least one group, so n groups in flight
  // are at most n iterations: `later` at iteration x runs after the MMA of
  // iteration x - n completed (the "one group in flight" mainloop).
  std::optional<int64_t> groupsInFlight(size_t mma, size_t later) const {
    const SyncEvent &m = sk_.events[mma];
    const SyncEvent *commit = nullptr;
    for (const SyncEvent &e : sk_.events)
      if (!commit && e.kind == SyncKind::WgmmaCommit && e.role == m.role && e.loop == m.loop &&
          e.order > m.order && e.guards.empty())
        commit = &e;
    if (!commit)
      return std::nullopt;
    std::optional<int64_t> best;
    for (const SyncEvent &e : sk_.events) {
      if (e.kind != SyncKind::WgmmaWait || e.role != m.role || e.loop != m.loop ||
          e.order < commit->order || e.order > sk_.events[later].order || !e.guards.empty())
        continue;
      if (auto n = constantValue(e.amount); n && *n >= 1 && (!best || *n < *best))
        best = *n;
    }
    return best;
  }

  bool waitedAfter(size_t mma, size_t before) const {
    const SyncEvent &m = sk_.events[mma];
    for (const SyncEvent &e : sk_.events)
      if (e.kind == SyncKind::WgmmaWait && e.role == m.role && e.loop == m.loop &&
          e.order > m.order && (before == SIZE_MAX || e.order < sk_.events[before].order) &&
          constantValue(e.amount).value_or(1) == 0)
        return true;
    return false;
  }

  // iteration(event e in the wait's phase) - iteration(wait), when constant.
  std::optional<int64_t> constantDelta(size_t w, size_t e, int64_t d, int64_t extraRounds = 0) {
    const Pattern &pw = barrierPattern_[w], &pe = barrierPattern_[e];
    if (!pw.constant && !pe.constant && pw.c == pe.c && pw.period == pe.period)
      return (d + extraRounds) * pw.period + pe.shift - pw.shift;
    if (pw.constant && pe.constant && pw.c == pe.c)
      return d + extraRounds;
    z3::expr i = enc_.fresh("i");
    auto [j, n] = roundOf(pw, i);
    z3::expr ie = iterOf(pe, j, n + ctx_.int_val(d + extraRounds));
    z3::expr delta = ie - i;
    Query s = solver();
    s.add(fires(sk_.events[w], i) && touches(pe, j));
    z3::expr probe = enc_.fresh("delta");
    s.add(probe == delta);
    if (s.check() != z3::sat)
      return std::nullopt;
    int64_t v = ProtoEncoder::value(s.get_model(), probe);
    Query t = solver();
    t.add(fires(sk_.events[w], i) && touches(pe, j) && delta != ctx_.int_val(v));
    if (t.check() != z3::unsat)
      return std::nullopt;
    return v;
  }

  std::vector<size_t> cycleThrough(size_t a) {
    std::vector<size_t> path{a};
    size_t cur = a;
    for (size_t steps = 0; steps < nodes_.size() + 1; ++steps) {
      int nx = cycleNext_[cur][a];
      if (nx < 0)
        break;
      if (size_t(nx) == a)
        return path;
      path.push_back(size_t(nx));
      cur = size_t(nx);
    }
    return path;
  }

  void findDeadlockCycles() {
    std::set<std::set<size_t>> seen;
    bool any = false;
    for (size_t a = 0; a < nodes_.size(); ++a) {
      if (cycleD_[a][a] < 0 || sk_.events[nodes_[a]].kind != SyncKind::MbarWait)
        continue;
      std::vector<size_t> cycle = cycleThrough(a);
      std::set<size_t> key(cycle.begin(), cycle.end());
      if (!seen.insert(key).second)
        continue;
      any = true;
      // A witness iteration where every event of the cycle runs.
      z3::expr i = enc_.fresh("i");
      Query s = solver();
      for (size_t node : cycle)
        s.add(fires(sk_.events[nodes_[node]], i));
      std::optional<z3::model> m;
      s.prefer(i);
      if (check(s, m, sk_.events[nodes_[a]].loc, "deadlock witness") != z3::sat)
        continue;
      const SyncEvent &first = sk_.events[nodes_[a]];
      std::string chain;
      std::vector<std::pair<llvm::SMLoc, std::string>> notes;
      for (size_t k = 0; k < cycle.size(); ++k) {
        const SyncEvent &e = sk_.events[nodes_[cycle[k]]];
        const SyncEvent &nx = sk_.events[nodes_[cycle[(k + 1) % cycle.size()]]];
        if (e.kind == SyncKind::MbarWait && nx.role != e.role)
          notes.push_back(
              {e.loc, fmt::format("{} by {} waits on {} for a phase completed only by the "
                                  "{} below",
                                  e.what, e.threads.describe(), e.barrier.array, nx.what)});
        else if (e.kind == SyncKind::MbarWait)
          notes.push_back({e.loc, fmt::format("{} by {} waits on {}", e.what, e.threads.describe(),
                                              e.barrier.array)});
        else
          notes.push_back({e.loc, fmt::format("{} by {} runs only after the wait below", e.what,
                                              e.threads.describe())});
      }
      auto [j, n] = roundOf(barrierPattern_[nodes_[a]], i);
      int64_t d = waitShift_.count(nodes_[a]) ? waitShift_[nodes_[a]] : 0;
      auto parity = at(first.parity, first, i);
      finding(
          ProtocolViolationKind::Deadlock, first.loc,
          fmt::format("deadlock: at {} this wait on {}[{}] (parity {}) by {} waits for phase {}, "
                      "whose arrivals come after this same wait through a cycle of {} waits and "
                      "arrivals (for {})",
                      iterationText(*m, first, i), first.barrier.array, ProtoEncoder::value(*m, j),
                      parity ? ProtoEncoder::value(*m, *parity) % 2 : -1,
                      sk_.roles[size_t(first.role)].describe(), ProtoEncoder::value(*m, n) + d,
                      cycle.size(), sizes(*m)),
          notes);
    }
    if (!nodes_.empty())
      result("deadlock freedom (waits and arrivals in loops)", !any,
             any ? "violated" : "proved for all sizes: no cycle of waits and arrivals");
  }

  // A wait for phase t must not see phase t + 1 complete before it runs.
  void checkAliasing() {
    for (const auto &[w, d] : waitShift_) {
      if (!nodeOf_.count(w))
        continue;
      const SyncEvent &wait = sk_.events[w];
      const BarrierInfo &info = barriers_.at(wait.barrier.array);
      bool guarded = false;
      for (size_t e : info.events) {
        if (!isArrival(sk_.events[e].kind) || !nodeOf_.count(e))
          continue;
        auto delta = constantDelta(w, e, d, 1);
        int64_t path = D_[size_t(nodeOf_[e])][size_t(nodeOf_[w])];
        if (delta && path != kNoPath && *delta + path >= 0)
          guarded = true;
      }
      if (guarded)
        continue;
      z3::expr i = enc_.fresh("i");
      auto [j, n] = roundOf(barrierPattern_[w], i);
      bool ok = true;
      auto next = roundTerms(info, j, n + ctx_.int_val(d + 1), isArrival, ok);
      Query s = solver();
      s.add(fires(wait, i) && anyOf(ctx_, next));
      std::optional<z3::model> m;
      s.prefer(i);
      if (check(s, m, wait.loc, "aliasing") != z3::sat)
        continue;
      int64_t phase = ProtoEncoder::value(*m, n) + d;
      auto parity = at(wait.parity, wait, i);
      finding(
          ProtocolViolationKind::ParityAliasing, wait.loc,
          fmt::format("parity aliasing: at {} this wait on {}[{}] (parity {}) by {} waits for {}, "
                      "but nothing orders the arrivals of phase {} ({}) after it, so phase {} can "
                      "complete first and the wait then refers to a phase two behind (for {})",
                      iterationText(*m, wait, i), wait.barrier.array, ProtoEncoder::value(*m, j),
                      parity ? ProtoEncoder::value(*m, *parity) % 2 : -1,
                      sk_.roles[size_t(wait.role)].describe(), phaseText(phase), phase + 1,
                      termList(*m, next, "arrivals"), phase + 1, sizes(*m)));
    }
  }

  // A warp that waits on an mbarrier in a loop but neither feeds a barrier
  // there nor meets a feeding warp of its role in a collective is not held
  // back by anything: the feeding warps can lap it by two phases, after which
  // its parity wait refers to a phase two behind, and its last waits may never
  // complete. The proofs above model a role as one sequential process, so
  // they cannot see this; it is checked here per warp, structurally.
  void checkLaggingWaiters() {
    auto outermost = [&](int loop) {
      while (loop >= 0 && sk_.loops[size_t(loop)].parent >= 0)
        loop = sk_.loops[size_t(loop)].parent;
      return loop;
    };
    std::map<std::pair<int, int>, std::vector<const SyncEvent *>> groups; // (loop, role)
    for (const SyncEvent &e : sk_.events)
      if (e.loop >= 0 && e.role >= 0)
        groups[{outermost(e.loop), e.role}].push_back(&e);
    bool any = false;
    for (const auto &[key, events] : groups) {
      std::set<int64_t> waiting, feeding;
      const SyncEvent *firstWait = nullptr;
      for (const SyncEvent *e : events)
        for (int64_t t = 0; t < sk_.threads; ++t) {
          if (!e->threads.contains(t))
            continue;
          if (e->kind == SyncKind::MbarWait) {
            waiting.insert(t / 32);
            firstWait = firstWait ? firstWait : e;
          }
          if (isArrival(e->kind) || isTx(e->kind))
            feeding.insert(t / 32);
        }
      if (feeding.empty())
        continue;
      std::set<int64_t> lagging;
      for (int64_t warp : waiting) {
        if (feeding.count(warp))
          continue;
        bool tied = false; // meets a feeding warp in a collective
        for (const SyncEvent *e : events) {
          bool collective = e->scope != ExecScope::Thread || e->kind == SyncKind::CtaSync ||
                            e->kind == SyncKind::NamedSync || e->kind == SyncKind::WgmmaFence ||
                            e->kind == SyncKind::WgmmaMma || e->kind == SyncKind::WgmmaCommit ||
                            e->kind == SyncKind::WgmmaWait;
          if (!collective)
            continue;
          ThreadSet cover = coverOf(*e);
          if (!cover.contains(warp * 32))
            continue;
          for (int64_t f : feeding)
            tied = tied || cover.contains(f * 32);
        }
        if (!tied)
          lagging.insert(warp);
      }
      if (lagging.empty())
        continue;
      any = true;
      ThreadSet laggingThreads(sk_.threads), feedingThreads(sk_.threads);
      for (int64_t w : lagging)
        for (int64_t t = w * 32; t < std::min(sk_.threads, w * 32 + 32); ++t)
          laggingThreads.add(t);
      for (int64_t w : feeding)
        for (int64_t t = w * 32; t < std::min(sk_.threads, w * 32 + 32); ++t)
          feedingThreads.add(t);
      const SkeletonLoop &loop = sk_.loops[size_t(key.first)];
      finding(ProtocolViolationKind::ParityAliasing, firstWait->loc,
              fmt::format("parity aliasing: {} wait on {} in every iteration of loop {} but "
                          "feed no barrier and meet no feeding warp there; {} can run two "
                          "phases ahead of them, so their parity waits can refer to a phase two "
                          "behind and their last waits may never complete",
                          laggingThreads.describe(), firstWait->barrier.array, loop.var,
                          feedingThreads.describe()),
              {}, /*symbolic=*/false);
    }
    result("waiting warps kept in step with the warps that feed the barriers", !any,
           any ? "violated"
               : "proved for all sizes (structurally): every waiting warp feeds a barrier or "
                 "meets a feeding warp in each iteration");
  }

  // --- pipeline stages: read-after-write and write-after-read ---

  void checkStages() {
    struct Use {
      size_t event;
      const MemoryAccess *access;
      Pattern stage;
    };
    std::map<std::string, std::vector<Use>> writes, reads;
    // Only buffers shared between roles are pipeline stages; a buffer one
    // role uses alone is the race check's.
    std::map<std::string, std::set<int>> rolesOf;
    for (size_t e : nodes_)
      for (const MemoryAccess &a : sk_.events[e].accesses)
        rolesOf[a.buffer].insert(sk_.events[e].role);
    for (size_t node = 0; node < nodes_.size(); ++node) {
      size_t e = nodes_[node];
      const SyncEvent &ev = sk_.events[e];
      for (const MemoryAccess &a : ev.accesses) {
        if (a.scope == MemScope::Global || a.scope == MemScope::Reg || rolesOf[a.buffer].size() < 2)
          continue;
        Pattern p = patternOf(ev, a.stage, a.stages);
        if (!p.ok) {
          report_.notProved.push_back(
              {ev.loc, fmt::format("the stage of {} is neither (iteration + c) % {} "
                                   "nor constant; its reuse is not proved",
                                   a.buffer, a.stages)});
          continue;
        }
        (a.write ? writes : reads)[a.buffer].push_back({e, &a, p});
      }
    }
    // The static race check leaves the fill/read pairs of two roles inside
    // the same loops to this proof (StagePairs.h); one it cannot decide stays
    // open (and goes to the exhaustive check), never silently proved.
    std::set<std::string> open;
    auto leaveOpen = [&](const SyncEvent &a, const SyncEvent &b, const std::string &buffer,
                         const char *why) {
      if (!open.insert(buffer).second)
        return;
      report_.notProved.push_back(
          {a.loc, fmt::format("the order of {} by {} and {} by {} on {} is not proved: {}", a.what,
                              a.threads.describe(), b.what, b.threads.describe(), buffer, why)});
    };
    for (size_t e = 0; e < sk_.events.size(); ++e)
      for (size_t f = e + 1; f < sk_.events.size(); ++f) {
        if (nodeOf_.count(e) && nodeOf_.count(f))
          continue;
        const SyncEvent &a = sk_.events[e], &b = sk_.events[f];
        for (const MemoryAccess &x : a.accesses)
          for (const MemoryAccess &y : b.accesses)
            if (isStagePair(sk_, a, x, b, y))
              leaveOpen(a, b, x.buffer, "the trip count of their loop is not modelled");
      }
    bool any = false, checked = false;
    for (const auto &[buffer, ws] : writes) {
      auto rit = reads.find(buffer);
      if (rit == reads.end())
        continue;
      for (const Use &x : ws)
        for (const Use &r : rit->second) {
          const SyncEvent &xe = sk_.events[x.event], &re = sk_.events[r.event];
          if (!isStagePair(sk_, xe, *x.access, re, *r.access))
            continue;
          if (loopClass_[size_t(xe.loop)] != loopClass_[size_t(re.loop)]) {
            leaveOpen(xe, re, buffer, "their loops run different numbers of iterations");
            continue;
          }
          checked = true;
          any |= !readAfterWrite(buffer, x.event, x.stage, r.event, r.stage);
          any |= !writeAfterRead(buffer, x.event, x.stage, r.event, r.stage);
        }
    }
    if (checked)
      result("pipeline stages (read after fill, refill after release)", !any,
             any ? "violated" : "proved for all sizes");
  }

  bool readAfterWrite(const std::string &buffer, size_t x, const Pattern &px, size_t r,
                      const Pattern &pr) {
    const SyncEvent &xe = sk_.events[x], &re = sk_.events[r];
    z3::expr iR = enc_.fresh("i");
    auto [s, nR] = roundOf(pr, iR);
    z3::expr iX = iterOf(px, s, nR);
    z3::expr_vector safe(ctx_);
    size_t R = size_t(nodeOf_[r]);
    std::string barrierName;
    if (xe.kind == SyncKind::TxDelivery && barrierPattern_.count(x) && barrierPattern_[x].ok) {
      barrierName = xe.barrier.array;
      auto [e, rho] = roundOf(barrierPattern_[x], iX);
      const BarrierInfo &info = barriers_.at(xe.barrier.array);
      for (size_t w : info.events) {
        if (!waitShift_.count(w) || !nodeOf_.count(w))
          continue;
        int64_t path = D_[R][size_t(nodeOf_[w])];
        if (path == kNoPath)
          continue;
        const Pattern &pw = barrierPattern_[w];
        z3::expr iW = iterOf(pw, e, rho - ctx_.int_val(waitShift_[w]));
        safe.push_back(touches(pw, e) && fires(sk_.events[w], iW) && iW <= iR + ctx_.int_val(path));
      }
    } else {
      int64_t path = D_[R][size_t(nodeOf_[x])];
      if (path != kNoPath)
        safe.push_back(iX <= iR + ctx_.int_val(path));
    }
    Query sv = solver();
    sv.add(fires(re, iR) && touches(px, s) && fires(xe, iX));
    if (!safe.empty())
      sv.add(!z3::mk_or(safe));
    std::optional<z3::model> m;
    sv.prefer(iR);
    if (check(sv, m, re.loc, "read after write") != z3::sat)
      return true;
    std::string how =
        barrierName.empty()
            ? "nothing orders this read after that write"
            : fmt::format(
                  "the copy completes a phase of {} that no wait of {} covers before this read",
                  barrierName, sk_.roles[size_t(re.role)].describe());
    finding(ProtocolViolationKind::ReadBeforeFilled, re.loc,
            fmt::format(
                "read before filled: {} by {} reads {} stage {} at {}, before {} of the same round "
                "(at {}) has filled it: {} (for {})",
                re.what, re.threads.describe(), buffer, ProtoEncoder::value(*m, s),
                iterationText(*m, re, iR), xe.what, iterationText(*m, xe, iX), how, sizes(*m)),
            {{xe.loc, fmt::format("{} fills {} here", xe.what, buffer)}});
    return false;
  }

  bool writeAfterRead(const std::string &buffer, size_t x, const Pattern &px, size_t r,
                      const Pattern &pr) {
    const SyncEvent &xe = sk_.events[x], &re = sk_.events[r];
    z3::expr iX = enc_.fresh("i");
    auto [s, nX] = roundOf(px, iX);
    z3::expr iR = iterOf(pr, s, nX - 1);
    Query sv = solver();
    sv.add(fires(xe, iX) && nX >= 1 && touches(pr, s) && fires(re, iR));
    int64_t path = everyPath(size_t(nodeOf_[x]), size_t(nodeOf_[r]));
    if (path != kNoPath)
      sv.add(!(iR <= iX + ctx_.int_val(path)));
    std::optional<z3::model> m;
    sv.prefer(iX);
    if (check(sv, m, xe.loc, "write after read") != z3::sat)
      return true;
    // Ordered after the read of some threads (a release by fewer threads
    // than read), not of all of them.
    int64_t some = D_[size_t(nodeOf_[x])][size_t(nodeOf_[r])];
    bool partly =
        some != kNoPath && ProtoEncoder::value(*m, iR) <= ProtoEncoder::value(*m, iX) + some;
    finding(ProtocolViolationKind::OverwriteWhileRead, xe.loc,
            fmt::format(
                "overwrite while read: {} by {} refills {} stage {} at {} while {} by {} may still "
                "read its previous contents (from {}): {} (for {})",
                xe.what, xe.threads.describe(), buffer, ProtoEncoder::value(*m, s),
                iterationText(*m, xe, iX), re.what, re.threads.describe(),
                iterationText(*m, re, iR),
                partly ? "the refill follows the release of the threads that arrive, but nothing "
                         "orders the other reading threads' reads before that release"
                       : "nothing orders the refill after that read",
                sizes(*m)),
            {{re.loc, fmt::format("{} reads {} here", re.what, buffer)}});
    return false;
  }

  // --- structural checks ---

  // mbarrier inits per element and named barriers as generations
  // (StructuralChecks.h); CTA barriers reached by every thread.
  void checkInit() {
    mergeStructural([&](StructuralResult &r) { checkMbarrierInits(sk_, r); });
  }

  void checkCtaBarriers() {
    for (const SyncEvent &e : sk_.events)
      if (e.kind == SyncKind::CtaSync && e.threads.count() != sk_.threads)
        finding(ProtocolViolationKind::Divergence, e.loc,
                fmt::format(
                    "divergent barrier: {} is reached only by {} ({} of {} threads); the others "
                    "never arrive and the CTA hangs",
                    e.what, e.threads.describe(), e.threads.count(), sk_.threads),
                {}, false);
    mergeStructural([&](StructuralResult &r) { checkNamedBarriers(sk_, r); }, &namedOpen_);
  }

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
  std::vector<const SyncEvent *> roleSequence(int role) {
    std::vector<const SyncEvent *> seq;
    for (const SyncEvent &e : sk_.events)
      if (e.role == role)
        seq.push_back(&e);
    return seq;
  }

  static bool touchesAny(const SyncEvent &e, const std::set<std::string> &registers) {
    return std::any_of(e.accesses.begin(), e.accesses.end(), [&](const MemoryAccess &a) {
      return a.scope == MemScope::Reg && registers.count(a.buffer);
    });
  }

  void checkWgmma() {
    for (size_t r = 0; r < sk_.roles.size(); ++r) {
      auto seq = roleSequence(int(r));
      bool fenced = false;
      int uncommitted = 0;
      const SyncEvent *lastMma = nullptr, *lastCommit = nullptr;
      bool pending = false;
      // Accumulators written by wgmma groups that may still run: the open
      // group, then committed groups oldest first (wait_group(n) keeps n).
      std::set<std::string> open;
      std::vector<std::set<std::string>> inFlight;
      // State at the end of the role: after the straight pass (the second
      // pass only replays loop bodies for their back edges).
      int uncommittedEnd = 0;
      bool pendingEnd = false;
      for (int pass = 0; pass < 2; ++pass,
               uncommittedEnd = pass == 1 ? uncommitted : uncommittedEnd,
               pendingEnd = pass == 1 ? pending : pendingEnd)
        for (const SyncEvent *e : seq) {
          if (pass == 1 && e->loop < 0)
            continue;
          if (e->kind != SyncKind::WgmmaMma) {
            std::set<std::string> busy = open;
            for (const auto &g : inFlight)
              busy.insert(g.begin(), g.end());
            if (touchesAny(*e, busy))
              finding(ProtocolViolationKind::WgmmaDiscipline, e->loc,
                      fmt::format("wgmma result read before wait_group: {} by {} touches the "
                                  "accumulator of a wgmma.mma_async that may still run (its group "
                                  "is not retired by a wgmma.wait_group before this)",
                                  e->what, e->threads.describe()),
                      {{lastMma ? lastMma->loc : e->loc, "the wgmma.mma_async writing it"}}, false);
          }
          switch (e->kind) {
          case SyncKind::WgmmaFence:
            fenced = true;
            break;
          case SyncKind::WgmmaMma:
            if (!fenced)
              finding(
                  ProtocolViolationKind::WgmmaDiscipline, e->loc,
                  fmt::format("wgmma.mma_async by {} without a wgmma.fence before it: the "
                              "accumulator registers may still be written by other instructions",
                              e->threads.describe()),
                  {}, false);
            ++uncommitted;
            lastMma = e;
            for (const MemoryAccess &a : e->accesses)
              if (a.write && a.scope == MemScope::Reg)
                open.insert(a.buffer);
            break;
          case SyncKind::WgmmaCommit:
            if (uncommitted)
              pending = true;
            uncommitted = 0;
            lastCommit = e;
            inFlight.push_back(std::move(open));
            open.clear();
            break;
          case SyncKind::WgmmaWait: {
            int64_t keep = std::max<int64_t>(constantValue(e->amount).value_or(1), 0);
            while (int64_t(inFlight.size()) > keep)
              inFlight.erase(inFlight.begin());
            if (keep == 0)
              pending = false;
            fenced = false; // accumulators touched again need a new fence
            break;
          }
          default:
            break;
          }
        }
      if (uncommittedEnd && lastMma)
        finding(ProtocolViolationKind::WgmmaDiscipline, lastMma->loc,
                "wgmma.mma_async is never committed (wgmma.commit_group) before its warpgroup ends",
                {}, false);
      else if (pendingEnd && lastCommit)
        finding(ProtocolViolationKind::WgmmaDiscipline, lastCommit->loc,
                "committed wgmma groups are never waited for (wgmma.wait_group(0)) before the "
                "results are "
                "used at the end of the role",
                {}, false);
    }
  }

  // tcgen05.mma results in tensor memory are read only after a wait on a
  // barrier that a tcgen05.commit after the MMA arrives on.
  void checkTcgen05Results() {
    for (const SyncEvent &ld : sk_.events) {
      if (ld.kind != SyncKind::Tcgen05Ld)
        continue;
      auto source = std::find_if(ld.accesses.begin(), ld.accesses.end(),
                                 [](const MemoryAccess &a) { return a.scope == MemScope::Tmem; });
      if (source == ld.accesses.end())
        continue;
      const std::string &buffer = source->buffer;
      const SyncEvent *mma = nullptr;
      std::set<std::string> commitBarriers;
      for (const SyncEvent &e : sk_.events) {
        bool writes = std::any_of(e.accesses.begin(), e.accesses.end(), [&](const MemoryAccess &a) {
          return a.write && a.asyncProxy && a.buffer == buffer;
        });
        if (writes && e.order < ld.order)
          mma = &e;
        if (mma && e.kind == SyncKind::Tcgen05Commit && e.order > mma->order && e.role == mma->role)
          commitBarriers.insert(e.barrier.array);
      }
      if (!mma)
        continue;
      bool waited = false;
      for (const SyncEvent &w : sk_.events)
        if (w.kind == SyncKind::MbarWait && w.order > mma->order && w.order < ld.order &&
            commitBarriers.count(w.barrier.array) && ld.threads.subsetOf(coverOf(w)))
          waited = true;
      if (!waited)
        finding(
            ProtocolViolationKind::Tcgen05Discipline, ld.loc,
            fmt::format("tcgen05.ld by {} reads {} that tcgen05.mma writes, with no wait on the "
                        "mbarrier of a tcgen05.commit after the MMA ({}) before it: the results "
                        "may not have landed",
                        ld.threads.describe(), buffer,
                        commitBarriers.empty() ? std::string("there is no such commit")
                                               : "commits go to " + *commitBarriers.begin()),
            {{mma->loc, "the MMA writing it"}}, false);
    }
  }

  void checkTcgen05() {
    checkTcgen05Results();
    // The alloc / dealloc / relinquish protocol (TmemProtocol.h); the
    // column count of an alloc is an operand range (verifier/Resources.h).
    for (ProtocolFinding &f : checkTmemLifetime(sk_))
      finding(f.kind, f.loc, std::move(f.message), std::move(f.notes), false);
    for (size_t r = 0; r < sk_.roles.size(); ++r) {
      auto seq = roleSequence(int(r));
      const SyncEvent *pendingLd = nullptr;
      std::set<std::string> loaded; // registers of the pending tcgen05.ld
      for (const SyncEvent *e : seq) {
        if (e->kind == SyncKind::Tcgen05Ld) {
          pendingLd = e;
          for (const MemoryAccess &a : e->accesses)
            if (a.scope == MemScope::Reg)
              loaded.insert(a.buffer);
          continue;
        }
        if (e->kind == SyncKind::Tcgen05WaitLd) {
          pendingLd = nullptr;
          loaded.clear();
          continue;
        }
        // Without a known destination, any later statement of the loading threads.
        bool uses = loaded.empty() || touchesAny(*e, loaded);
        if (pendingLd && uses && e->threads.subsetOf(coverOf(*pendingLd))) {
          finding(ProtocolViolationKind::Tcgen05Discipline, e->loc,
                  fmt::format(
                      "{} runs after tcgen05.ld without tcgen05.wait_ld: the loaded registers are "
                      "not ready",
                      e->what),
                  {{pendingLd->loc, "tcgen05.ld here"}}, false);
          pendingLd = nullptr;
          loaded.clear();
        }
      }
    }
  }

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
  };
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
  std::vector<std::vector<int>> cycleNext_;
};

} // namespace

BarrierReport proveBarrierProtocols(const BarrierSkeleton &skeleton,
                                    const BarrierProofOptions &options) {
  return Prover(skeleton, options).run();
}

BarrierReport proveBarrierProtocols(const Kernel &kernel, const BarrierProofOptions &options) {
  return proveBarrierProtocols(extractBarrierSkeleton(kernel), options);
}

unsigned reportBarrierProtocols(const BarrierReport &report, Diagnostics &diag) {
  for (const ProtocolFinding &f : report.findings) {
    // Every error starts with its kind, so tests and users can tell classes apart.
    std::string_view kind = protocolViolationName(f.kind);
    std::string text = llvm::StringRef(f.message).startswith(kind)
                           ? f.message
                           : fmt::format("{}: {}", kind, f.message);
    diag.error(f.loc, text + (f.symbolic     ? " [Z3 witness]"
                              : f.exhaustive ? " [exhaustive check]"
                                             : " [structural]"));
    for (const auto &[loc, text] : f.notes)
      diag.note(loc, text);
  }
  for (const auto &[loc, text] : report.notProved)
    diag.warning(loc, "not proved: " + text);
  for (const auto &[loc, text] : report.checkedExhaustively)
    diag.warning(loc, fmt::format("{}: {}", report.method, text));
  return unsigned(report.findings.size());
}

unsigned verifyBarrierProtocols(const Kernel &kernel, Diagnostics &diag,
                                const BarrierProofOptions &options, std::string *method) {
  BarrierReport report = proveBarrierProtocols(kernel, options);
  if (method)
    *method = report.method;
  return reportBarrierProtocols(report, diag);
}

unsigned verifyBarrierProtocols(const Kernel &kernel, Diagnostics &diag) {
  return verifyBarrierProtocols(kernel, diag, {}, nullptr);
}

} // namespace tilescope
