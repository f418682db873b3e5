// Threshold sizes of the simulate stage (docs/reward.md, "Threshold
// sizes"): a kernel may compute the right values only on one side of a
// condition that reads nothing but the sizes and the CTA index (`if K <=
// 4096`, `for k in 0 .. min(K, 4096)`, `if blockIdx.x < 40`, `if K % 4096 !=
// 0`), and the sampled sizes (SimSizes.h) may all lie on that side.
//
// Every decision of the kernel over shape symbols, blockIdx and constants
// only — a comparison or a logical `&&`/`||` (outcomes: true, false), a
// min/max (the first argument below or above the second), a `%` (remainder
// zero or not), a `/` (quotient zero or not) — in a let, a loop bound or
// step, a condition, a subscript or a call argument, with the lets it reads
// substituted and under the size-only conditions of the `if`s around it, is
// evaluated at the sampled sizes (in every CTA of their grids, or a spread
// of 16 per dimension past 4096 CTAs; sizes run on sampled CTAs count only
// for decisions that do not read blockIdx). Since session 25 also a node
// reading a thread index beside blockIdx (a thread's global index, at every
// thread) and an equality of a loop variable with a constant (in some
// iteration); reward/ThresholdDecisions.h collects them all. For each outcome no sampled size
// gives, Z3 looks for the admitted size with the least sum of symbols (each
// at most 2^20) at which the decision takes it under its conditions, then
// one symbol it reads doubled where the outcome still holds there; that
// size is added (role "threshold", the decision's location and outcome as
// its reason), and it counts for every decision it flips. At most
// kMaxThresholdSizes are added. An outcome the where clause rules out needs
// no size; one Z3 finds only past 2^20, or cannot decide, or past the budget
// of sizes, is unreached: the stage is then `unknown`, never a pass.
//
// A float scalar compared with a literal (`if eps < 0.05`), or in a min/max
// with one, the lets it reads substituted, gets two threshold sizes: the
// edge size (the small one where there is none; since session 25, on its
// widened inputs) with the scalar pinned at half the literal and at twice
// it (a positive literal, or a negative one for a scalar drawn with either
// sign), whatever the draws give.
//
// Internal to reward/.
#pragma once

#include "reward/SimSizes.h"

#include <llvm/Support/SMLoc.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tilescope::reward_detail {

inline constexpr size_t kMaxThresholdSizes = 4;
inline constexpr int64_t kMaxThresholdSymbol = int64_t{1} << 20;

struct ThresholdPlan {
  std::vector<SimSize> sizes;         // role "threshold"
  std::vector<std::string> reasons;   // per size: the outcome it gives, where
  // Per size: float scalars pinned for it (the others are drawn as usual).
  std::vector<std::map<std::string, double>> floats;
  std::vector<std::string> unreached; // outcomes no added size gives, and why
};

// The threshold sizes after `sampled`; `where` prints a location
// ("file:line:col"); `signedScalars` are the float scalars the task takes
// with either sign (their negative literals are pinned too).
ThresholdPlan thresholdSizes(const Kernel &kernel, const std::vector<SimSize> &sampled,
                             const std::function<std::string(llvm::SMLoc)> &where,
                             const std::set<std::string> &signedScalars = {});

} // namespace tilescope::reward_detail
