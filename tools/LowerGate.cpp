#include "tools/LowerGate.h"

#include "check/KernelProofs.h"
#include "tools/Command.h"
#include "tools/ProblemSizes.h"

#include <llvm/Support/raw_ostream.h>

#include <string>
#include <vector>

namespace tilescope::tool {

int gateLowering(CommandInput &in, llvm::StringRef kernelName, bool allowUnknown,
                 llvm::StringRef command) {
  llvm::StringRef source;
  if (in.sourceMgr.getNumBuffers() > 0)
    source = in.sourceMgr.getMemoryBuffer(1)->getBuffer();
  unsigned findings = 0;
  Verdict verdict = Verdict::Proved;
  std::vector<std::string> unknownKernels;
  for (const Kernel &k : in.module->kernels) {
    if (!kernelName.empty() && k.name != kernelName)
      continue;
    BarrierProofOptions options;
    options.problemPlacements = problemPlacementsOf(k, source);
    unsigned errorsBefore = in.diag.errorCount();
    if (auto sizes = problemSizesOf(k, source, in.diag); sizes && !sizes->empty()) {
      options.sizes = std::move(*sizes);
      options.sizesFrom = kProblemSizesFrom;
    }
    if (in.diag.errorCount() != errorsBefore)
      return kInputError;
    KernelProofs proofs = runKernelProofs(k, in.diag, options);
    for (const NamedProofOutcome &p : proofs.proofs)
      findings += p.outcome.findings;
    Verdict v = proofs.verdict();
    if (v == Verdict::Unknown)
      unknownKernels.push_back(k.name);
    verdict = combine(verdict, v);
  }
  switch (verdict) {
  case Verdict::Proved:
    return kClean;
  case Verdict::Finding:
    llvm::errs() << "tilescope: error: not " << command << "ing: `tilescope check` has " << findings
                 << " finding" << (findings == 1 ? "" : "s") << " (above)\n";
    return kFindings;
  case Verdict::Budget:
    llvm::errs() << "tilescope: error: not " << command
                 << "ing: `tilescope check` ran out of its budget\n";
    return kBudget;
  case Verdict::Unknown:
    break;
  }
  std::string names;
  for (const std::string &n : unknownKernels)
    names += (names.empty() ? "" : ", ") + n;
  if (allowUnknown) {
    llvm::errs() << "tilescope: warning: " << command << "ing " << names
                 << " though `tilescope check` did not prove it (unknown; --allow-unknown)\n";
    return kClean;
  }
  llvm::errs() << "tilescope: error: not " << command << "ing: `tilescope check` could not prove "
               << names
               << " (unknown: the warnings above say what is open); pass --allow-unknown to "
               << command << " it anyway\n";
  return kUnknown;
}

} // namespace tilescope::tool
