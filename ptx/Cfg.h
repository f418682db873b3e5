// The control-flow graph of a PTX function and its natural loops.
//
// Blocks start at labels and after branches, `ret` and `exit`; a guarded
// branch falls through as well. Loops are natural loops (a back edge to a
// block that dominates its source), those with one header merged; nesting by
// containment. A loop whose body does nothing but poll an mbarrier
// (try_wait / test_wait and the branch back) is a *spin wait*, reported as a
// wait rather than as a loop of the kernel.
//
// Depends on Ptx.h and Classify.h.
#pragma once

#include "ptx/Ptx.h"

#include <optional>
#include <string>
#include <vector>

namespace tilescope::ptx {

struct BasicBlock {
  size_t first = 0, last = 0; // instruction indices [first, last)
  std::string label;          // empty when the block follows a fall-through
  std::vector<int> succ, pred;
  int loop = -1; // innermost loop
  unsigned line = 0;
};

struct Loop {
  int header = -1;
  std::vector<int> blocks; // sorted
  std::vector<int> latches;
  int parent = -1;
  int depth = 1;
  bool spinWait = false;
  unsigned firstLine = 0, lastLine = 0;
  bool contains(int block) const;
};

struct Cfg {
  std::vector<BasicBlock> blocks;
  std::vector<int> blockOf; // per instruction
  std::vector<Loop> loops;  // outer loops before the loops they contain
  std::vector<int> idom;    // immediate dominator per block (-1: entry / unreachable)
  // What the graph could not model (an indirect branch): said in reports.
  std::vector<std::string> notes;
  // The innermost loop of an instruction, -1 outside loops.
  int loopOf(size_t instruction) const { return blocks[size_t(blockOf[instruction])].loop; }
  // The innermost enclosing loop that is not a spin wait.
  int realLoopOf(size_t instruction) const;
  bool dominates(int a, int b) const;
};

Cfg buildCfg(const Function &f);

} // namespace tilescope::ptx
