// The one thread-index map: each thread builtin (laneid, warpid, wgid,
// tid_in_wg, wid_in_wg, threadIdx.x) and each thread axis of a layout is
// (t / divisor) % modulus of the thread's index t in its CTA, written once
// here. Its back ends: concrete values (threadIndexValue), CUDA text
// (threadIndexCuda, the emitter's), and Z3 terms (threadIndexZ3 in
// verifier/ProtoEncoding.h, the static race check's).
//
// Depends on ir/ only.
#pragma once

#include "ir/Expr.h"
#include "ir/Target.h"
#include "ir/WarpShape.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tilescope {

// (t / divisor) % modulus; modulus 0: no remainder is taken.
struct ThreadIndexMap {
  int64_t divisor = 1;
  int64_t modulus = 0;
};

// The map of a builtin; nothing for builtins that do not depend on the
// thread (blockIdx, clusterCtaIdx, ...).
std::optional<ThreadIndexMap> threadIndexMap(BuiltinKind b);
// The map of a layout's thread axis; nothing for the other axes.
std::optional<ThreadIndexMap> threadIndexMap(Axis a);

int64_t threadIndexValue(ThreadIndexMap m, int64_t t);
// The CUDA expression of the map over `t`, a non-negative int expression:
// shifts and masks (every divisor and modulus is a power of two), as
// "(t & 31)" or "((t >> 5) & 3)".
std::string threadIndexCuda(ThreadIndexMap m, std::string_view t);

// The builtins that depend on the thread, in the Axis enum's order of the
// thread axes.
inline constexpr std::array<BuiltinKind, 6> kThreadBuiltins = {
    BuiltinKind::threadIdx_x, BuiltinKind::laneid,    BuiltinKind::warpid,
    BuiltinKind::wgid,        BuiltinKind::tid_in_wg, BuiltinKind::wid_in_wg};

// A builtin whose value differs between the threads of one CTA.
bool isThreadBuiltin(BuiltinKind b);
// The value of thread builtin b for thread tx of the CTA (0 for the others).
int64_t threadBuiltinValue(BuiltinKind b, int64_t tx);
// A builtin on which the 32 lanes of every warp agree (warpid, wgid,
// wid_in_wg, and the builtins that do not depend on the thread).
bool isWarpUniformBuiltin(BuiltinKind b);

// Thread t's warp, lane and warpgroup (the builtins' maps).
int64_t warpOf(int64_t t);
int64_t laneOf(int64_t t);
int64_t warpgroupOf(int64_t t);
// "thread 40 (warp 1, lane 8)", for witnesses; `inside` (", CTA 3") is
// written inside the parentheses.
std::string threadName(int64_t t, std::string_view inside = {});

} // namespace tilescope
