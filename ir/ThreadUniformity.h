// Which threads of a CTA agree on the value of an expression: the one map
// from a thread index to the thread builtins (laneid, warpid, wgid,
// tid_in_wg, wid_in_wg, threadIdx.x), and the uniformity of an expression
// over them decided from its values, not from the builtins it names.
// `tid_in_wg < 64` names a per-thread builtin, yet every warp's 32 lanes
// agree on it (32 divides 64): it is warp-uniform; `tid_in_wg < 48` is not
// (lanes 0-15 and 16-31 of warp 1 differ).
//
// Depends on ir/ only.
#pragma once

#include "ir/Expr.h"
#include "ir/Intrinsics.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tilescope {

// A builtin whose value differs between the threads of one CTA.
bool isThreadBuiltin(BuiltinKind b);
// The value of thread builtin b for thread tx of the CTA (0 for the others).
int64_t threadBuiltinValue(BuiltinKind b, int64_t tx);

// When `e` is a function of the thread builtins and literals only: the
// coarsest group (Warp, Warpgroup, or Grid when every thread agrees) whose
// threads all agree on its value, evaluated for every thread of a CTA of
// `threads` threads; Thread when two lanes of some warp differ. Nothing
// when e reads anything else (a loop variable, a size, a load,
// elect_sync()) or cannot be evaluated, or for more than 1024 threads.
std::optional<Convergence> threadUniformity(const Expr &e, int64_t threads);

// A witness of divergence: two threads of one group of `groupSize` (32 for
// a warp, 128 for a warpgroup, `threads` for the CTA) on which `e`, a
// function of the thread builtins, differs, as "thread 32 (warp 1, lane 0)
// gives 1, thread 48 (warp 1, lane 16) gives 0". Nothing when e cannot be
// evaluated or every group agrees.
std::optional<std::string> divergenceWitness(const Expr &e, int64_t threads, int64_t groupSize);

} // namespace tilescope
