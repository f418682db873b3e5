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
#include "verifier/ClusterLifetime.h"
#include "verifier/Tcgen05Fences.h"
#include "verifier/TmemProtocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

namespace tilescope::detail {

void BarrierProver::checkInit() {
  mergeStructural([&](StructuralResult &r) { checkMbarrierInits(original_, r); });
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
  mergeStructural([&](StructuralResult &r) { checkNamedBarriers(original_, r); }, &namedOpen_);
  // The peers of a cluster started before, and alive after, every operation
  // that reaches them (ClusterLifetime.h).
  mergeStructural([&](StructuralResult &r) { checkClusterLifetime(original_, r); }, &clusterOpen_);
}

std::vector<const SyncEvent *> BarrierProver::roleSequence(int role) {
  std::vector<const SyncEvent *> seq;
  for (const SyncEvent &e : sk_.events)
    if (e.role == role)
      seq.push_back(&e);
  return seq;
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
  for (ProtocolFinding &f : checkTmemLifetime(original_))
    finding(f.kind, f.loc, std::move(f.message), std::move(f.notes), false);
  // The thread-sync fences around asynchronous tcgen05 operations
  // (Tcgen05Fences.h).
  mergeStructural([&](StructuralResult &r) { checkTcgen05Fences(original_, r); });
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
