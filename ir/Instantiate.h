// Instantiation: the kernel of one point of a kernel's space (ir/Space.h).
// The parameters' values are substituted and constants folded: arithmetic
// on literals, comparisons, `&&` / `||` with a known side, `select` with a
// known condition, an enumeration compared with a value, and an `if` whose
// condition folds is replaced by the branch it takes (its statements join
// the enclosing block, as a preprocessor `#if` would). Layouts whose numbers
// name parameters are resolved. The result has no parameters, and its
// canonical text and structural hash are those of the point. Constraints of
// the `where` clause that fold to true are dropped; one that folds to false
// rejects the point. Statements that nothing changed are shared with the
// parameterised kernel, so comments attached to them survive.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Stmt.h"

#include <optional>
#include <string>

namespace tilescope {

struct Instance {
  std::optional<Kernel> kernel; // set when the point instantiates
  // Otherwise why not, and where: a constraint that is false at the point
  // (`byConstraint`), or something that does not fold or resolve.
  bool byConstraint = false;
  llvm::SMLoc loc;
  std::string reason;
};

Instance instantiate(const Kernel &kernel, const Point &point);

// Why `inst` has no kernel, as the diagnostics say it after "point P":
// "is not in the space: REASON" (a constraint false there) or "does not
// instantiate: REASON".
std::string whyNotInstantiated(const Instance &inst);

// The point `text` names: `BM=128,STAGES=6`, a named point `big`, or a named
// point with changes `big,STAGES=4`. Every parameter needs a value. Errors
// (an unknown parameter, a value outside its domain, a missing value) go to
// `diag` at the kernel's or the parameter's location.
std::optional<Point> parsePoint(const Kernel &kernel, llvm::StringRef text, Diagnostics &diag);

// The points of the space in order, each instantiated; at most `cap` points
// are visited.
struct SpacePoint {
  Point point;
  Instance instance;
};
struct SpaceEnumeration {
  std::vector<SpacePoint> points;
  int64_t total = 0;   // points of the space before constraints
  bool capped = false; // total > cap: only the first `cap` were visited
};
SpaceEnumeration enumerateSpace(const Kernel &kernel, int64_t cap);

// Declarations of a kernel's space that cannot be right whatever the point:
// a parameter named like a shape symbol, tensor, scalar or builtin; an
// enumeration value named like a parameter; a named point violating a
// constraint; a layout of terms or a threads expression in a kernel without
// parameters. Returns the number of errors.
unsigned checkSpaceDeclarations(const Kernel &kernel, Diagnostics &diag);

} // namespace tilescope
