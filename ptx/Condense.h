// The condensed form of a PTX kernel: the facts a person tuning a kernel
// reads off thousands of lines of PTX, in a form that fits a screen and that
// two kernels can be compared on (`tilescope ptx condense`, `ptx diff`).
//
// Per kernel: parameters; shared memory (static declarations; the dynamic
// size is a launch argument, so PTX only says whether there is any);
// registers declared per type (and ptxas's figures from a `-v` log); the CFG
// with its natural loops (nesting, trip count where the induction variable
// and its bound are visible); per loop a histogram of the instructions of its
// own body by class (Classify.h); and the recognised pipeline: mbarriers
// (initialised counts, rings cycled by a loop and their depth), waits with
// their parity, producer/consumer role branches on the thread index, wgmma
// commit/wait depth, setmaxnreg, and the epilogue.
//
// Depends on ptx/ (Ptx.h, Cfg.h, Values.h, Classify.h), ir/Expr.h and
// sync/BarrierSkeleton.h (thread sets only).
#pragma once

#include "ptx/Classify.h"
#include "ptx/Ptx.h"

#include <llvm/Support/JSON.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::ptx {

// Per class, per variant key: how many instructions.
using Histogram = std::map<InstrClass, std::map<std::string, int64_t>>;

struct LoopSummary {
  int id = -1, parent = -1, depth = 0;
  unsigned firstLine = 0, lastLine = 0, headerLine = 0;
  std::string trip; // "ceil((param_5 + 63) / 64)", "16", "unknown: ..."
  std::optional<int64_t> tripConstant;
  std::string inductionVar; // the register counting iterations, if found
  Histogram histogram;      // the loop's own body, not its inner loops
  int64_t spinWaits = 0;    // mbarrier polls folded into this loop
  int64_t instructions = 0;
};

struct MbarrierGroup {
  std::string base;  // "&ts_smem_raw + 106496"
  int64_t size = 0;  // consecutive barriers (8 bytes apart)
  std::string count; // the init count ("1", "%r5")
  unsigned line = 0;
};

struct WaitSite {
  unsigned line = 0;
  int loop = -1;
  std::string barrier, parity;
  int64_t distinctBarriers = 0; // over iterations of its loop: the ring depth
};

struct RoleBranch {
  unsigned line = 0;
  std::string condition;   // over threadIdx.x
  std::string granularity; // "warpgroup", "warp", "thread"
  std::string taken;       // the threads that take the branch
};

struct ExpectTx {
  unsigned line = 0;
  int loop = -1;
  std::string bytes;
};

struct Pipeline {
  std::vector<MbarrierGroup> mbarriers;
  int64_t mbarrierCount = 0;
  std::vector<WaitSite> waits;
  std::vector<ExpectTx> expectTx;
  std::optional<int64_t> stages; // the deepest ring a loop's waits cycle through
  std::string stagesHow;
  std::vector<RoleBranch> roles;
  std::vector<std::string> setmaxnreg; // "dec 40 (line 90)"
  int64_t wgmmaCommits = 0;
  std::vector<int64_t> wgmmaWaitDepths;
  std::vector<std::string> namedBarriers; // "bar.sync 1, 256 (line 40)"
  std::string epilogue;
};

struct PtxasFigures {
  std::optional<int64_t> registers, spillStores, spillLoads, stackFrame, sharedBytes, barriers;
  std::string source; // empty: a `ptxas -v` log; "cubin PATH" (Cubin.h)
};

struct KernelSummary {
  std::string name;
  unsigned line = 0;
  std::vector<Param> params;
  std::vector<std::pair<std::string, std::string>> directives;
  int64_t staticShared = 0;
  std::vector<std::string> sharedVariables; // "ts_smem_raw: extern, dynamic (align 1024)"
  bool dynamicShared = false;
  std::map<std::string, int64_t> registersByType; // "b32" -> 313
  int64_t registersDeclared = 0;
  std::optional<PtxasFigures> ptxas;
  int64_t instructions = 0, blocks = 0;
  std::vector<LoopSummary> loops; // real loops (spin waits folded), outer first
  LoopSummary outside;            // instructions outside every loop
  Pipeline pipeline;
  std::vector<std::string> notes;
};

// `ptxasLog`: the text of `ptxas -v` output (empty: none).
KernelSummary condense(const Module &m, const Function &kernel, const std::string &ptxasLog = "");

std::string printSummary(const KernelSummary &s);
llvm::json::Value summaryToJson(const KernelSummary &s);

// One line per histogram class: "tensor core: 4 wgmma.m64n64k16.f32.bf16.bf16".
std::vector<std::string> histogramLines(const Histogram &h);

} // namespace tilescope::ptx
