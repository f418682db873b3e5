// The barrier proofs' encoding (BarrierProver.h): loops and their nests,
// solver queries, index patterns and rounds, witnesses.
#include "verifier/BarrierProver.h"

#include "proof/IndexPatterns.h"

#include "ir/Affine.h"
#include "ir/ConcreteEval.h"
#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "ir/WhereFacts.h"
#include "verifier/AsyncDrain.h"
#include "verifier/BarrierFallback.h"
#include "verifier/TmemProtocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

namespace tilescope::detail {

std::optional<std::map<std::string, z3::expr>> BarrierProver::loopValues(const SyncEvent &ev,
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

std::optional<z3::expr> BarrierProver::at(const Expr &e, const SyncEvent &ev, const z3::expr &i) {
  auto bound = loopValues(ev, i);
  if (!bound)
    return std::nullopt;
  // In a cluster, clusterCtaIdx is the rank of the CTA a proof is about
  // (receiver()), or of the sender a count term is for (rank_).
  if (clusterCtas_) {
    z3::expr rank = rank_ ? *rank_ : receiver();
    z3::expr block = rank_ ? *block_ : receiverBlock();
    return enc_.encode(e, *bound,
                       {{clusterCtaIdxOf(clusterAxis_), rank}, {blockIdxOf(clusterAxis_), block}});
  }
  return enc_.encode(e, *bound);
}

bool BarrierProver::modelled(const SyncEvent &ev) const {
  return ev.loop < 0 || loopTrip_[size_t(ev.loop)].has_value();
}

z3::expr BarrierProver::fires(const SyncEvent &ev, const z3::expr &i) {
  if (auto s = shifted_.find(&ev); s != shifted_.end()) {
    if (s->second.shift < 0) {
      // A prefetch: at its iterations as written, and copy k of the
      // prologue at virtual iteration k - d as that copy is written.
      z3::expr_vector any(ctx_);
      any.push_back(firesAsWritten(ev, i));
      const auto &copies = s->second.prologue;
      for (size_t k = 0; k < copies.size(); ++k)
        any.push_back(i == ctx_.int_val(int64_t(k) + s->second.shift) &&
                      guardsHold(sk_.events[copies[k]], i));
      return z3::mk_or(any);
    }
    // Its guard is exactly `i >= shift`; the release after the loop is
    // its iteration `trip` (the release of iteration trip - 1).
    z3::expr trip = *loopTrip_[size_t(ev.loop)];
    z3::expr shift = ctx_.int_val(s->second.shift);
    return i >= shift && i < trip + (s->second.afterLoop ? shift : ctx_.int_val(0));
  }
  return firesAsWritten(ev, i);
}

z3::expr BarrierProver::firesAsWritten(const SyncEvent &ev, const z3::expr &i) {
  z3::expr_vector all(ctx_);
  if (ev.loop < 0) {
    auto it = oneShotRound_.find(&ev);
    all.push_back(i == ctx_.int_val(it == oneShotRound_.end() ? 0 : it->second));
  } else {
    all.push_back(i >= 0);
    all.push_back(i < *loopTrip_[size_t(ev.loop)]);
  }
  all.push_back(guardsHold(ev, i));
  return z3::mk_and(all);
}

z3::expr BarrierProver::guardsHold(const SyncEvent &ev, const z3::expr &i, bool *ok) {
  z3::expr_vector all(ctx_);
  for (const Expr &g : ev.guards) {
    auto e = at(g, ev, i);
    if (e && e->is_bool())
      all.push_back(*e);
    else if (ok)
      *ok = false;
  }
  return z3::mk_and(all);
}

void BarrierProver::numberOneShotRounds() {
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

void BarrierProver::prepareLoops() {
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
        z3::expr next = stride * levels[m].trip;
        // Copied, not moved: z3++ 4.8.12's move assignment leaks the old term
        // (DivisionAbstraction.cpp).
        stride = next;
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

BarrierProver::Query BarrierProver::solver() {
  if (!base_) {
    base_.emplace(incrementalSolver(ctx_));
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

void BarrierProver::chooseSampleSizes() {
  // A symbol the where clause defines (`KB == K / 128`) takes its value from
  // the others: without it no round value fits such a clause, and an
  // existence query went to the exact solver, where a trip-count comparison
  // (provedEqual) took 9 s of nonlinear search that the deadline could not
  // stop (docs/robustness.md).
  std::map<std::string, Expr> defined = whereEqualities(sk_.constraints);
  for (int64_t v : {128, 256, 64, 512, 1024, 32, 16, 8, 4, 2, 1}) {
    LeafValue free = [&](const Expr &e) -> std::optional<int64_t> {
      if (e->kind == ExprKind::Var && enc_.symbols().count(as<Var>(e).name) &&
          !defined.count(as<Var>(e).name))
        return v;
      return std::nullopt;
    };
    LeafValue leaf = [&](const Expr &e) -> std::optional<int64_t> {
      if (e->kind == ExprKind::Var)
        if (auto it = defined.find(as<Var>(e).name); it != defined.end())
          return evalConcrete(it->second, free);
      return free(e);
    };
    if (!std::all_of(sk_.constraints.begin(), sk_.constraints.end(),
                     [&](const Expr &c) { return evalConcrete(c, leaf).value_or(0) != 0; }))
      continue;
    std::vector<int64_t> values;
    for (const std::string &name : sk_.symbols)
      if (auto x = leaf(Var::make(name)))
        values.push_back(*x);
    if (values.size() != sk_.symbols.size())
      continue;
    for (size_t i = 0; i < values.size(); ++i)
      sample_.push_back(enc_.symbols().at(sk_.symbols[i]) == ctx_.int_val(values[i]));
    return;
  }
}

bool BarrierProver::provedEqual(const z3::expr &a, const z3::expr &b) {
  Query s = solver();
  s.add(a != b);
  return s.check() == z3::unsat;
}

z3::check_result BarrierProver::check(Query &s, std::optional<z3::model> &model, llvm::SMLoc loc,
                                      const std::string &what) {
  for (const auto &[name, v] : enc_.symbols())
    s.prefer(v);
  z3::check_result r = decide(s, loc, what);
  if (r == z3::sat)
    model = s.get_model();
  return r;
}

z3::check_result BarrierProver::decide(Query &s, llvm::SMLoc loc, const std::string &what) {
  z3::check_result r = s.check();
  if (r == z3::unknown)
    report_.notProved.push_back(
        {loc, fmt::format("{}: Z3 gave up ({})", what, s.reason_unknown())});
  return r;
}

Pattern BarrierProver::patternOf(const SyncEvent &ev, const Expr &index, int64_t period) {
  for (const KnownPattern &k : patterns_)
    if (k.loop == ev.loop && k.period == period && equal(k.index, index))
      return k.pattern;
  Pattern p = derivePattern(ev, index, period);
  patterns_.push_back({ev.loop, index, period, p});
  return p;
}

Pattern BarrierProver::derivePattern(const SyncEvent &ev, const Expr &index, int64_t period) {
  if (!modelled(ev)) {
    Pattern p;
    p.period = std::max<int64_t>(period, 1);
    return p;
  }
  // The one derivation (proof/IndexPatterns.h), asked through the prover's
  // encoding (at(): the proof's thread and cluster context) and its shared
  // solver.
  struct ProverQuery final : IndexQuery {
    explicit ProverQuery(Query q) : query(std::move(q)) {}
    void add(const z3::expr &c) override { query.add(c); }
    z3::check_result check() override { return query.check(); }
    int64_t value(const z3::expr &e) override { return ProtoEncoder::value(query.get_model(), e); }
    Query query;
  };
  struct ProverQueries final : IndexQueries {
    ProverQueries(BarrierProver &p, const SyncEvent &e, const Expr &x)
        : prover(p), ev(e), index(x) {}
    z3::context &ctx() override { return prover.ctx_; }
    z3::expr fresh(const char *name) override { return prover.enc_.fresh(name); }
    std::optional<z3::expr> indexAt(const z3::expr &i) override { return prover.at(index, ev, i); }
    std::optional<z3::expr> trip() override { return prover.loopTrip_[size_t(ev.loop)]; }
    std::unique_ptr<IndexQuery> query() override {
      return std::make_unique<ProverQuery>(prover.solver());
    }
    BarrierProver &prover;
    const SyncEvent &ev;
    const Expr &index;
  };
  ProverQueries queries(*this, ev, index);
  // Derived for the symbolic receiver, that is for every CTA, whatever rank
  // the caller encodes for (RankScope): patterns are cached and every rank
  // of the per-rank graph reads them.
  struct Receiver {
    BarrierProver &p;
    std::optional<z3::expr> rank, block;
    explicit Receiver(BarrierProver &prover) : p(prover), rank(p.rank_), block(p.block_) {
      p.rank_.reset();
      p.block_.reset();
    }
    ~Receiver() {
      p.rank_ = rank;
      p.block_ = block;
    }
  } receiverScope(*this);
  return elementPattern(queries, sk_, ev, index, period);
}

z3::expr BarrierProver::iterOf(const Pattern &p, const z3::expr &j, const z3::expr &n) {
  if (p.constant)
    return n;
  z3::expr S = ctx_.int_val(p.period);
  return z3::mod(j - ctx_.int_val(p.c), S) + n * S + ctx_.int_val(p.shift);
}

z3::expr BarrierProver::touches(const Pattern &p, const z3::expr &j) {
  if (p.constant)
    return j == ctx_.int_val(p.c);
  return j >= 0 && j < ctx_.int_val(p.period);
}

std::pair<z3::expr, z3::expr> BarrierProver::roundOf(const Pattern &p, const z3::expr &i) {
  if (p.constant)
    return {ctx_.int_val(p.c), i};
  z3::expr S = ctx_.int_val(p.period);
  z3::expr logical = i - ctx_.int_val(p.shift);
  z3::expr j = z3::mod(logical + ctx_.int_val(p.c), S);
  return {j, (logical - z3::mod(j - ctx_.int_val(p.c), S)) / S};
}

std::string BarrierProver::iterationText(const z3::model &m, const SyncEvent &ev,
                                         const z3::expr &i) {
  if (ev.loop < 0)
    return "its one execution (outside loops)";
  // The model's value of i, exact (a witness past 64 bits prints whole).
  z3::expr iv = m.eval(i, true);
  if (auto s = shifted_.find(&ev); s != shifted_.end()) {
    // A release of the previous stage: say which iteration it releases.
    const std::string &var = sk_.loops[size_t(ev.loop)].var;
    std::string k = ProtoEncoder::text(m, i),
                other = ProtoEncoder::text(m, i - ctx_.int_val(s->second.shift));
    if (s->second.shift < 0) { // a prefetch: say which iteration it fills
      if (m.eval(i < 0, true).is_true())
        return fmt::format("before the loop, the prefetch of {} = {}", var, other);
      return fmt::format("{} = {}, the prefetch of {} = {}", var, k, var, other);
    }
    if (m.eval(i >= *loopTrip_[size_t(ev.loop)], true).is_true())
      return fmt::format("after the loop, the release of {} = {}", var, other);
    return fmt::format("{} = {}, the release of {} = {}", var, k, var, other);
  }
  auto bound = loopValues(ev, iv);
  std::string out;
  if (bound)
    for (const NestLevel &lv : nest_[size_t(ev.loop)])
      out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", lv.var,
                         ProtoEncoder::text(m, bound->at(lv.var)));
  return out.empty() ? fmt::format("iteration {}", ProtoEncoder::text(m, i)) : out;
}

std::string BarrierProver::sizes(const z3::model &m) {
  std::string text = enc_.describeSymbols(m);
  return text.empty() ? std::string("every size") : text;
}

std::string BarrierProver::phaseText(int64_t phase) {
  return phase < 0 ? std::string("the phase before the first (it passes at once)")
                   : fmt::format("phase {}", phase);
}

void BarrierProver::finding(ProtocolViolationKind kind, llvm::SMLoc loc, std::string message,
                            std::vector<std::pair<llvm::SMLoc, std::string>> notes, bool symbolic) {
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
        {loc,
         fmt::format("{} [not confirmed: a query it depends on was left undecided]", message)});
    return;
  }
  report_.findings.push_back({kind, loc, std::move(message), std::move(notes), symbolic});
}

void BarrierProver::result(std::string property, bool proved, std::string status) {
  report_.results.push_back({std::move(property), std::move(status), proved});
}

} // namespace tilescope::detail
