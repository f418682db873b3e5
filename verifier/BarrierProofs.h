// Barrier-protocol proofs: on a kernel's synchronisation skeleton
// (BarrierSkeleton.h), with loop counters and shape symbols symbolic under
// the `where` clause, Z3 proves that
//  - every mbarrier phase receives exactly `count` arrivals (no over-arrival,
//    every phase completes) and as many transaction bytes as expect_tx
//    announced (TMA box bytes from the region shapes and dtypes);
//  - every wait refers to one phase consistently (its parity tracks the
//    phase: no aliasing with a phase two behind or ahead), that phase
//    completes, and no cycle of waits and arrivals blocks (deadlock);
//  - pipeline stages are read only after the phase that filled them
//    (read-after-write) and refilled only after every reader of the previous
//    contents released them (write-after-read);
// and checks structurally: mbarrier init before use and made visible (fence +
// cta.sync), no re-init of a live barrier; CTA and named barriers reached by
// all participants, named-barrier thread counts multiples of 32 that agree;
// wgmma fence / commit / wait discipline; tcgen05 alloc/dealloc by the same
// warp and wait_ld after tcgen05.ld.
//
// Loops take part in the symbolic proofs when their bounds do not depend on
// outer loop variables (a nest is one loop of flattened iterations) and the
// barrier (or stage) indices are `(i + c) % S` or constant in the iteration;
// other shapes are reported as not proved, never as correct. Where a proof
// is out of reach, the exhaustive fallback (BarrierFallback.h) checks every
// interleaving at concrete sizes and says so.
//
// Depends on ir/ and verifier/; Z3 stays inside the .cpp files.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Placement.h"
#include "ir/Stmt.h"
#include "sync/BarrierSkeleton.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tilescope {

enum class ProtocolViolationKind : uint8_t {
  Deadlock,            // a wait whose phase never completes, or a cycle of waits
  ParityAliasing,      // a wait that can be satisfied by another phase
  OverArrival,         // more arrivals than the count in one phase
  PhaseNeverCompletes, // fewer arrivals than the count in one phase
  TxBytesMismatch,     // expect_tx bytes != bytes delivered in the phase
  InitOrder,           // use before init / init not made visible / re-init
  Divergence,          // a CTA barrier not reached by every thread
  NamedBarrierThreads, // a named barrier's thread count
  WgmmaDiscipline,
  Tcgen05Discipline,
  ReadBeforeFilled,   // read-after-write on a pipeline stage
  OverwriteWhileRead, // write-after-read on a pipeline stage
  IndexOutOfRange,    // an mbarrier array element that does not exist
  ClusterLifetime,    // a peer CTA reached before it started (ClusterLifetime.h)
};
std::string_view protocolViolationName(ProtocolViolationKind k);

struct ProtocolFinding {
  ProtocolViolationKind kind;
  llvm::SMLoc loc;
  std::string message; // includes the witness
  std::vector<std::pair<llvm::SMLoc, std::string>> notes;
  // True when Z3 found the witness among all sizes and iterations; false for
  // a structural (size-independent) check.
  bool symbolic = false;
  // Found by the exhaustive fallback at the sizes its message names.
  bool exhaustive = false;
};

struct ProtocolResult {
  std::string property; // "full: arrivals per phase"
  // "proved for all sizes", "checked structurally", or "not proved: <why>"
  std::string status;
  bool proved = false;
};

struct BarrierReport {
  std::vector<ProtocolFinding> findings;
  std::vector<ProtocolResult> results;
  std::vector<std::pair<llvm::SMLoc, std::string>> notProved;
  // Obligations the proofs left open that the exhaustive fallback decided
  // at the sizes `method` names (warnings: not proved for all sizes).
  std::vector<std::pair<llvm::SMLoc, std::string>> checkedExhaustively;
  // How the protocol was decided: "proved for all sizes", "checked
  // exhaustively at K = 512, M = 128 (not proved for all sizes)", "not proved",
  // or "not checked: <why>" when the fallback could not run.
  std::string method = "proved for all sizes";
  bool clean() const { return findings.empty(); }
};

struct BarrierProofOptions {
  unsigned timeoutMs = 4000;
  // Sizes for the exhaustive fallback (`tilescope check --args`, or a
  // `// problem:` annotation's sizes); empty: the smallest admitted sizes that
  // run every ring twice (FallbackSizes.h), which also complete sizes that
  // leave symbols out.
  std::map<std::string, int64_t> sizes;
  // Where `sizes` came from, named after them in messages when not empty
  // ("the sizes of the `// problem:` annotation").
  std::string sizesFrom;
  size_t stateCap = 200000;
  // What the kernel's `// problem:` annotation reads of its tensors'
  // placements over the devices (ir/Placement.h), for the devices proof.
  std::vector<ProblemPlacement> problemPlacements;
};

BarrierReport proveBarrierProtocols(const Kernel &kernel, const BarrierProofOptions &options = {});
BarrierReport proveBarrierProtocols(const BarrierSkeleton &skeleton,
                                    const BarrierProofOptions &options = {});

// Errors into `diag` (one per finding, with notes), warnings for what could
// not be proved; returns the number of findings.
unsigned reportBarrierProtocols(const BarrierReport &report, Diagnostics &diag);

// For `tilescope check`: prove and report; returns the number of findings.
unsigned verifyBarrierProtocols(const Kernel &kernel, Diagnostics &diag);
unsigned verifyBarrierProtocols(const Kernel &kernel, Diagnostics &diag,
                                const BarrierProofOptions &options, std::string *method);

} // namespace tilescope
