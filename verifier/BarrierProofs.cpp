#include "verifier/BarrierProofs.h"
#include "verifier/BarrierProver.h"

#include "ir/Affine.h"
#include "ir/ConcreteEval.h"
#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "verifier/AsyncDrain.h"
#include "verifier/BarrierFallback.h"
#include "proof/LeastWitness.h"
#include "proof/LinearPrecheck.h"
#include "proof/ProtoEncoding.h"
#include "proof/SharedContext.h"
#include "proof/SolverBudget.h"
#include "verifier/TmemLanes.h"
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
  case ProtocolViolationKind::ClusterLifetime:
    return "cluster lifetime";
  }
  return "?";
}

} // namespace tilescope

namespace tilescope::detail {

BarrierReport BarrierProver::run() {
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
    // (clusterTerms); the graph links the CTAs where it can enumerate their
    // ranks (clusterGraphModelled, BarrierCluster.cpp).
    std::string crossCta = crossCtaBarriers(), clusterWhy;
    bool crossOpen = !crossCta.empty() && (!unmodelled.empty() || !clusterGraphModelled(clusterWhy));
    if (!unmodelled.empty() || crossOpen) {
      std::string name = unmodelled.empty() ? crossCta : unmodelled;
      std::string why =
          unmodelled.empty()
              ? fmt::format("{} receive arrivals or copies from other CTAs of the cluster, and "
                            "the ordering graph does not link the CTAs: {}",
                            crossCta, clusterWhy)
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
    bool phasesBroken =
        std::any_of(report_.findings.begin(), report_.findings.end(), [](const ProtocolFinding &f) {
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
      // After the others: where they found something, an arrival running
      // ahead is usually its consequence (a wait removed shows as aliasing).
      if (report_.findings.empty())
        checkArrivalOrder();
    }
  } catch (const z3::exception &e) {
    report_.notProved.push_back({llvm::SMLoc(), fmt::format("Z3 failed: {}", e.msg())});
  }
  finishStructural();
  return std::move(report_);
}

void BarrierProver::finishStructural() {
  // Many queries ask whether a simpler case holds (a pattern, a constant
  // distance, an equality of trip counts), and an undecided one is read as
  // "no". A proof for all sizes cannot rest on such an answer: it stays
  // open (the exhaustive check may still decide it at concrete sizes).
  if (gaveUp_)
    report_.notProved.push_back(
        {llvm::SMLoc(), fmt::format("a query the symbolic proof rests on was left undecided (Z3 "
                                    "gave up: {})",
                                    gaveUpReason_)});
  checkInit();
  checkCtaBarriers();
  checkWgmma();
  checkTcgen05();
  // Asynchronous copies of shared memory retired before the CTA exits
  // (AsyncDrain.h).
  for (ProtocolFinding &f : checkAsyncDrainedAtExit(original_))
    finding(f.kind, f.loc, std::move(f.message), std::move(f.notes), false);
  for (const auto &u : sk_.unsupported)
    report_.notProved.push_back(u);
  if (exhaustiveFallbackForced()) {
    report_.findings.erase(std::remove_if(report_.findings.begin(), report_.findings.end(),
                                          [](const ProtocolFinding &f) { return f.symbolic; }),
                           report_.findings.end());
    report_.notProved.push_back(
        {llvm::SMLoc(), "the exhaustive check is forced (TILESCOPE_FORCE_FALLBACK=1, a testing "
                        "aid): the symbolic proofs' verdict is set aside"});
  }
  if (!report_.notProved.empty())
    runExhaustiveFallback(original_, opt_, report_);
  // Named-barrier generations stay open whatever the fallback found: it
  // runs each role as one process, so it cannot see a role's warps split
  // between two generations. Cluster lifetimes too: it runs no CTA's exit
  // against its peers' operations.
  for (auto [title, open] : {std::pair{"named barrier generations", &namedOpen_},
                             std::pair{"cluster lifetime", &clusterOpen_}}) {
    if (open->empty())
      continue;
    // What the fallback decided stays said, as part of an open verdict.
    for (auto &[loc, text] : report_.checkedExhaustively)
      report_.notProved.push_back({loc, fmt::format("{}: {}", report_.method, text)});
    report_.checkedExhaustively.clear();
    if (report_.findings.empty()) {
      const std::string &why = open->front().second;
      report_.method = llvm::StringRef(why).startswith(title)
                           ? fmt::format("not proved ({})", why)
                           : fmt::format("not proved ({}: {})", title, why);
      result(title, false, "not proved: " + why);
    }
    for (auto &n : *open)
      report_.notProved.push_back(std::move(n));
    open->clear();
  }
}

} // namespace tilescope::detail

namespace tilescope {

BarrierReport proveBarrierProtocols(const BarrierSkeleton &skeleton,
                                    const BarrierProofOptions &options) {
  return detail::BarrierProver(skeleton, options).run();
}

BarrierReport proveBarrierProtocols(const Kernel &kernel, const BarrierProofOptions &options) {
  BarrierSkeleton skeleton = extractBarrierSkeleton(kernel);
  BarrierReport report = proveBarrierProtocols(skeleton, options);
  // The lane window of tcgen05.ld / tcgen05.st needs the TMEM buffers'
  // layouts, which the skeleton does not carry (TmemLanes.h).
  proveTmemLaneWindows(kernel, skeleton, options.timeoutMs, report);
  return report;
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
