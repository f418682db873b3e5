// setmaxnreg's ordering rule (PTX ISA, "setmaxnreg"): after a warpgroup
// executes a setmaxnreg, all of its warps must synchronise explicitly before
// it executes another one. A setmaxnreg in a loop reaches itself again on
// the next iteration; two in sequence reach each other. Either needs, on
// every path between the two, a barrier that all four warps of the
// warpgroup execute: `cta.sync()`, `cluster.sync()`, `barrier.sync(id,
// ...)` or `barrier.cluster.wait()` (the named barrier's own proof decides
// that its generation completes; here it only has to be executed by the
// whole warpgroup).
//
// The walk follows the program: an `if` joins the states of its branches
// (a pending setmaxnreg on either path stays pending), and a loop body is
// walked twice, the second time from the join of the state before the loop
// and after one iteration, which is the state at the back edge. Which
// warpgroups execute a statement is decided from the conditions around it
// by thread indices alone (ir/ThreadIndex.h); a condition over sizes or
// loop variables may or may not hold: a setmaxnreg under it may run, a
// barrier under it does not count as synchronising.
//
// Internal to verifier/ (Resources.cpp runs it with the resource check).
#pragma once

#include "ir/Stmt.h"
#include "verifier/Resources.h"

#include <vector>

namespace tilescope {

std::vector<ResourceFinding> checkSetmaxnregOrder(const Kernel &kernel);

} // namespace tilescope
