// `tilescope ptx diff A.ptx B.ptx`: the condensed forms side by side
// (ptx/Diff.h). Each file must hold one kernel, or --kernel / --kernel-b
// names it.
#include "ptx/Diff.h"
#include "tools/Command.h"
#include "tools/PtxCommands.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/raw_ostream.h>

namespace tilescope::tool {

int runPtxDiff(const PtxInput &a, const PtxInput &b, const PtxasInputs &ptxas, bool json) {
  for (const PtxInput *in : {&a, &b})
    if (in->kernels.size() != 1) {
      llvm::errs() << in->module->file << ": error: " << in->kernels.size()
                   << " kernels; name one with --kernel (first file) or --kernel-b (second)\n";
      return kInputError;
    }
  ptx::KernelSummary sa = condenseWith(*a.module, *a.kernels[0], ptxas);
  ptx::KernelSummary sb = condenseWith(*b.module, *b.kernels[0], ptxas);
  std::vector<ptx::DiffRow> rows = ptx::diffSummaries(sa, sb);
  if (json)
    llvm::outs() << llvm::formatv("{0:2}", ptx::diffToJson(sa, sb, rows)) << "\n";
  else
    llvm::outs() << ptx::printDiff(sa, sb, rows);
  return kClean;
}

} // namespace tilescope::tool
