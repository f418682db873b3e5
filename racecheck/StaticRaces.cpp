#include "racecheck/StaticRaces.h"
#include "racecheck/RaceChecker.h"

#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "sync/BarrierSkeleton.h"
#include "proof/LeastWitness.h"
#include "proof/LinearPrecheck.h"
#include "verifier/NamedBarriers.h"
#include "proof/ProtoEncoding.h"
#include "proof/SharedContext.h"
#include "proof/SolverBudget.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <optional>
#include <set>

namespace tilescope::detail {

RaceReport RaceChecker::run() {
  try {
    checkPairs();
  } catch (const z3::exception &e) {
    report_.notChecked.push_back({llvm::SMLoc(), fmt::format("Z3 failed: {}", e.msg())});
  }
  checkProxyFences();
  return std::move(report_);
}

std::map<BuiltinKind, z3::expr>
RaceChecker::builtinsOf(const z3::expr &t, const std::vector<z3::expr> &cta, const z3::expr *rank) {
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
  for (BuiltinKind k : kThreadBuiltins)
    b.emplace(k, detail::threadBuiltinZ3(k, t));
  return b;
}

bool RaceChecker::bindLoops(const SyncEvent &ev, const std::string &tag,
                            std::map<std::string, z3::expr> &bound, z3::expr_vector &ranges,
                            std::vector<z3::expr> &iters,
                            const std::map<BuiltinKind, z3::expr> &builtins) {
  for (int l = ev.loop; l >= 0; l = sk_.loops[size_t(l)].parent) {
    const SkeletonLoop &loop = sk_.loops[size_t(l)];
    z3::expr i = enc_.fresh(tag + loop.var);
    // Outer loop variables first, so bounds of inner loops can use them.
    iters.insert(iters.begin(), i);
    auto b = enc_.encode(loop.begin, bound, builtins), s = enc_.encode(loop.step, bound, builtins);
    auto trip = enc_.encode(loop.trip(), bound, builtins);
    if (!b || !s || !trip)
      return false;
    bound.emplace(loop.var, *b + i * *s);
    ranges.push_back(i >= 0 && i < *trip);
  }
  return true;
}

bool RaceChecker::threadMember(const ThreadSet &set, const z3::expr &t, z3::expr_vector &out) {
  auto member = detail::threadSetZ3(set, t);
  if (!member)
    return false;
  out.push_back(*member);
  return true;
}

bool RaceChecker::joins(const SyncEvent &e, const ThreadSet &a, const ThreadSet &b,
                        bool warpLevel) const {
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

bool RaceChecker::ctaSyncBetween(const ThreadSet &a, const ThreadSet &b, int fromOrder, int toOrder,
                                 int loop, bool cluster, bool warpLevel,
                                 std::initializer_list<const SyncEvent *> with) const {
  auto inRange = [&](const SyncEvent &e, int from) {
    if (e.order <= from || e.order >= toOrder || (loop != -2 && e.loop != loop))
      return false;
    for (const SyncEvent *x : with)
      if (runsWith(e, *x))
        return true;
    return false;
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

bool RaceChecker::generationBetween(const SyncEvent &first, const SyncEvent &second,
                                    const std::vector<int> &common) const {
  for (const NamedGeneration &g : named_.generations)
    if ((g.loop < 0 || std::count(common.begin(), common.end(), g.loop)) &&
        generationOrders(
            g, first.threads, second.threads, true,
            [&](const SyncEvent &e) {
              return e.order > first.order && (runsWith(e, first) || runsWith(e, second));
            },
            [&](const SyncEvent &e) {
              return e.order < second.order && (runsWith(e, first) || runsWith(e, second));
            }))
      return true;
  return false;
}

std::vector<std::pair<ThreadSet, ThreadSet>>
RaceChecker::generationPairs(const SyncEvent &first, const SyncEvent &second) const {
  std::vector<std::pair<ThreadSet, ThreadSet>> out;
  auto near = [&](const SyncEvent &e) { return runsWith(e, first) || runsWith(e, second); };
  for (const NamedGeneration &g : named_.generations) {
    if (g.loop >= 0)
      continue;
    ThreadSet before(first.threads.launchThreads()), after(second.threads.launchThreads());
    for (int64_t t = 0; t < first.threads.launchThreads(); ++t) {
      const SyncEvent *e = g.eventOf(t);
      if (!e)
        continue;
      if (first.threads.contains(t) && e->order > first.order && near(*e))
        before.add(t);
      if (second.threads.contains(t) && e->kind == SyncKind::NamedSync &&
          e->order < second.order && near(*e))
        after.add(t);
    }
    if (!before.empty() && !after.empty())
      out.emplace_back(std::move(before), std::move(after));
  }
  return out;
}

bool RaceChecker::generationWraps(const SyncEvent &lo, const SyncEvent &hi, int loop) const {
  // A generation after hi in hi's iteration runs when hi does; one before lo
  // in the next iteration, when lo does.
  auto withHi = [&](const SyncEvent &e) { return runsWith(e, hi); };
  auto withLo = [&](const SyncEvent &e) { return runsWith(e, lo); };
  for (const NamedGeneration &g : named_.generations)
    if (g.loop == loop &&
        (generationOrders(
             g, hi.threads, lo.threads, true,
             [&](const SyncEvent &e) { return e.order > hi.order && withHi(e); }, withHi) ||
         generationOrders(g, hi.threads, lo.threads, true, withLo,
                          [&](const SyncEvent &e) { return e.order < lo.order && withLo(e); })))
      return true;
  return false;
}

std::optional<int64_t> RaceChecker::clusterExtent() const {
  if (sk_.cluster.empty())
    return std::nullopt;
  auto shape = clusterShapeOf(sk_);
  if (!shape)
    return std::nullopt;
  return shape->extent;
}

int RaceChecker::clusterAxis() const {
  auto shape = sk_.cluster.empty() ? std::nullopt : clusterShapeOf(sk_);
  return shape ? shape->axis : 0;
}

namespace {

// The constant element of a barrier reference (a single barrier is element 0).
std::optional<int64_t> elementOf(const BarrierRef &ref) {
  return ref.index ? constantValue(ref.index) : std::optional<int64_t>(0);
}

bool signals(const SyncEvent &e) {
  return e.kind == SyncKind::MbarArrive || e.kind == SyncKind::MbarExpectTx ||
         e.kind == SyncKind::Tcgen05Commit;
}

} // namespace

std::optional<int64_t> RaceChecker::straightRound(const SyncEvent &e) const {
  auto element = elementOf(e.barrier);
  if (!element || e.loop >= 0 || e.crossCta())
    return std::nullopt;
  bool wait = e.kind == SyncKind::MbarWait;
  int64_t n = 0;
  for (const SyncEvent &o : sk_.events) {
    if (&o == &e || o.order >= e.order || o.barrier.array != e.barrier.array ||
        !intersects(o.threads, e.threads))
      continue;
    if (wait ? o.kind != SyncKind::MbarWait : !signals(o))
      continue;
    auto oe = elementOf(o.barrier);
    if (!oe || o.loop >= 0 || o.crossCta())
      return std::nullopt; // a round this count cannot tell
    n += *oe == *element;
  }
  // A TMA's bytes complete the phase of the expect_tx its thread issued before.
  if (e.kind == SyncKind::TxDelivery && n > 0)
    --n;
  return n;
}

bool RaceChecker::handshake(const SyncEvent &first, const MemoryAccess &access,
                            const SyncEvent &second) const {
  // `second` may sit in a loop that starts after the wait: every iteration
  // comes after it.
  if (first.loop >= 0)
    return false;
  bool late = completesLater(first, access);
  // The signals: the barrier element and the phase (its straight-line round)
  // each completes.
  std::vector<std::pair<const SyncEvent *, int64_t>> signalled;
  auto add = [&](const SyncEvent &e) {
    if (auto r = straightRound(e))
      signalled.push_back({&e, *r});
  };
  if (first.kind == SyncKind::TxDelivery)
    add(first);
  for (const SyncEvent &e : sk_.events)
    if (e.order > first.order && e.order < second.order && e.loop < 0 &&
        (!late || (e.kind == SyncKind::Tcgen05Commit && first.call == IntrinsicId::Tcgen05Mma)) &&
        signals(e) && first.threads.subsetOf(coverOf(e)))
      add(e);
  // A wait orders the pair only when the phase its parity waits for is the
  // signal's phase or a later one: a wait on another element, or one whose
  // parity names the phase before (it passes at once on a fresh barrier),
  // orders nothing.
  for (const SyncEvent &w : sk_.events) {
    if (w.kind != SyncKind::MbarWait || w.loop >= 0 || w.order <= first.order ||
        w.order >= second.order || !second.threads.subsetOf(coverOf(w)))
      continue;
    auto round = straightRound(w);
    auto parity = constantValue(w.parity);
    if (!round || !parity)
      continue;
    int64_t meant = (*parity % 2 + 2) % 2 == *round % 2 ? *round : *round - 1;
    for (const auto &[e, phase] : signalled)
      if (e->barrier.array == w.barrier.array && elementOf(e->barrier) == elementOf(w.barrier) &&
          phase <= meant)
        return true;
  }
  return false;
}

} // namespace tilescope::detail

namespace tilescope {

RaceReport checkStaticRaces(const Kernel &kernel, const RaceOptions &options) {
  return detail::RaceChecker(extractBarrierSkeleton(kernel), options).run();
}

RaceReport checkStaticRaces(const BarrierSkeleton &skeleton, const RaceOptions &options) {
  return detail::RaceChecker(skeleton, options).run();
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
