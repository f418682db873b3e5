// The barrier proofs of pipeline stages (BarrierProver.h): a stage read
// after it was filled, refilled after it was released.
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

void BarrierProver::checkStages() {
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
  bool any = false, checked = false;
  for (const auto &[buffer, ws] : writes) {
    auto rit = reads.find(buffer);
    if (rit == reads.end())
      continue;
    for (const Use &x : ws)
      for (const Use &r : rit->second) {
        const SyncEvent &xe = sk_.events[x.event], &re = sk_.events[r.event];
        if (xe.role == re.role || loopClass_[size_t(xe.loop)] != loopClass_[size_t(re.loop)])
          continue;
        checked = true;
        any |= !readAfterWrite(buffer, x.event, x.stage, r.event, r.stage);
        any |= !writeAfterRead(buffer, x.event, x.stage, r.event, r.stage);
      }
  }
  if (checked)
    result("pipeline stages (read after fill, refill after release)", !any,
           any ? "violated" : "proved for all sizes");
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
  bool partly =
      some != kNoPath && ProtoEncoder::value(*m, iR) <= ProtoEncoder::value(*m, iX) + some;
  finding(ProtocolViolationKind::OverwriteWhileRead, xe.loc,
          fmt::format(
              "overwrite while read: {} by {} refills {} stage {} at {} while {} by {} may still "
              "read its previous contents (from {}): {} (for {})",
              xe.what, xe.threads.describe(), buffer, ProtoEncoder::value(*m, s),
              iterationText(*m, xe, iX), re.what, re.threads.describe(), iterationText(*m, re, iR),
              partly ? "the refill follows the release of the threads that arrive, but nothing "
                       "orders the other reading threads' reads before that release"
                     : "nothing orders the refill after that read",
              sizes(*m)),
          {{re.loc, fmt::format("{} reads {} here", re.what, buffer)}});
  return false;
}

} // namespace tilescope::detail
