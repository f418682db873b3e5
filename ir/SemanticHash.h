// The semantic hash of a kernel: a hash of a normal form that forgets what
// does not change what the kernel computes, so that an agent's duplicates
// collapse to one cache entry (reward/RewardCache.h). The normal form
//  - drops the kernel's name, comments, spacing and parentheses (it is built
//    from the IR, which has none of them);
//  - puts the operands of commutative operators (+ * == != && ||) in one
//    order, the smaller printed operand first, and writes `a > b` as
//    `b < a` and `a >= b` as `b <= a` (no reassociation: floating-point `+`
//    is not associative);
//  - renames every local: a `let` is named after its (normalised) value, a
//    buffer or mbarrier array after its declaration (scope, dtype, shape,
//    layout, count) and its rank among identical declarations, a loop
//    variable after its depth — so renaming a local or a buffer does not
//    change the hash, and neither does splitting one name into two;
//  - sorts each run of consecutive `let`s and declarations (nothing else in
//    between) in dependency order, ties broken by their printed text, and
//    sorts the where clause's constraints.
// Parameter names and shape symbols are kept: the task's problem names them.
// Two kernels with the same hash compute the same thing; the converse does
// not hold (e.g. `i + 1 + 1` and `i + 2` differ).
//
// Depends on ir/ only.
#pragma once

#include "ir/Stmt.h"

#include <cstdint>

namespace tilescope {

// The kernel in normal form (named "_"); print() of it is the hashed text.
Kernel semanticNormalForm(const Kernel &kernel);

// xxHash64 of print(semanticNormalForm(kernel)).
uint64_t semanticHash(const Kernel &kernel);

} // namespace tilescope
