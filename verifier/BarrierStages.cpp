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
  // In a cluster's per-rank graph a multicast also fills the buffer of its
  // peers: with every read of it there, whatever their roles (the static
  // race check takes a multicast as a write of its own CTA's buffer only).
  auto peerFill = [&](const SyncEvent &a, const MemoryAccess &x, const MemoryAccess &y) {
    return perRank_ && a.multicast && x.write && x.scope == MemScope::Shared && !y.write &&
           !y.remoteCta && x.buffer == y.buffer;
  };
  std::vector<size_t> events(nodes_.begin(), nodes_.begin() + long(baseNodes_));
  std::map<std::string, std::set<int>> rolesOf;
  std::set<std::string> sharedInRole; // by two processes of one role
  for (size_t e : events)
    for (const MemoryAccess &a : sk_.events[e].accesses)
      rolesOf[a.buffer].insert(sk_.events[e].role);
  for (size_t e : events)
    for (size_t f : events)
      for (const MemoryAccess &x : sk_.events[e].accesses)
        for (const MemoryAccess &y : sk_.events[f].accesses)
          if (isProcessStagePair(sk_, processes, sk_.events[e], x, sk_.events[f], y) ||
              peerFill(sk_.events[e], x, y))
            sharedInRole.insert(x.buffer);
  for (size_t e : events) {
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
          if (stagePair(a, x, b, y) || peerFill(a, x, y) || peerFill(b, y, x))
            leaveOpen(a, b, x.buffer,
                      stagePair(a, x, b, y) ? "the trip count of their loop is not modelled"
                                            : "a multicast fills the buffer in the peer CTAs, "
                                              "and one of them is outside the modelled loops");
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
        bool local = stagePair(xe, *x.access, re, *r.access);
        bool peer = peerFill(xe, *x.access, *r.access);
        if (!local && !peer)
          continue;
        if (loopClass_[size_t(xe.loop)] != loopClass_[size_t(re.loop)]) {
          leaveOpen(xe, re, buffer, "their loops run different numbers of iterations");
          continue;
        }
        // The fill by the CTA of rank sigma of the buffer of rank rho (one
        // pair, -1 and -1, outside the per-rank graph).
        int64_t lo = perRank_ ? 0 : -1, hi = perRank_ ? graphRanks() : 0;
        for (int64_t sigma = lo; sigma < hi; ++sigma)
          for (int64_t rho = lo; rho < hi; ++rho) {
            if (sigma == rho ? !local : !peer)
              continue;
            checked = true;
            size_t before = report_.findings.size();
            any |= !confirm(
                readAfterWrite(buffer, x.event, x.stage, r.event, r.stage, sigma, rho), before,
                xe, re);
            before = report_.findings.size();
            any |= !confirm(
                writeAfterRead(buffer, x.event, x.stage, r.event, r.stage, sigma, rho), before,
                xe, re);
          }
      }
  }
  if (checked)
    result("pipeline stages (read after fill, refill after release)", !any && !unmodelled,
           any          ? "violated"
           : unmodelled ? "not proved (named barriers whose generations are not modelled)"
                        : "proved for all sizes" + clusterScopeText());
}

bool BarrierProver::readAfterWrite(const std::string &buffer, size_t x, const Pattern &px, size_t r,
                                   const Pattern &pr, int64_t sigma, int64_t rho) {
  const SyncEvent &xe = sk_.events[x], &re = sk_.events[r];
  z3::expr iR = enc_.fresh("i");
  auto [s, nR] = roundOf(pr, iR);
  z3::expr iX = iterOf(px, s, nR);
  z3::expr_vector safe(ctx_);
  size_t R = nodeAt(r, rho);
  std::string barrierName;
  if (xe.kind == SyncKind::TxDelivery && barrierPattern_.count(x) && barrierPattern_[x].ok) {
    // The copy completes its phase on the barrier of the same name in the
    // CTA it fills (a multicast: in each CTA of its mask).
    barrierName = xe.barrier.array;
    auto [e, round] = roundOf(barrierPattern_[x], iX);
    const BarrierInfo &info = barriers_.at(xe.barrier.array);
    for (size_t w : info.events) {
      if (!waitShift_.count(w) || !nodeOf_.count(w))
        continue;
      int64_t path = D_[R][nodeAt(w, rho)];
      if (path == kNoPath)
        continue;
      const Pattern &pw = barrierPattern_[w];
      z3::expr iW = iterOf(pw, e, round - ctx_.int_val(waitShift_[w]));
      safe.push_back(touches(pw, e) && firesAt(sk_.events[w], iW, rho) &&
                     iW <= iR + ctx_.int_val(path));
    }
  } else {
    int64_t path = D_[R][nodeAt(x, sigma)];
    if (path != kNoPath)
      safe.push_back(iX <= iR + ctx_.int_val(path));
  }
  Query sv = solver();
  sv.add(firesAt(re, iR, rho) && touches(px, s) && writesInto(xe, iX, sigma, rho));
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
                "the copy completes a phase of {}{} that no wait of {} covers before this read",
                barrierName, rankText(rho), re.threads.describe());
  std::string readIt, writeIt;
  {
    RankScope scope(*this, rho);
    readIt = iterationText(*m, re, iR);
  }
  {
    RankScope scope(*this, sigma);
    writeIt = iterationText(*m, xe, iX);
  }
  finding(ProtocolViolationKind::ReadBeforeFilled, re.loc,
          fmt::format(
              "read before filled: {} by {}{} reads {}{} stage {} at {}, before {}{} of the same "
              "round (at {}) has filled it: {} (for {})",
              re.what, re.threads.describe(), rankText(rho), buffer, rankText(rho),
              ProtoEncoder::text(*m, s), readIt, xe.what,
              sigma < 0 ? "" : " by " + xe.threads.describe() + rankText(sigma), writeIt, how,
              sizes(*m)),
          {{xe.loc, fmt::format("{} fills {} here", xe.what, buffer)}});
  return false;
}

bool BarrierProver::writeAfterRead(const std::string &buffer, size_t x, const Pattern &px, size_t r,
                                   const Pattern &pr, int64_t sigma, int64_t rho) {
  const SyncEvent &xe = sk_.events[x], &re = sk_.events[r];
  z3::expr iX = enc_.fresh("i");
  auto [s, nX] = roundOf(px, iX);
  z3::expr iR = iterOf(pr, s, nX - 1);
  Query sv = solver();
  sv.add(writesInto(xe, iX, sigma, rho) && nX >= 1 && touches(pr, s) && firesAt(re, iR, rho));
  int64_t path = everyPath(nodeAt(x, sigma), nodeAt(r, rho));
  if (path != kNoPath)
    sv.add(!(iR <= iX + ctx_.int_val(path)));
  std::optional<z3::model> m;
  sv.prefer(iX);
  if (check(sv, m, xe.loc, "write after read") != z3::sat)
    return true;
  // Ordered after the read of some threads (a release by fewer threads
  // than read), not of all of them.
  int64_t some = D_[nodeAt(x, sigma)][nodeAt(r, rho)];
  bool partly = some != kNoPath && m->eval(iR <= iX + ctx_.int_val(some), true).is_true();
  std::string readIt, writeIt;
  {
    RankScope scope(*this, rho);
    readIt = iterationText(*m, re, iR);
  }
  {
    RankScope scope(*this, sigma);
    writeIt = iterationText(*m, xe, iX);
  }
  finding(ProtocolViolationKind::OverwriteWhileRead, xe.loc,
          fmt::format(
              "overwrite while read: {} by {}{} refills {}{} stage {} at {} while {} by {}{} may "
              "still read its previous contents (from {}): {} (for {})",
              xe.what, xe.threads.describe(), rankText(sigma), buffer, rankText(rho),
              ProtoEncoder::text(*m, s), writeIt, re.what, re.threads.describe(), rankText(rho),
              readIt,
              partly ? "the refill follows the release of the threads that arrive, but nothing "
                       "orders the other reading threads' reads before that release"
                     : "nothing orders the refill after that read",
              sizes(*m)),
          {{re.loc, fmt::format("{} reads {} here", re.what, buffer)}});
  return false;
}

z3::expr BarrierProver::writesInto(const SyncEvent &x, const z3::expr &i, int64_t sigma,
                                   int64_t rho) {
  RankScope scope(*this, sigma);
  z3::expr f = fires(x, i);
  if (sigma < 0 || !x.multicast)
    return sigma == rho ? f : ctx_.bool_val(false);
  auto reached = reaches(x, i, ctx_.int_val(rho));
  // A mask that does not encode fills every CTA (more pairs, never fewer).
  return reached ? f && *reached : f;
}

} // namespace tilescope::detail
