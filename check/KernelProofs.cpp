#include "check/KernelProofs.h"

#include "ir/Budget.h"
#include "ir/DeviceScale.h"
#include "racecheck/StaticRaces.h"
#include "verifier/DeviceProtocol.h"
#include "verifier/PeerAccess.h"
#include "verifier/KernelLayouts.h"
#include "proof/ProofContext.h"
#include "verifier/Resources.h"
#include "proof/SolverBudget.h"
#include "verifier/WriteCoverage.h"

#include <fmt/format.h>

namespace tilescope {
namespace {

// Whether the command's budget ran out (ir/Budget.h).
bool budgetRanOut() {
  Budget *budget = activeBudget();
  return budget && (budget->expired() || budget->exceeded() != BudgetKind::None);
}

// Barrier findings of a proof that the budget cut short: the exhaustive
// fallback runs only where the symbolic proofs stayed open, and under a
// slowed clock that was the Blackwell GEMM, whose fallback then reported a
// deadlock the kernel is proved free of (the explorer runs roles that share
// an epilogue loop as one sequential process; docs/robustness.md). Such
// findings are undecided, and the proof ends as `budget`, never as a
// finding. (Race and coverage findings carry a Z3 model of the whole
// question and stand.)
template <typename Finding>
void demoteFindingsIfBudgetRanOut(std::vector<Finding> &findings,
                                  std::vector<std::pair<llvm::SMLoc, std::string>> &undecided,
                                  llvm::SMLoc (*where)(const Finding &)) {
  if (findings.empty() || !budgetRanOut())
    return;
  for (const Finding &f : findings)
    undecided.push_back(
        {where(f), fmt::format("{} [not confirmed: the budget ran out during this proof]",
                               f.message)});
  findings.clear();
}

// The resource check (verifier/Resources.h) reports with the layouts: both
// are about where a kernel's data lives and whether it fits.
ProofOutcome proveLayouts(const Kernel &k, Diagnostics &diag, const BarrierProofOptions &) {
  KernelLayoutReport report = proveKernelLayouts(k);
  ProofOutcome out;
  out.findings = reportKernelLayouts(report, diag) + verifyResources(k, diag);
  out.unknown = report.undecided;
  return out;
}

ProofOutcome proveBarriers(const Kernel &k, Diagnostics &diag, const BarrierProofOptions &options) {
  BarrierReport report = proveBarrierProtocols(k, options);
  demoteFindingsIfBudgetRanOut<ProtocolFinding>(report.findings, report.notProved,
                                                [](const ProtocolFinding &f) { return f.loc; });
  ProofOutcome out;
  out.findings = reportBarrierProtocols(report, diag);
  out.unknown = report.notProved;
  out.method = report.method;
  return out;
}

ProofOutcome proveRaces(const Kernel &k, Diagnostics &diag, const BarrierProofOptions &) {
  RaceReport report = checkStaticRaces(k);
  ProofOutcome out;
  out.findings = reportStaticRaces(report, diag);
  out.unknown = report.notChecked;
  return out;
}

ProofOutcome proveCoverage(const Kernel &k, Diagnostics &diag, const BarrierProofOptions &) {
  CoverageReport report = proveWriteCoverage(k);
  ProofOutcome out;
  out.findings = reportWriteCoverage(report, diag);
  out.unknown = report.notProved;
  out.method = report.method;
  return out;
}

// devices(N) kernels (verifier/DeviceProtocol.h); nothing to prove otherwise.
// A placement the problem reads otherwise is a finding of this proof, and so
// is an access outside the instance a placement gives the device it reaches
// (verifier/PeerAccess.h).
ProofOutcome proveDevices(const Kernel &k, Diagnostics &diag, const BarrierProofOptions &options) {
  PeerAccessReport places = checkPeerAccesses(k);
  DeviceProtocolReport report =
      checkDeviceProtocol(k, diag,
                          {places.disjointPuts, places.sameCtaGets, places.sameCtaPuts,
                           places.copyRaces});
  // The flag barriers' epochs (verifier/FlagEpochs.h): a flag reused
  // without one is a finding at the later use, with the earlier one noted.
  FlagEpochReport epochs = checkFlagEpochs(k, report.flagBarriers);
  for (const FlagEpochFinding &f : epochs.findings) {
    diag.error(f.loc, f.message);
    diag.note(f.earlier, "the earlier use of the slot");
  }
  for (const auto &[loc, why] : epochs.notProved)
    diag.warning(loc, "not proved: " + why);
  ProofOutcome out;
  out.findings = report.findings + unsigned(epochs.findings.size()) +
                 reportPeerAccesses(places, diag);
  for (const PlacementDisagreement &d : placementDisagreements(k, options.problemPlacements)) {
    diag.error(d.param->placement->loc, d.message);
    diag.note(d.param->loc, "parameter here");
    ++out.findings;
  }
  out.unknown = report.notProved;
  out.unknown.insert(out.unknown.end(), places.notProved.begin(), places.notProved.end());
  out.unknown.insert(out.unknown.end(), epochs.notProved.begin(), epochs.notProved.end());
  out.method = report.method;
  if (report.notProved.empty() && places.findings.empty() && places.notProved.empty() &&
      epochs.notProved.empty())
    out.method += "; " + places.summary();
  return out;
}

struct Proof {
  const char *name;
  const char *stage; // "... ran out during the barrier proofs of kernel k"
  ProofOutcome (*run)(const Kernel &, Diagnostics &, const BarrierProofOptions &);
};
const Proof kProofs[] = {
    {"layouts", "layout", proveLayouts},
    {"barriers", "barrier", proveBarriers},
    {"races", "race", proveRaces},
    {"coverage", "write-coverage", proveCoverage},
};
// Run after the others on devices(N) kernels only.
const Proof kDeviceProof = {"devices", "device-protocol", proveDevices};

// "file.tile:17:1"
std::string locationText(Diagnostics &diag, llvm::SMLoc loc) {
  unsigned buffer = loc.isValid() ? diag.sourceMgr().FindBufferContainingLoc(loc) : 0;
  if (!buffer)
    return "?";
  auto [line, col] = diag.sourceMgr().getLineAndColumn(loc, buffer);
  return fmt::format("{}:{}:{}",
                     diag.sourceMgr().getMemoryBuffer(buffer)->getBufferIdentifier().str(), line,
                     col);
}

} // namespace

Verdict KernelProofs::verdict() const {
  Verdict v = Verdict::Proved;
  for (const NamedProofOutcome &p : proofs)
    v = combine(v, p.outcome.verdict());
  return v;
}

const std::vector<std::string> &kernelProofNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Proof &p : kProofs)
      out.push_back(p.name);
    return out;
  }();
  return names;
}

namespace {

// `original` under the facts of its launch: a devices(N) kernel is proved
// with 0 <= devid < ndev, ndev = N, 1 <= N <= 8 (ir/DeviceScale.h); its
// statements are shared, not copied. Other kernels are proved as they are.
const Kernel &withLaunchFacts(const Kernel &original, Kernel &storage) {
  if (original.launch.devices.empty())
    return original;
  storage = original;
  appendDeviceFacts(storage);
  return storage;
}

// One proof as every caller runs it. Under the command's budget
// (ir/Budget.h) the proof names its stage, is not run once the budget has
// run out, and is `budget` when the budget ran out during it.
ProofOutcome runProof(const Proof &p, const Kernel &kernel, Diagnostics &diag,
                      const BarrierProofOptions &options) {
  Budget *budget = activeBudget();
  if (!budget)
    return p.run(kernel, diag, options);
  budget->setStage(fmt::format("the {} proofs of kernel {} ({})", p.stage, kernel.name,
                               locationText(diag, kernel.loc)));
  ProofOutcome o;
  if (!budget->expired())
    o = p.run(kernel, diag, options);
  // Z3 past its memory cap (the command's --max-memory-mb) or stopped by
  // the wall-time backstop gives up like an undecided query; that is the
  // budget, not an unknown (proof/SolverBudget.h).
  for (const auto &[loc, why] : o.unknown)
    noteSolverGaveUp(why);
  // expired() reads the clocks: a proof whose queries the budget cut short
  // reports them undecided without having polled it itself.
  o.budgetExceeded = budget->expired() || budget->exceeded() != BudgetKind::None;
  return o;
}

} // namespace

KernelProofs runKernelProofs(const Kernel &original, Diagnostics &diag,
                             const BarrierProofOptions &options) {
  Kernel storage;
  const Kernel &kernel = withLaunchFacts(original, storage);
  // This kernel's queries in a Z3 context of their own: the verdict must not
  // depend on the kernels proved before it in this process.
  ProofContextScope context;
  KernelProofs out;
  for (const Proof &p : kProofs)
    out.proofs.push_back({p.name, runProof(p, kernel, diag, options)});
  if (!kernel.launch.devices.empty())
    out.proofs.push_back({kDeviceProof.name, runProof(kDeviceProof, kernel, diag, options)});
  Budget *budget = activeBudget();
  if (budget && budget->exceeded() != BudgetKind::None)
    diag.error(kernel.loc, budget->message());
  return out;
}

std::optional<ProofOutcome> runKernelProof(std::string_view name, const Kernel &original,
                                           Diagnostics &diag, const BarrierProofOptions &options) {
  const Proof *proof = name == kDeviceProof.name ? &kDeviceProof : nullptr;
  for (const Proof &p : kProofs)
    if (name == p.name)
      proof = &p;
  if (!proof || (proof == &kDeviceProof && original.launch.devices.empty()))
    return std::nullopt;
  Kernel storage;
  return runProof(*proof, withLaunchFacts(original, storage), diag, options);
}

} // namespace tilescope
