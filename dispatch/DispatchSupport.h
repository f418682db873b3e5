// Small builders shared by the dispatch implementations: expression
// arithmetic that folds literals as it goes, element indexing of an operand's
// region, and the "owner loop" of a register tile — the loop by which each
// thread visits the elements its layout gives it.
#pragma once

#include "dispatch/Dispatch.h"
#include "ir/Layout.h"

namespace tilescope::dispatch {

Expr lit(int64_t v);
Expr add(Expr a, Expr b);
Expr sub(Expr a, Expr b);
Expr mul(Expr a, Expr b);
Expr div(Expr a, Expr b);
Expr mod(Expr a, Expr b);
Expr lt(Expr a, Expr b);
Expr name(std::string n);
Expr builtin(BuiltinKind b);

// The element of `op`'s region at `coords` (one per kept dimension).
Expr elementAt(const Operand &op, const std::vector<Expr> &coords);
// The sub-region of `op` that starts at `coords` (per kept dimension) and
// spans `extents` (per kept dimension; dimensions of extent 0 become points).
Expr regionAt(const Operand &op, const std::vector<Expr> &coords,
              const std::vector<int64_t> &extents);

// The layout of a register tile split into what a thread's position decides
// and what its register slot decides. Only layouts whose iters on each axis
// occupy disjoint digit ranges (every preset and plain strided layout) are
// accepted: then digit k of the logical index is (axis / stride_k) % extent_k.
struct OwnerMap {
  struct Digit {
    Axis axis;
    int64_t extent, stride, radix; // radix: weight of the digit in the flat index
  };
  std::vector<Digit> threadDigits, slotDigits;
  int64_t slots = 1;
  std::vector<std::pair<Axis, int64_t>> covered; // thread axes and how far they reach
  std::vector<int64_t> shape;
};
// The map of a register layout over `shape`, or why it has none.
std::optional<OwnerMap> ownerMap(const Layout &layout, const std::vector<int64_t> &shape,
                                 std::string *why);

// The expression of a thread axis in terms of the builtins.
Expr axisExpr(Axis a);

// `for j in 0 .. slots unroll { body(coords) }`, guarded so that threads
// outside the layout's reach do nothing. `coords` are the logical coordinates
// (one per dimension of the tile) of the element slot j holds in this thread.
Block ownerLoop(const OwnerMap &map, DispatchState &state,
                const std::function<Block(const std::vector<Expr> &coords)> &body,
                int64_t scopeThreads, ExecScope scope);

// A loop spreading `count` elements over the threads of the scope:
// flat = i * threads + t for t the thread's index in the scope.
Block spreadLoop(int64_t count, const std::vector<int64_t> &shape, ExecScope scope,
                 int64_t scopeThreads, DispatchState &state,
                 const std::function<Block(const std::vector<Expr> &coords)> &body);

// For a layout that gives some elements to several threads of the scope
// (replicated): the condition that this thread is the first of them (its
// index in the scope has no digit outside the layout's thread digits), so
// that a store is issued once an element. Null when nothing is replicated or
// the digits cannot be placed on the scope's thread index.
Expr firstReplica(const OwnerMap &map, ExecScope scope, int64_t scopeThreads);

// The thread's index inside its execution scope.
Expr threadInScope(ExecScope scope);

} // namespace tilescope::dispatch
