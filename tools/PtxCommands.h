// What the actions of `tilescope ptx` share (CmdPtx*.cpp).
#pragma once

#include "ir/Diagnostics.h"
#include "ptx/Condense.h"
#include "ptx/Lift.h"
#include "ptx/Ptx.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::tool {

struct PtxInput {
  PtxInput() : diag(sourceMgr) {}
  PtxInput(const PtxInput &) = delete;
  PtxInput &operator=(const PtxInput &) = delete;
  // Reads and parses FILE and picks its kernels (all, or the one named).
  // False after the diagnostics.
  bool load(const std::string &path, const std::string &kernel);

  llvm::SourceMgr sourceMgr;
  Diagnostics diag;
  std::optional<ptx::Module> module;
  std::vector<const ptx::Function *> kernels;
};

// ptxas's figures given on the command line: a `ptxas -v` log and cubins
// (`--cubin`, each read by ptx/Cubin.h: kernel -> figures, with its path).
struct PtxasInputs {
  std::string log;
  std::vector<std::pair<std::string, std::map<std::string, ptx::PtxasFigures>>> cubins;
};
// ptx::condense with the figures of the log and of the cubins that hold the kernel.
ptx::KernelSummary condenseWith(const ptx::Module &m, const ptx::Function &kernel,
                                const PtxasInputs &ptxas);

int runCondense(const PtxInput &in, const PtxasInputs &ptxas, bool json);
int runPtxDiff(const PtxInput &a, const PtxInput &b, const PtxasInputs &ptxas, bool json);
int runPtxCheck(PtxInput &in, const std::map<std::string, int64_t> &tmaBoxBytes,
                const std::vector<ptx::LiftOptions::LowerBound> &assumptions, bool protocolOnly,
                bool json, bool printSkeleton = false);

} // namespace tilescope::tool
