// A kernel's search space: compile-time parameters with finite domains,
// declared in the kernel header,
//
//   param BM in {64, 128}            a set of integers
//   param STAGES in 2 .. 9           a half-open range [2, 9), like `for`
//   param ORDER in {row, grouped}    an enumeration
//   param PERSISTENT in {false, true} a boolean
//   param MCAST in {1, 2} = 1        with a default value
//   point big(BM = 128, STAGES = 3, ORDER = row, PERSISTENT = true)
//
// and named points. A point gives every parameter one value of its domain;
// one with a default may be left out of a point's text (`--set`, named
// points, tuning tables, measured rows), and `pointText` leaves it out at
// its default: a parameter added to a family with a default keeps the texts
// of its existing points, and the points they name, as they were.
// instantiating the kernel at a point (ir/Instantiate.h) substitutes the
// values and folds constants, so an instantiated kernel has no parameters.
// Values are expressions: IntImm for integers, BoolImm for booleans, and a
// Var naming the value for enumerations. Depends on ir/Expr.h only.
#pragma once

#include "ir/Expr.h"

#include <optional>
#include <string>
#include <vector>

namespace tilescope {

struct SpaceParam {
  enum class Kind : uint8_t { IntSet, IntRange, Enum, Bool };
  std::string name;
  Kind kind = Kind::IntSet;
  std::vector<Expr> values;             // IntSet, Enum, Bool: as written
  int64_t begin = 0, end = 0, step = 1; // IntRange: [begin, end) in steps
  Expr defaultValue;                    // `= v`: the value a point leaves out (null: none)
  llvm::SMLoc loc;

  // The number of values of the domain.
  int64_t size() const;
  // Value i of the domain, 0 <= i < size().
  Expr value(int64_t i) const;
  // Whether `v` is a value of the domain (an IntImm, BoolImm or enum Var).
  bool contains(const Expr &v) const;
  // The domain as written: `{64, 128}`, `2 .. 9`, `2 .. 9 step 2`.
  std::string domainText() const;
};

// A value for each parameter, in the order the parameters are declared.
struct PointValue {
  std::string name;
  Expr value;
  // The parameter's default value: `pointText` leaves it out.
  bool atDefault = false;
};
using Point = std::vector<PointValue>;

// `point NAME(P = v, ...)`: a point of the space worth a name (a library
// kernel the family replaces, a tuned configuration).
struct NamedPoint {
  std::string name;
  Point values;
  llvm::SMLoc loc;
};

struct Space {
  std::vector<SpaceParam> params;
  std::vector<NamedPoint> points;
  bool empty() const { return params.empty(); }
  const SpaceParam *find(std::string_view name) const;
  const NamedPoint *findPoint(std::string_view name) const;
  // The number of points before constraints (saturating at INT64_MAX).
  int64_t size() const;
  // Point i of the product of the domains, the last parameter fastest.
  Point pointAt(int64_t i) const;
  // Whether `name` is a value of one of the enumerations.
  bool isEnumValue(std::string_view name) const;
  // The value of parameter p in a point: sets atDefault.
  PointValue valueOf(const SpaceParam &p, Expr v) const;
};

// `BM=128,ORDER=grouped`: the point as `--set` and reports write it.
std::string pointText(const Point &p);

bool equal(const Space &a, const Space &b);

} // namespace tilescope
