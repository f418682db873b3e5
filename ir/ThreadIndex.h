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

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tilescope {

constexpr int64_t kThreadsPerWarp = 32;
constexpr int64_t kThreadsPerWarpgroup = 128;

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

// A builtin whose value differs between the threads of one CTA.
bool isThreadBuiltin(BuiltinKind b);
// The value of thread builtin b for thread tx of the CTA (0 for the others).
int64_t threadBuiltinValue(BuiltinKind b, int64_t tx);

} // namespace tilescope
