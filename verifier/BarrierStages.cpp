// The barrier proofs of pipeline stages (BarrierProver.h): a stage read
// after it was filled, refilled after it was released.
#include "verifier/BarrierProver.h"

#include "ir/Affine.h"
#include "ir/ConcreteEval.h"
#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "verifier/AsyncDrain.h"
#include "verifier/BarrierFallback.h"
#include "verifier/ConcreteSkeleton.h"
#include "verifier/NamedOrdering.h"
#include "verifier/StagePairs.h"
#include "verifier/TmemProtocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

namespace tilescope::detail {

void BarrierProver::checkStages() {
  struct Use {
    size_t event;
    const MemoryAccess *access;
    Pattern stage;
  };
  std::map<std::string, std::vector<Use>> writes, reads;
  // Only buffers shared between roles, or between processes of one role
  // (the warp-uniform parts of a role that share its loop: a producer warp
  // and consumer warps under `if warpid == ...`), are pipeline stages; a
  // buffer one process uses alone is the race check's.
  std::vector<ThreadSet> processes = skeletonProcesses(sk_);
  auto stagePair = [&](const SyncEvent &a, const MemoryAccess &x, const SyncEvent &b,
                       const MemoryAccess &y) {
    return isStagePair(sk_, a, x, b, y) || isProcessStagePair(sk_, processes, a, x, b, y);
  };
  std::map<std::string, std::set<int>> rolesOf;
  std::set<std::string> sharedInRole; // by two processes of one role
  for (size_t e : nodes_)
    for (const MemoryAccess &a : sk_.events[e].accesses)
      rolesOf[a.buffer].insert(sk_.events[e].role);
  for (size_t e : nodes_)
    for (size_t f : nodes_)
      for (const MemoryAccess &x : sk_.events[e].accesses)
        for (const MemoryAccess &y : sk_.events[f].accesses)
          if (isProcessStagePair(sk_, processes, sk_.events[e], x, sk_.events[f], y))
            sharedInRole.insert(x.buffer);
  for (size_t node = 0; node < nodes_.size(); ++node) {
    size_t e = nodes_[node];
    const SyncEvent &ev = sk_.events[e];
    for (const MemoryAccess &a : ev.accesses) {
      if (a.scope == MemScope::Global || a.scope == MemScope::Reg ||
          (rolesOf[a.buffer].size() < 2 && !sharedInRole.count(a.buffer)))
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
  // The static race check leaves the fill/read pairs of two roles under the
  // same outermost loop to this proof (StagePairs.h); one it cannot decide
  // stays open (and goes to the exhaustive check), never silently proved.
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
          if (stagePair(a, x, b, y))
            leaveOpen(a, b, x.buffer, "the trip count of their loop is not modelled");
    }
  bool any = false, checked = false, unmodelled = false;
  // A violation of a pair that a named barrier outside the model may order
  // (NamedOrdering.h) is not proved, never a finding.
  std::optional<NamedBarrierModel> named;
  auto confirm = [&](bool ok, size_t before, const SyncEvent &a, const SyncEvent &b) {
    if (ok || report_.findings.size() == before)
      return ok;
    if (!named)
      named = analyseNamedBarriers(sk_);
    const SyncEvent *by = unmodelledNamedOrdering(sk_, *named, a.threads, b.threads);
    if (!by)
      return false;
    for (size_t i = before; i < report_.findings.size(); ++i)
      report_.notProved.push_back(
          {report_.findings[i].loc,
           fmt::format("{} [not confirmed: named barrier {} ({}) is used by both sides, and its "
                       "generations are not modelled, so it may order them]",
                       report_.findings[i].message, by->namedId, by->what)});
    report_.findings.resize(before);
    unmodelled = true;
    return true;
  };
  for (const auto &[buffer, ws] : writes) {
    auto rit = reads.find(buffer);
    if (rit == reads.end())
      continue;
    for (const Use &x : ws)
      for (const Use &r : rit->second) {
        const SyncEvent &xe = sk_.events[x.event], &re = sk_.events[r.event];
        if (!stagePair(xe, *x.access, re, *r.access))
          continue;
        if (loopClass_[size_t(xe.loop)] != loopClass_[size_t(re.loop)]) {
          leaveOpen(xe, re, buffer, "their loops run different numbers of iterations");
          continue;
        }
        checked = true;
        size_t before = report_.findings.size();
        any |= !confirm(readAfterWrite(buffer, x.event, x.stage, r.event, r.stage), before, xe, re);
        before = report_.findings.size();
        any |= !confirm(writeAfterRead(buffer, x.event, x.stage, r.event, r.stage), before, xe, re);
      }
  }
  if (checked)
    result("pipeline stages (read after fill, refill after release)", !any && !unmodelled,
           any          ? "violated"
           : unmodelled ? "not proved (named barriers whose generations are not modelled)"
                        : "proved for all sizes");
}

bool BarrierProver::readAfterWrite(const std::string &buffer, size_t x, const Pattern &px, size_t r,
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
                barrierName, re.threads.describe());
  finding(ProtocolViolationKind::ReadBeforeFilled, re.loc,
          fmt::format(
              "read before filled: {} by {} reads {} stage {} at {}, before {} of the same round "
              "(at {}) has filled it: {} (for {})",
              re.what, re.threads.describe(), buffer, ProtoEncoder::text(*m, s),
              iterationText(*m, re, iR), xe.what, iterationText(*m, xe, iX), how, sizes(*m)),
          {{xe.loc, fmt::format("{} fills {} here", xe.what, buffer)}});
  return false;
}

bool BarrierProver::writeAfterRead(const std::string &buffer, size_t x, const Pattern &px, size_t r,
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
  bool partly = some != kNoPath && m->eval(iR <= iX + ctx_.int_val(some), true).is_true();
  finding(ProtocolViolationKind::OverwriteWhileRead, xe.loc,
          fmt::format(
              "overwrite while read: {} by {} refills {} stage {} at {} while {} by {} may still "
              "read its previous contents (from {}): {} (for {})",
              xe.what, xe.threads.describe(), buffer, ProtoEncoder::text(*m, s),
              iterationText(*m, xe, iX), re.what, re.threads.describe(), iterationText(*m, re, iR),
              partly ? "the refill follows the release of the threads that arrive, but nothing "
                       "orders the other reading threads' reads before that release"
                     : "nothing orders the refill after that read",
              sizes(*m)),
          {{re.loc, fmt::format("{} reads {} here", re.what, buffer)}});
  return false;
}

} // namespace tilescope::detail
