#include "check/KernelProofs.h"

#include "racecheck/StaticRaces.h"
#include "verifier/KernelLayouts.h"
#include "verifier/Resources.h"

namespace tilescope {
namespace {

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

struct Proof {
  const char *name;
  ProofOutcome (*run)(const Kernel &, Diagnostics &, const BarrierProofOptions &);
};
const Proof kProofs[] = {
    {"layouts", proveLayouts},
    {"barriers", proveBarriers},
    {"races", proveRaces},
};

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

KernelProofs runKernelProofs(const Kernel &kernel, Diagnostics &diag,
                             const BarrierProofOptions &options) {
  KernelProofs out;
  for (const Proof &p : kProofs)
    out.proofs.push_back({p.name, p.run(kernel, diag, options)});
  return out;
}

} // namespace tilescope
