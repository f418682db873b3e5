// The magnitudes a kernel's own float literals say its data is tested
// against (docs/simulator.md, "Inputs"): a widened input (Reference.h
// widenInput) gives some rows a scale past each, so that a kernel clamping
// an input or an intermediate at 100.0 (past the rows' usual 2^6) or
// flushing values below 2^-10 meets values on the far side.
#pragma once

#include "ir/Stmt.h"
#include "simulator/Program.h"

#include <set>

namespace tilescope::sim {

struct WideTargets {
  // Exponents e: some rows of each widened input are scaled by 2^e (where
  // the input's format holds it, Reference.cpp). Above the usual reach for
  // a literal L with |L| > 2^6: e = ceil(log2(2|L|)), so that most of such a
  // row lies past L; below it for 0 < |L| < 2^-6: e = floor(log2 |L|) - 20,
  // so that a sum of products with a row of that scale stays below L.
  std::set<int> exponents;
  // Whether 1 element in 16 is made exactly zero and (f32, bf16) 1 row in
  // 16 goes to 2^-24: the reward's second size only. At a threshold or
  // persistent size the error may be one term of a sum, or one element of
  // K = 1, which a row that small or a zero hid (hacks `loop-cta-product`
  // and `far-element` passed at seeds 1 and 2).
  bool edgeRows = true;
  bool empty() const { return exponents.empty(); }
};

// The literals, and the thresholds of affine tests (`x * 0.5 - 50.0 > 0.0`
// tests x against 100), that a comparison, a `min` or a `max` sets against
// an operand that is no constant, float scalar or size alone (a value of
// the data: a load, a register, a let of one); let-bound constants folded,
// and the sizes and float scalars of `args` (the run's) taken at their
// values, so that a threshold made of a size (`f32(K) * 2.0`) or a scalar
// (`eps * 1.0e9`) is reached at the size that runs it.
// A threshold past 2^55 or below 2^-36 (a sentinel such as -3.0e38, out of
// reach of a product of two inputs) is left out.
WideTargets wideTargets(const Kernel &kernel, const ArgValues &args);

} // namespace tilescope::sim
