#include "racecheck/StaticRaces.h"

#include "ir/Printer.h"
#include "verifier/BarrierSkeleton.h"
#include "verifier/ProtoEncoding.h"
#include "verifier/SolverBudget.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
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

class RaceChecker {
public:
  RaceChecker(const Kernel &k, const RaceOptions &opt)
      : sk_(extractBarrierSkeleton(k)), opt_(opt), enc_(ctx_, sk_) {}

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
                                             const std::vector<z3::expr> &cta = {}) {
    std::map<BuiltinKind, z3::expr> b;
    const BuiltinKind blockIdx[] = {BuiltinKind::blockIdx_x, BuiltinKind::blockIdx_y,
                                    BuiltinKind::blockIdx_z};
    for (size_t d = 0; d < cta.size() && d < 3; ++d)
      b.emplace(blockIdx[d], cta[d]);
    b.emplace(BuiltinKind::threadIdx_x, t);
    b.emplace(BuiltinKind::laneid, z3::mod(t, 32));
    b.emplace(BuiltinKind::warpid, t / 32);
    b.emplace(BuiltinKind::wgid, t / 128);
    b.emplace(BuiltinKind::tid_in_wg, z3::mod(t, 128));
    b.emplace(BuiltinKind::wid_in_wg, z3::mod(t / 32, 4));
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
    // As intervals of consecutive threads: a warpgroup is one constraint.
    z3::expr_vector any(ctx_);
    for (int64_t x = 0; x < set.launchThreads();) {
      if (!set.contains(x)) {
        ++x;
        continue;
      }
      int64_t y = x;
      while (y + 1 < set.launchThreads() && set.contains(y + 1))
        ++y;
      any.push_back(x == y ? t == ctx_.int_val(x) : t >= ctx_.int_val(x) && t <= ctx_.int_val(y));
      x = y + 1;
    }
    if (any.empty())
      return false;
    out.push_back(z3::mk_or(any));
    return true;
  }

  // Whether barrier event e makes every thread of `a` and `b` wait for each
  // other: cta.sync by every thread, or a named barrier.sync whose
  // participants include them all (its thread count is checked by the
  // barrier proofs).
  bool joins(const SyncEvent &e, const ThreadSet &a, const ThreadSet &b) const {
    if (e.kind == SyncKind::CtaSync)
      return e.threads.count() == sk_.threads;
    if (e.kind != SyncKind::NamedSync)
      return false;
    ThreadSet cover = coverOf(e);
    return a.subsetOf(cover) && b.subsetOf(cover);
  }

  // A barrier joining a's and b's threads strictly between two orders (in
  // the body of `loop` itself when one is given).
  bool ctaSyncBetween(const ThreadSet &a, const ThreadSet &b, int fromOrder, int toOrder,
                      int loop = -2) const {
    for (const SyncEvent &e : sk_.events)
      if (joins(e, a, b) && e.order > fromOrder && e.order < toOrder &&
          (loop == -2 || e.loop == loop))
        return true;
    return false;
  }

  // Outside loops: `first` delivers to (TMA with mbar = B) or arrives on an
  // mbarrier B after writing (mbarrier.arrive, or tcgen05.commit, which
  // arrives once the issuing thread's tcgen05 operations completed), and
  // every thread of `second` waits on B between them. One-shot barriers only (both outside loops);
  // phases of barriers in loops are the barrier proofs' business.
  bool handshake(const SyncEvent &first, const SyncEvent &second) const {
    // `second` may sit in a loop that starts after the wait: every iteration
    // comes after it.
    if (first.loop >= 0)
      return false;
    std::set<std::string> signalled;
    if (first.kind == SyncKind::TxDelivery)
      signalled.insert(first.barrier.array);
    for (const SyncEvent &e : sk_.events)
      if (e.order > first.order && e.order < second.order && e.loop < 0 &&
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

  // In a loop whose outermost loop the barrier proofs model (an inner loop,
  // e.g. the K-chunks of a dispatched gemm, runs within one outer iteration).
  bool inModelledLoop(const SyncEvent &e) const {
    if (e.loop < 0)
      return false;
    int loop = e.loop;
    while (sk_.loops[size_t(loop)].parent >= 0)
      loop = sk_.loops[size_t(loop)].parent;
    return loop >= 0;
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
        checkPair(ea, a, eb, b);
        if (a.scope == MemScope::Global && b.scope == MemScope::Global)
          solvePair(ea, a, eb, b, Ordering{false, false, false, false, &ea}, true);
      }
  }

  void checkPair(const SyncEvent &ea, const MemoryAccess &a, const SyncEvent &eb,
                 const MemoryAccess &b) {
    // Pipeline stages shared between roles: the barrier proofs' business.
    if (ea.role != eb.role && a.scope != MemScope::Global && inModelledLoop(ea) &&
        inModelledLoop(eb)) {
      ++report_.pairsOrderedByMbarrier;
      return;
    }
    bool sameLoop = ea.loop == eb.loop && ea.loop >= 0;
    bool sameEvent = &ea == &eb;
    // In program order within one iteration: `lo` first, `hi` second.
    const SyncEvent &lo = ea.order <= eb.order ? ea : eb, &hi = ea.order <= eb.order ? eb : ea;
    bool orderedSameIteration =
        !sameEvent && ctaSyncBetween(ea.threads, eb.threads, lo.order, hi.order);
    if (!orderedSameIteration && !sameEvent && handshake(lo, hi)) {
      ++report_.pairsProved;
      return;
    }
    // Across iterations of one loop: lo at a later iteration than hi is
    // separated by a barrier after hi or before lo in the body (adjacent
    // iterations), by any barrier of the body otherwise.
    bool anyInBody = sameLoop && ctaSyncBetween(ea.threads, eb.threads, -1, INT_MAX, ea.loop);
    bool wrapsAround =
        sameLoop && (ctaSyncBetween(ea.threads, eb.threads, hi.order, INT_MAX, ea.loop) ||
                     ctaSyncBetween(ea.threads, eb.threads, -1, lo.order, ea.loop));
    if (!sameLoop && orderedSameIteration) {
      ++report_.pairsProved;
      return;
    }
    if (sameLoop && orderedSameIteration && anyInBody && wrapsAround) {
      ++report_.pairsProved;
      return;
    }
    Ordering ord{sameLoop, orderedSameIteration, anyInBody, wrapsAround, &lo};
    if (solvePair(ea, a, eb, b, ord, false) == z3::unsat)
      ++report_.pairsProved;
  }

  // What orders two accesses of one CTA (see checkPair).
  struct Ordering {
    bool sameLoop = false, sameIteration = false, anyInBody = false, wrapsAround = false;
    const SyncEvent *lo = nullptr; // the access earlier in program order
  };

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

  // Looks for two executors touching one element under `ord`; sat reports
  // the race. With acrossCtas, the executors are in distinct CTAs.
  z3::check_result solvePair(const SyncEvent &ea, const MemoryAccess &a, const SyncEvent &eb,
                             const MemoryAccess &b, const Ordering &ord, bool acrossCtas) {
    const SyncEvent &lo = *ord.lo;
    bool sameLoop = ord.sameLoop && !acrossCtas;
    bool orderedSameIteration = ord.sameIteration, anyInBody = ord.anyInBody,
         wrapsAround = ord.wrapsAround;
    // Collective calls of the same group are ordered by their dispatch.
    bool groupScoped = ea.scope != ExecScope::Thread && eb.scope != ExecScope::Thread;
    z3::expr t1 = enc_.fresh("t1"), t2 = enc_.fresh("t2");
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
      z3::expr_vector differ(ctx_);
      for (size_t d = 0; d < ctaA.size(); ++d)
        differ.push_back(ctaA[d] != ctaB[d]);
      cons.push_back(z3::mk_or(differ));
    } else if (groupScoped && ea.scope == eb.scope) {
      int64_t g = groupSize(ea.scope, sk_.threads);
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
    if (sameLoop && !itersA.empty() && !itersB.empty()) {
      const z3::expr &iLo = &lo == &ea ? itersA.back() : itersB.back();
      const z3::expr &iHi = &lo == &ea ? itersB.back() : itersA.back();
      if (orderedSameIteration)
        cons.push_back(iLo != iHi);
      if (anyInBody)
        cons.push_back(iHi <= iLo && iLo <= iHi + 1);
      if (wrapsAround)
        cons.push_back(iLo != iHi + 1);
    }
    for (const Expr &g : ea.guards)
      if (auto e = enc_.encode(g, boundA, builtinsOf(t1, ctaA)); e && e->is_bool())
        cons.push_back(*e);
    for (const Expr &g : eb.guards)
      if (auto e = enc_.encode(g, boundB, builtinsOf(t2, ctaB)); e && e->is_bool())
        cons.push_back(*e);
    if (a.region.size() != b.region.size())
      return z3::unsat;
    std::vector<z3::expr> element;
    for (size_t d = 0; d < a.region.size(); ++d) {
      auto ba = enc_.encode(a.region[d].begin, boundA, builtinsOf(t1, ctaA));
      auto xa = enc_.encode(a.region[d].extent, boundA, builtinsOf(t1, ctaA));
      auto bb = enc_.encode(b.region[d].begin, boundB, builtinsOf(t2, ctaB));
      auto xb = enc_.encode(b.region[d].extent, boundB, builtinsOf(t2, ctaB));
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
    if (!solver_) {
      solver_.emplace(ctx_);
      z3::params p(ctx_);
      setSolverBudget(p, opt_.timeoutMs);
      solver_->set(p);
    }
    for (; assumed_ < enc_.assumptions().size(); ++assumed_)
      solver_->add(enc_.assumptions()[int(assumed_)]);
    z3::solver &s = *solver_;
    z3::expr pair = ctx_.bool_const(fmt::format("pair!{}", pairs_++).c_str());
    for (unsigned k = 0; k < cons.size(); ++k)
      s.add(z3::implies(pair, cons[int(k)]));
    z3::expr_vector under(ctx_);
    under.push_back(pair);
    z3::check_result r = s.check(under);
    if (r == z3::unknown) {
      report_.notChecked.push_back({ea.loc, fmt::format("race on {}: Z3 gave up", a.buffer)});
      return r;
    }
    if (r == z3::unsat)
      return r;
    z3::model m = s.get_model();
    auto threadText = [&](const z3::expr &t) {
      int64_t v = ProtoEncoder::value(m, t);
      std::string cta;
      for (const z3::expr &c : &t == &t1 ? ctaA : ctaB)
        cta += fmt::format("{}{}", cta.empty() ? "" : ", ", ProtoEncoder::value(m, c));
      return fmt::format("thread {} (warp {}, lane {}{})", v, v / 32, v % 32,
                         cta.empty() ? "" : ", CTA (" + cta + ")");
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
        acrossCtas ? "in different CTAs, which no barrier orders" : "with no barrier between them",
        enc_.describeSymbols(m));
    for (const RaceFinding &g : report_.findings)
      if (g.first == f.first && g.second == f.second)
        return r;
    report_.findings.push_back(std::move(f));
    return r;
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
  z3::context ctx_;
  ProtoEncoder enc_;
  std::optional<z3::solver> solver_;
  unsigned assumed_ = 0;
  int pairs_ = 0;
  RaceReport report_;
};

} // namespace

RaceReport checkStaticRaces(const Kernel &kernel, const RaceOptions &options) {
  return RaceChecker(kernel, options).run();
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
