// The barrier proofs per phase (BarrierProver.h): arrivals, transaction
// bytes and wait parities of each mbarrier, and their terms in a cluster.
#include "verifier/BarrierProver.h"

#include "ir/Affine.h"
#include "ir/ConcreteEval.h"
#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "sync/MbarrierZ3.h"
#include "verifier/AsyncDrain.h"
#include "verifier/BarrierFallback.h"
#include "verifier/TmemProtocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

namespace tilescope::detail {

z3::expr BarrierProver::amountOf(const SyncEvent &ev, const z3::expr &i, bool &ok) {
  auto one = [&](const SyncEvent &x) {
    auto a = x.amount ? at(x.amount, x, i) : std::optional<z3::expr>(ctx_.int_val(1));
    if (!a || !a->is_int()) {
      ok = false;
      return ctx_.int_val(0);
    }
    return *a * ctx_.int_val(x.issuers());
  };
  z3::expr amount = one(ev);
  // A prefetch's prologue copy k (virtual iteration k - d) brings its own.
  if (auto s = shifted_.find(&ev); s != shifted_.end())
    for (size_t k = 0; k < s->second.prologue.size(); ++k)
      amount = z3::ite(i == ctx_.int_val(int64_t(k) + s->second.shift),
                       one(sk_.events[s->second.prologue[k]]), amount);
  return amount;
}

void BarrierProver::checkIndexRange(const BarrierArray &arr, const SyncEvent &ev) {
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
                      ev.what, ev.threads.describe(), arr.name, ProtoEncoder::text(*m, *idx),
                      iterationText(*m, ev, i), arr.name, arr.size, arr.size == 1 ? "" : "s",
                      sizes(*m)),
          {{arr.loc, "declared here"}});
}

void BarrierProver::analyseBarrier(const BarrierArray &arr) {
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
  // Prefetches (matchPrefetch): their prologue copies are absorbed too.
  bool prefetch = false;
  for (size_t e : info.events)
    if (!absorbed.count(e) && !shifted_.count(&sk_.events[e]))
      if (auto copies = matchPrefetch(arr, e, info.events, absorbed)) {
        prefetch = true;
        absorbed.insert(copies->begin(), copies->end());
      }
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
    if (ev.kind != SyncKind::MbarInit && ev.kind != SyncKind::MbarInval && guardedByIteration(ev) &&
        !txOfUnguardedRound(info, ev)) {
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
          {ev.loc, fmt::format("{}: it reaches {} in other CTAs of a cluster whose extent is not a "
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
  if (prefetch && info.symbolic) {
    // A one-shot arrival besides the prologues would be numbered from round
    // 0 of its element, not after the prefetches' rounds.
    for (size_t e : info.events) {
      const SyncEvent &ev = sk_.events[e];
      if (ev.loop < 0 && (completesPhase(ev.kind) || ev.kind == SyncKind::MbarExpectTx)) {
        info.symbolic = false;
        report_.notProved.push_back(
            {ev.loc, fmt::format("{}: an arrival on {} outside loops that is not the prologue of "
                                 "a prefetch; the rounds of {} are not proved",
                                 ev.what, arr.name, arr.name)});
        break;
      }
    }
    if (info.symbolic && !roundsWithoutGaps(info)) {
      info.symbolic = false;
      report_.notProved.push_back(
          {arr.loc, fmt::format("the prefetches' guards may leave a round of {} without "
                                "arrivals between two with arrivals (later phases would be "
                                "numbered differently); its phases are not proved",
                                arr.name)});
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

std::optional<size_t> BarrierProver::matchShiftedRelease(const BarrierArray &arr, size_t e,
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

std::optional<std::vector<size_t>> BarrierProver::matchPrefetch(const BarrierArray &arr, size_t e,
                                                                const std::vector<size_t> &events,
                                                                const std::set<size_t> &taken) {
  const SyncEvent &ev = sk_.events[e];
  bool kind = ev.kind == SyncKind::MbarArrive || ev.kind == SyncKind::MbarExpectTx ||
              ev.kind == SyncKind::TxDelivery || ev.kind == SyncKind::MbarCompleteTx;
  if (!kind || ev.loop < 0 || ev.crossCta() || !modelled(ev) || arr.size < 2 ||
      !guardedByIteration(ev))
    return std::nullopt;
  const SkeletonLoop &loop = sk_.loops[size_t(ev.loop)];
  if (loop.parent >= 0 || constantValue(loop.begin) != 0 || constantValue(loop.step) != 1)
    return std::nullopt;
  if (ev.amount && namesUsed(ev.amount).count(loop.var))
    return std::nullopt;
  bool encoded = true;
  guardsHold(ev, enc_.fresh("i"), &encoded);
  Pattern p = patternOf(ev, ev.barrier.index, arr.size);
  if (!encoded || !p.ok || p.constant || p.period != arr.size || p.shift != 0)
    return std::nullopt;
  int firstInLoop = INT_MAX;
  for (const SyncEvent &x : sk_.events)
    if (x.loop == ev.loop)
      firstInLoop = std::min(firstInLoop, x.order);
  std::vector<size_t> candidates;
  for (size_t a : events) {
    const SyncEvent &x = sk_.events[a];
    if (x.loop >= 0 || taken.count(a) || x.kind != ev.kind || x.order >= firstInLoop ||
        x.role != ev.role || !(x.threads == ev.threads) || x.scope != ev.scope || x.crossCta() ||
        !constantValue(x.barrier.index))
      continue;
    // Amounts may differ: each copy brings its own (amountOf).
    bool guardsEncoded = true;
    guardsHold(x, ctx_.int_val(0), &guardsEncoded);
    if (guardsEncoded && !(x.amount && namesUsed(x.amount).count(loop.var)))
      candidates.push_back(a);
  }
  std::sort(candidates.begin(), candidates.end(),
            [&](size_t a, size_t b) { return sk_.events[a].order < sk_.events[b].order; });
  const int64_t S = arr.size;
  for (int64_t d = std::min<int64_t>(S - 1, int64_t(candidates.size())); d >= 1; --d) {
    int64_t c = ((p.c - d) % S + S) % S;
    std::vector<size_t> copies;
    int last = INT_MIN;
    for (int64_t k = 0; k < d && int64_t(copies.size()) == k; ++k)
      for (size_t a : candidates) {
        const SyncEvent &x = sk_.events[a];
        if (x.order > last && constantValue(x.barrier.index) == (k + c) % S) {
          copies.push_back(a);
          last = x.order;
          break;
        }
      }
    if (int64_t(copies.size()) != d)
      continue;
    Shifted shifted;
    shifted.shift = -d;
    shifted.pattern = p;
    shifted.pattern.c = c;
    shifted.pattern.shift = -d;
    shifted.prologue = copies;
    shifted_[&ev] = shifted;
    return copies;
  }
  return std::nullopt;
}

llvm::SMLoc BarrierProver::termLoc(const z3::model &m, const Term &t) {
  const SyncEvent &ev = sk_.events[t.event];
  if (auto s = shifted_.find(&ev); s != shifted_.end() && s->second.shift < 0) {
    int64_t k = ProtoEncoder::value(m, t.iteration) - s->second.shift;
    if (k >= 0 && k < int64_t(s->second.prologue.size()))
      return sk_.events[s->second.prologue[size_t(k)]].loc;
  }
  return ev.loc;
}

bool BarrierProver::roundsWithoutGaps(const BarrierInfo &info) {
  z3::expr j = enc_.fresh("j"), n = enc_.fresh("n");
  bool ok = true;
  auto now = roundTerms(info, j, n, isArrival, ok);
  auto before = roundTerms(info, j, n - 1, isArrival, ok);
  if (!ok)
    return false;
  Query s = solver();
  s.add(j >= 0 && j < ctx_.int_val(info.arr->size) && n >= 1);
  s.add(anyOf(ctx_, now) && !anyOf(ctx_, before));
  return decide(s, info.arr->loc, info.arr->name + " rounds without gaps") == z3::unsat;
}

bool BarrierProver::firstIterationGuard(const Expr &g, const std::string &var) {
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

bool BarrierProver::releasesLastIteration(const SyncEvent &after, const SyncEvent &release,
                                          const Pattern &p) {
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

bool BarrierProver::txOfUnguardedRound(const BarrierInfo &info, const SyncEvent &ev) const {
  // A copy under a guard over the loop variable (`if t < w0 { copy X }
  // else { copy Y }`) opens no round: the round is the one its iteration's
  // expect_tx opens, when that arrival runs in every iteration, in the same
  // loop, on the same element. Whether the copy runs then only changes the
  // bytes the round receives, which the rounds' terms weigh by `fires`.
  if (ev.kind != SyncKind::TxDelivery || ev.crossCta())
    return false;
  for (size_t e : info.events) {
    const SyncEvent &x = sk_.events[e];
    if (x.kind == SyncKind::MbarExpectTx && x.loop == ev.loop && !x.crossCta() &&
        !guardedByIteration(x) && equal(x.barrier.index, ev.barrier.index))
      return true;
  }
  return false;
}

bool BarrierProver::guardedByIteration(const SyncEvent &ev) const {
  for (int l = ev.loop; l >= 0; l = sk_.loops[size_t(l)].parent)
    for (const Expr &g : ev.guards)
      if (namesUsed(g).count(sk_.loops[size_t(l)].var))
        return true;
  return false;
}

std::vector<BarrierProver::Term> BarrierProver::roundTerms(const BarrierInfo &info,
                                                           const z3::expr &j, const z3::expr &n,
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

BuiltinKind BarrierProver::clusterCtaIdxOf(int axis) {
  const BuiltinKind k[] = {BuiltinKind::clusterCtaIdx_x, BuiltinKind::clusterCtaIdx_y,
                           BuiltinKind::clusterCtaIdx_z};
  return k[axis];
}

BuiltinKind BarrierProver::blockIdxOf(int axis) {
  const BuiltinKind k[] = {BuiltinKind::blockIdx_x, BuiltinKind::blockIdx_y,
                           BuiltinKind::blockIdx_z};
  return k[axis];
}

z3::expr BarrierProver::receiverBlock() {
  if (!receiverBlock_) {
    receiverBlock_ = *enc_.encode(Builtin::make(blockIdxOf(clusterAxis_)), {});
    // Inside the grid: a sender's blockIdx past its end is no CTA.
    if (size_t(clusterAxis_) < sk_.grid.size())
      if (auto g = enc_.encode(sk_.grid[size_t(clusterAxis_)], {}); g && g->is_int())
        gridBounds_.push_back(*receiverBlock_ < *g);
  }
  return *receiverBlock_;
}

void BarrierProver::encodeAsRank(const z3::expr &rank) {
  rank_ = rank;
  block_ = receiverBlock() - receiver() + rank;
}

std::optional<z3::expr> BarrierProver::reaches(const SyncEvent &ev, const z3::expr &i,
                                               std::optional<z3::expr> target) {
  z3::expr to = target ? *target : receiver();
  if (ev.remoteCta) {
    auto r = at(ev.remoteCta, ev, i);
    if (!r || !r->is_int())
      return std::nullopt;
    return *r == to;
  }
  auto mask = at(ev.multicast, ev, i);
  if (!mask || !mask->is_int())
    return std::nullopt;
  z3::expr_vector bits(ctx_);
  for (int64_t rho = 0; rho < *clusterCtas_; ++rho)
    bits.push_back(to == ctx_.int_val(rho) &&
                   z3::mod(*mask / ctx_.int_val(int64_t(1) << rho), 2) == 1);
  return z3::mk_or(bits);
}

void BarrierProver::clusterTerms(size_t e, const z3::expr &i, const z3::expr &touched,
                                 std::vector<Term> &out, bool &ok) {
  const SyncEvent &ev = sk_.events[e];
  if (!ev.crossCta()) {
    RankScope scope(*this, receiver());
    out.push_back({e, touched && fires(ev, i), amountOf(ev, i, ok), i});
    return;
  }
  for (int64_t sigma = 0; sigma < *clusterCtas_; ++sigma) {
    RankScope scope(*this, sigma);
    auto reached = reaches(ev, i);
    if (!reached)
      ok = false;
    z3::expr f = touched && fires(ev, i) && reached.value_or(ctx_.bool_val(false));
    out.push_back({e, f, amountOf(ev, i, ok), i, sigma});
  }
}

std::string BarrierProver::receiverText(const z3::model &m) {
  if (!clusterCtas_)
    return "";
  return fmt::format(" of the CTA of rank {} in the cluster", ProtoEncoder::text(m, receiver()));
}

std::string BarrierProver::crossCtaBarriers() const {
  std::set<std::string> names;
  for (const SyncEvent &e : sk_.events)
    if (e.crossCta() && e.loop >= 0 && !e.barrier.array.empty() && clusterCtas_)
      names.insert(e.barrier.array);
  std::string out;
  for (const std::string &n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out;
}

z3::expr BarrierProver::sumOf(z3::context &ctx, const std::vector<Term> &terms) {
  z3::expr sum = ctx.int_val(0);
  for (const Term &t : terms) {
    z3::expr next = sum + z3::ite(t.fires, t.amount, ctx.int_val(0));
    // Copied, not moved: z3++ 4.8.12's move assignment leaks the old term
    // (DivisionAbstraction.cpp).
    sum = next;
  }
  return sum;
}

z3::expr BarrierProver::anyOf(z3::context &ctx, const std::vector<Term> &terms) {
  z3::expr_vector v(ctx);
  for (const Term &t : terms)
    v.push_back(t.fires);
  return v.empty() ? ctx.bool_val(false) : z3::mk_or(v);
}

std::string BarrierProver::termList(const z3::model &m, const std::vector<Term> &terms,
                                    const char *unit) {
  std::string out;
  for (const Term &t : terms) {
    if (!m.eval(t.fires, true).is_true())
      continue;
    const SyncEvent &ev = sk_.events[t.event];
    if (!out.empty())
      out += " + ";
    out += fmt::format("{} {} ({} by {}{}, {})", ProtoEncoder::text(m, t.amount), unit, ev.what,
                       ev.threads.describe(),
                       t.sender >= 0 ? fmt::format(" of the CTA of rank {}", t.sender) : "",
                       iterationText(m, ev, t.iteration));
  }
  return out.empty() ? "none" : out;
}

void BarrierProver::checkArrivals(const BarrierInfo &info) {
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
    std::string jv = ProtoEncoder::text(*m, j), nv = ProtoEncoder::text(*m, n),
                got = ProtoEncoder::text(*m, sum);
    size_t firstEvent = terms.front().event;
    for (const Term &t : terms)
      if (m->eval(t.fires, true).is_true()) {
        firstEvent = t.event;
        break;
      }
    std::vector<std::pair<llvm::SMLoc, std::string>> notes;
    for (const Term &t : terms)
      if (m->eval(t.fires, true).is_true())
        notes.push_back(
            {termLoc(*m, t), fmt::format("arrives {} time(s) per execution: {} by {}",
                                         ProtoEncoder::text(*m, t.amount), sk_.events[t.event].what,
                                         sk_.events[t.event].threads.describe())});
    notes.push_back({arr.loc, fmt::format("{} is declared with count {}", arr.name, *info.count)});
    if (over) {
      finding(
          ProtocolViolationKind::OverArrival, sk_.events[firstEvent].loc,
          fmt::format("over-arrival: phase {} of {}[{}]{} receives {} arrivals but its count is {} "
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
              nv, arr.name, jv, receiverText(*m), got, *info.count, termList(*m, terms, "arrivals"),
              sizes(*m)),
          notes);
    }
    result(arr.name + ": arrivals per phase", false, "violated");
    return;
  }
  result(arr.name + ": arrivals per phase", true,
         fmt::format("proved for all sizes: every phase receives exactly {}", *info.count));
}

void BarrierProver::checkArrivalsPerExecution(const BarrierInfo &info) {
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
    std::string element = fmt::format("{}[{}]", arr.name, ProtoEncoder::text(*m, *index));
    finding(ProtocolViolationKind::OverArrival, ev.loc,
            fmt::format("over-arrival: one execution of {} by {} at {} brings {} arrivals to "
                        "{}, but a phase of {} takes {} (for {})",
                        ev.what, ev.threads.describe(), iterationText(*m, ev, i),
                        ProtoEncoder::text(*m, amount), element, arr.name, *info.count, sizes(*m)),
            {{arr.loc, fmt::format("{} is declared with count {}", arr.name, *info.count)}});
  }
}

void BarrierProver::checkTransactions(const BarrierInfo &info) {
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
    std::string jv = ProtoEncoder::text(*m, j), nv = ProtoEncoder::text(*m, n);
    std::string w = ProtoEncoder::text(*m, want), g = ProtoEncoder::text(*m, got);
    llvm::SMLoc loc = !expected.empty() ? sk_.events[expected.front().event].loc
                                        : sk_.events[delivered.front().event].loc;
    for (const Term &t : expected) // the expect_tx of this phase that runs
      if (m->eval(t.fires, true).is_true()) {
        loc = termLoc(*m, t);
        break;
      }
    std::vector<std::pair<llvm::SMLoc, std::string>> notes;
    for (const Term &t : delivered)
      if (m->eval(t.fires, true).is_true())
        notes.push_back(
            {termLoc(*m, t),
             fmt::format(
                 "delivers {} bytes to {}[{}]{}", ProtoEncoder::text(*m, t.amount), arr.name, jv,
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

void BarrierProver::checkWait(const BarrierInfo &info, size_t w) {
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
  // Whether it waits for its round's phase, as sync/MbarrierZ3.h reads a
  // parity (the explorer's and the simulator's rule, symbolically).
  z3::expr same = waitsForOwnRound(*parity, n);
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
    finding(ProtocolViolationKind::ParityAliasing, ev.loc,
            fmt::format(
                "parity aliasing: the parity {} does not follow the phases of {}: at {} (the "
                "wait's round {} on {}[{}]) it waits for phase {}, but at {} (round {} on {}[{}]) "
                "for phase {}, so one of them is satisfied by a phase two behind (for {})",
                print(ev.parity), arr.name, iterationText(*cur, ev, i), ProtoEncoder::text(*cur, n),
                arr.name, ProtoEncoder::text(*cur, j), ProtoEncoder::text(*cur, n),
                iterationText(*prev, ev, i), ProtoEncoder::text(*prev, n), arr.name,
                ProtoEncoder::text(*prev, j), ProtoEncoder::text(*prev, n - 1), sizes(*prev)));
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
    std::string phase = ProtoEncoder::text(*m, tau);
    finding(ProtocolViolationKind::Deadlock, ev.loc,
            fmt::format("deadlock: this wait on {}[{}] (parity {}) at {} by {} waits for phase {}, "
                        "which never completes: nothing arrives on {}[{}] in that phase (for {})",
                        arr.name, ProtoEncoder::text(*m, j),
                        ProtoEncoder::text(*m, z3::mod(*parity, 2)), iterationText(*m, ev, i),
                        sk_.roles[size_t(ev.role)].describe(), phase, arr.name,
                        ProtoEncoder::text(*m, j), sizes(*m)));
  }
}

} // namespace tilescope::detail
