// Conditions over the thread index, as the lifting (Lift.h) evaluates them:
// guards joined and bound to one thread, and the post-dominators the
// control dependence of a block is computed from.
//
// Depends on ir/Expr.h and Cfg.h.
#pragma once

#include "ir/Expr.h"
#include "ptx/Cfg.h"

#include <vector>

namespace tilescope::ptx {

bool isTrue(const Expr &e);
bool isFalse(const Expr &e);
// Conjunction and disjunction of guards; null is "not executed".
Expr conj(const Expr &a, const Expr &b);
Expr disj(const Expr &a, const Expr &b);
// `e` with threadIdx.x (and laneid) bound to `tid`, folded where the thread
// decides; bounded depth.
Expr bindThread(const Expr &e, int64_t tid, int fuel = 64);
// Immediate post-dominators of the blocks, with a virtual exit at index
// blocks.size(); `succ` may hold that exit.
std::vector<int> postDominators(const Cfg &cfg, const std::vector<std::vector<int>> &succ);

// A block's control dependence: the branch (block `source`) that decides
// whether it runs, and which way (`taken`: the branch's guard holds, after
// `!`; a guarded `ret` / `exit` counts as a branch to the exit).
struct CdEdge {
  int source;
  bool taken;
};
std::vector<std::vector<CdEdge>> controlEdges(const Function &f, const Cfg &cfg);

} // namespace tilescope::ptx
