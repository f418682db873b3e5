// Internal to the write-coverage proof (WriteCoverage.cpp): the digits of
// executor variables a store's region start is written in, and the small
// expression helpers the proof builds its terms with. Depends on ir/ and the
// barrier skeleton only.
#pragma once

#include "ir/Expr.h"
#include "ir/Printer.h"
#include "sync/BarrierSkeleton.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tilescope::coverage {

// The executor variable a thread index reads.
inline constexpr const char *kThread = "thread";

// `(v % H) / L` of an executor variable v (a loop variable, blockIdx.x/y/z,
// or the thread): the digit of v between the place values L and H (H null:
// no upper place). `v` itself is L = 1, H = null.
struct Digit {
  std::string var;
  Expr L, H;
  std::string key() const { return var + "|" + print(L) + "|" + (H ? print(H) : "-"); }
};

// const + sum of coef * digit, exact for non-negative operands.
struct Linear {
  Expr constant;
  std::vector<std::pair<int64_t, Digit>> terms;
};

Expr add(const Expr &a, const Expr &b);
Expr mul(const Expr &a, const Expr &b);
Expr num(int64_t v);
// "blockIdx.x", "blockIdx.y", "blockIdx.z" for d = 0, 1, 2.
const char *blockName(int d);

// The digit a builtin reads: blockIdx.x/y/z whole, a thread index's digit of
// the thread (ir/ThreadIndex.h); nothing for others.
std::optional<Digit> builtinDigit(BuiltinKind b);
// l times c.
Linear scale(Linear l, int64_t c);
// The least value of digit d over the threads of `threads` (0 for other
// variables): digits are read off x above it.
int64_t digitFloor(const Digit &d, const ThreadSet &threads);
// Whether e reads a variable of `vars` or a builtin.
bool hasUnknown(const Expr &e, const std::set<std::string> &vars);
// The offset of the executing thread inside its group of `lowest`'s place
// (the lowest digit the region reads): the first executing thread of every
// group, when it is the same in each; nothing otherwise.
std::optional<int64_t> firstMemberOffset(const ThreadSet &threads, const Digit &lowest);
// The factors of a product, and their product again.
void factorsOf(const Expr &e, std::vector<Expr> &out);
Expr productOf(const std::vector<Expr> &factors);

} // namespace tilescope::coverage
