// The proofs of one kernel, in order, each with its verdict: the layout
// proofs (KernelLayouts.h) with the resource limits (Resources.h), the
// barrier-protocol proofs with their exhaustive fallback (BarrierProofs.h),
// the static races (StaticRaces.h), the write coverage of the outputs
// (WriteCoverage.h). Each reports its findings as errors and every
// obligation it could neither prove nor check as a "not proved" / "not
// checked" warning into the diagnostics; the outcome counts both, so that an
// obligation left open makes the kernel `unknown` (ir/Verdict.h), never
// `proved`.
//
// Depends on ir/, verifier/ and racecheck/; never on the command line.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Stmt.h"
#include "ir/Verdict.h"
#include "verifier/BarrierProofs.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

struct NamedProofOutcome {
  std::string name; // "layouts", "barriers", "races", "coverage", "devices"
  ProofOutcome outcome;
};

struct KernelProofs {
  std::vector<NamedProofOutcome> proofs;
  Verdict verdict() const;
};

// The names of the proofs runKernelProofs runs, in order.
const std::vector<std::string> &kernelProofNames();

// Runs every proof on a well-formed kernel (ir/Checker.h passed).
KernelProofs runKernelProofs(const Kernel &kernel, Diagnostics &diag,
                             const BarrierProofOptions &options = {});

// Runs the one proof `name` (one of kernelProofNames(), or "devices" on a
// devices(N) kernel) exactly as runKernelProofs runs it — under the launch's
// facts and the active budget — in the caller's Z3 context. The reward's
// static stages (reward/StaticStages.cpp) call it, so that `check` and the
// reward cannot decide an obligation differently. nullopt: no such proof
// (or "devices" on a kernel without devices(N)).
std::optional<ProofOutcome> runKernelProof(std::string_view name, const Kernel &kernel,
                                           Diagnostics &diag,
                                           const BarrierProofOptions &options = {});

} // namespace tilescope
