// The decisions of a kernel body that threshold sizes are sought for
// (reward/ThresholdSizes.h, docs/reward.md "Threshold sizes"): comparisons,
// logical operators, min/max, quotients and remainders over shape symbols,
// blockIdx and constants, loop decisions over their loops' ends, a thread's
// global index (since session 25), and float scalars against literals.
//
// Internal to reward/.
#pragma once

#include "ir/Stmt.h"

#include <llvm/Support/SMLoc.h>

#include <array>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tilescope::reward_detail {

// A decision over sizes and CTA indices: two exclusive outcomes, reached
// under `path` (the size-only conditions of the enclosing ifs; null: always).
struct Decision {
  Expr outcome[2];
  std::string name[2];
  Expr path;
  llvm::SMLoc loc;
  bool readsCta = false;        // the outcomes or the path read blockIdx
  bool outcomeReadsCta = false; // the outcomes do
  std::array<bool, 2> needed{true, true}; // the outcomes a size must give
  bool farSide = true; // a symbol doubled past the threshold (farSide)
  bool sampled = false; // its size runs CTA 0 and a CTA that takes the outcome
  bool readsThread = false; // a thread's global index (threadIndexDecision)
  // A loop variable the outcomes read (an equality with a constant, not
  // monotone in it): taken in some iteration `begin + i * step < end`.
  struct Loop {
    std::string var;
    Expr begin, end;
    int64_t step = 1;
  };
  std::optional<Loop> loop;
  // Loops of constant bounds (unrolled fragment loops) whose variables the
  // outcomes read beside a thread index or blockIdx: taken for some value of
  // each (enumerated, and unknowns of Z3; since session 26).
  std::vector<Loop> fixedLoops;
};

// A float scalar compared with a positive literal.
struct FloatDecision {
  std::string scalar, text;
  double literal = 0; // the scalar's value at the crossing, times factor^power
  llvm::SMLoc loc;
  // A size the scalar is multiplied (power 1) or divided (power -1) by
  // (`eps * f32(H) < 100.0`; since session 25): the crossing is literal /
  // factor^power at the size the pins run at.
  Expr factor;
  int power = 0;
};

bool isCta(BuiltinKind b);

struct KernelDecisions {
  std::vector<Decision> decisions;
  std::vector<FloatDecision> floatDecisions;
};

// The decisions of `kernel`'s body, lets substituted, over `symbols` (its
// shape symbols); `floatScalars` are its float scalar parameters,
// `signedScalars` those the task takes with either sign.
KernelDecisions collectDecisions(const Kernel &kernel, const std::set<std::string> &symbols,
                                 const std::set<std::string> &floatScalars,
                                 const std::set<std::string> &signedScalars);

} // namespace tilescope::reward_detail
