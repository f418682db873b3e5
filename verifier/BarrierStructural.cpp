// The size-independent structural checks of the barrier proofs
// (BarrierProver.h): mbarrier inits, CTA and named barriers, wgmma and
// tcgen05 discipline.
#include "verifier/BarrierProver.h"

#include "ir/Affine.h"
#include "ir/ConcreteEval.h"
#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "verifier/AsyncDrain.h"
#include "verifier/BarrierFallback.h"
#include "verifier/TmemProtocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

namespace tilescope::detail {

void BarrierProver::checkInit() {
  mergeStructural([&](StructuralResult &r) { checkMbarrierInits(sk_, r); });
}

void BarrierProver::checkCtaBarriers() {
  for (const SyncEvent &e : sk_.events)
    if (e.kind == SyncKind::CtaSync && e.threads.count() != sk_.threads)
      finding(
          ProtocolViolationKind::Divergence, e.loc,
          fmt::format("divergent barrier: {} is reached only by {} ({} of {} threads); the others "
                      "never arrive and the CTA hangs",
                      e.what, e.threads.describe(), e.threads.count(), sk_.threads),
          {}, false);
  mergeStructural([&](StructuralResult &r) { checkNamedBarriers(sk_, r); }, &namedOpen_);
}

std::vector<const SyncEvent *> BarrierProver::roleSequence(int role) {
  std::vector<const SyncEvent *> seq;
  for (const SyncEvent &e : sk_.events)
    if (e.role == role)
      seq.push_back(&e);
  return seq;
}

bool BarrierProver::touchesAny(const SyncEvent &e, const std::set<std::string> &registers) {
  return std::any_of(e.accesses.begin(), e.accesses.end(), [&](const MemoryAccess &a) {
    return a.scope == MemScope::Reg && registers.count(a.buffer);
  });
}

namespace {

// What the wgmma discipline follows along a role's events.
struct WgmmaState {
  bool fenced = false, pending = false;
  int uncommitted = 0;
  const SyncEvent *lastMma = nullptr, *lastCommit = nullptr;
  // Accumulators written by wgmma groups that may still run: the open
  // group, then committed groups oldest first (wait_group(n) keeps n).
  std::set<std::string> open;
  std::vector<std::set<std::string>> inFlight;
};

} // namespace

void BarrierProver::checkWgmma() {
  for (size_t r = 0; r < sk_.roles.size(); ++r) {
    auto seq = roleSequence(int(r));
    auto step = [&](WgmmaState &st, const SyncEvent *e) {
      if (e->kind != SyncKind::WgmmaMma) {
        std::set<std::string> busy = st.open;
        for (const auto &g : st.inFlight)
          busy.insert(g.begin(), g.end());
        if (touchesAny(*e, busy))
          finding(ProtocolViolationKind::WgmmaDiscipline, e->loc,
                  fmt::format("wgmma result read before wait_group: {} by {} touches the "
                              "accumulator of a wgmma.mma_async that may still run (its group "
                              "is not retired by a wgmma.wait_group before this)",
                              e->what, e->threads.describe()),
                  {{st.lastMma ? st.lastMma->loc : e->loc, "the wgmma.mma_async writing it"}},
                  false);
      }
      switch (e->kind) {
      case SyncKind::WgmmaFence:
        st.fenced = true;
        break;
      case SyncKind::WgmmaMma:
        if (!st.fenced)
          finding(ProtocolViolationKind::WgmmaDiscipline, e->loc,
                  fmt::format("wgmma.mma_async by {} without a wgmma.fence before it: the "
                              "accumulator registers may still be written by other instructions",
                              e->threads.describe()),
                  {}, false);
        ++st.uncommitted;
        st.lastMma = e;
        for (const MemoryAccess &a : e->accesses)
          if (a.write && a.scope == MemScope::Reg)
            st.open.insert(a.buffer);
        break;
      case SyncKind::WgmmaCommit:
        if (st.uncommitted)
          st.pending = true;
        st.uncommitted = 0;
        st.lastCommit = e;
        st.inFlight.push_back(std::move(st.open));
        st.open.clear();
        break;
      case SyncKind::WgmmaWait: {
        int64_t keep = std::max<int64_t>(constantValue(e->amount).value_or(1), 0);
        while (int64_t(st.inFlight.size()) > keep)
          st.inFlight.erase(st.inFlight.begin());
        if (keep == 0)
          st.pending = false;
        st.fenced = false; // accumulators touched again need a new fence
        break;
      }
      default:
        break;
      }
    };
    // The straight pass, keeping the state after each event.
    WgmmaState st;
    std::vector<WgmmaState> after;
    after.reserve(seq.size());
    for (const SyncEvent *e : seq) {
      step(st, e);
      after.push_back(st);
    }
    // Each loop's back edge: the state at the end of its body (after its
    // last event, nested loops included) flows into its first event, so its
    // events are replayed once from there. (Replaying every loop's events one
    // after the other from the end of the role's pass would carry a group
    // still in flight at the end of one loop into a later loop, past the
    // wgmma.wait_group(0) between them.)
    auto within = [&](int loop, int outer) {
      for (; loop >= 0; loop = sk_.loops[size_t(loop)].parent)
        if (loop == outer)
          return true;
      return false;
    };
    for (size_t l = 0; l < sk_.loops.size(); ++l) {
      std::vector<size_t> body;
      for (size_t i = 0; i < seq.size(); ++i)
        if (within(seq[i]->loop, int(l)))
          body.push_back(i);
      if (body.empty())
        continue;
      WgmmaState replay = after[body.back()];
      for (size_t i : body)
        step(replay, seq[i]);
    }
    if (st.uncommitted && st.lastMma)
      finding(ProtocolViolationKind::WgmmaDiscipline, st.lastMma->loc,
              "wgmma.mma_async is never committed (wgmma.commit_group) before its warpgroup ends",
              {}, false);
    else if (st.pending && st.lastCommit)
      finding(ProtocolViolationKind::WgmmaDiscipline, st.lastCommit->loc,
              "committed wgmma groups are never waited for (wgmma.wait_group(0)) before the "
              "results are "
              "used at the end of the role",
              {}, false);
  }
}

void BarrierProver::checkTcgen05Results() {
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
      finding(ProtocolViolationKind::Tcgen05Discipline, ld.loc,
              fmt::format("tcgen05.ld by {} reads {} that tcgen05.mma writes, with no wait on the "
                          "mbarrier of a tcgen05.commit after the MMA ({}) before it: the results "
                          "may not have landed",
                          ld.threads.describe(), buffer,
                          commitBarriers.empty() ? std::string("there is no such commit")
                                                 : "commits go to " + *commitBarriers.begin()),
              {{mma->loc, "the MMA writing it"}}, false);
  }
}

void BarrierProver::checkTcgen05() {
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

} // namespace tilescope::detail
