// Layout proofs for every problem size a kernel admits: a layout whose
// extents, strides and offsets are integer expressions over shape symbols
// (M, K, ...), on a buffer whose shape is symbolic too, under the kernel's
// `where` constraints. The expressions are the IR's own (ir/Expr.h); the
// proofs ask Z3 for symbol values and digits that break bounds, aliasing or
// replica consistency. A counterexample fixes the symbols, and the witness is
// then re-derived on the concrete layout with the concrete engine, so every
// symbolic finding is also a concrete one ("for M = 128, K = 2: ...").
//
// Products of symbols and digits are nonlinear integer arithmetic: Z3 decides
// many such queries (nlsat) but not all; what it cannot decide within the
// time-out comes back as undecided, never as legal.
//
// Depends on ir/ and LayoutVerifier.h; Z3 stays inside the .cpp.
#pragma once

#include "ir/Expr.h"
#include "verifier/LayoutVerifier.h"

#include <map>
#include <string>
#include <vector>

namespace tilescope {

struct SymbolicIter {
  Expr extent, stride;
  Axis axis = Axis::m;
};

struct SymbolicLayout {
  std::vector<SymbolicIter> shard, replica;
  std::vector<std::pair<Axis, Expr>> offset;
  // The layout for concrete symbol values, or nothing (with `error`) when an
  // expression does not evaluate or the result is not a valid layout.
  std::optional<Layout> concretize(const std::map<std::string, int64_t> &symbols,
                                   std::string *error) const;
};

// Evaluates an integer expression of literals and the given symbols.
std::optional<int64_t> evaluate(const Expr &e, const std::map<std::string, int64_t> &symbols);

// Proves, for every assignment of the shape symbols that satisfies
// `constraints` (each a boolean expression; symbols are integers >= 1), that
// `layout` admits `shape` and is in bounds, alias-free and replica-consistent.
// BufferInfo::memoryElements is ignored; `memoryElements` (default: the
// shape's element count) bounds m.
LayoutReport verifySymbolicLayout(const SymbolicLayout &layout, const std::vector<Expr> &shape,
                                  const std::vector<Expr> &constraints, const BufferInfo &buffer,
                                  const TargetInfo &target, const LaunchShape &launch,
                                  const Expr &memoryElements = nullptr,
                                  const VerifyOptions &options = {});

// Proves that the boolean `claim` holds for every assignment of its symbols
// (integers >= 1) that satisfies `constraints`. Returns nothing when proved;
// otherwise a counterexample, or an empty map with `undecided` set when Z3
// could not decide.
std::optional<std::map<std::string, int64_t>>
findCounterexample(const Expr &claim, const std::vector<Expr> &constraints, std::string *undecided,
                   unsigned timeoutMs = 10000);

// `K = 1, M = 1`
std::string formatSymbols(const std::map<std::string, int64_t> &values);

// One buffer of symbolic shape, for the overlap proof.
struct SymbolicBufferView {
  SymbolicLayout layout;
  std::vector<Expr> shape;
  BufferInfo info;
};

// Proves that two buffers of one space never occupy the same bits for any
// admitted sizes (see verifyNoOverlap for what "the same space" compares).
LayoutReport verifySymbolicNoOverlap(const SymbolicBufferView &a, const SymbolicBufferView &b,
                                     const std::vector<Expr> &constraints,
                                     const VerifyOptions &options = {});

} // namespace tilescope
