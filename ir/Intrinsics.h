// The table of calls the IR knows: tile primitives (copy, gemm, fill, ...,
// which take an execution scope) and native intrinsics (mbarrier, TMA,
// ldmatrix, wgmma, tcgen05, fences, named barriers, ...). One source of truth
// for the checker, and later for dispatch, the verifier, the simulator and
// codegen: what each call takes, which threads must execute it together, and
// which targets have it.
#pragma once

#include "ir/Stmt.h"

#include <string_view>
#include <vector>

namespace tilescope {

// How many threads must reach a call together. Ordered: a condition that is
// uniform at level L admits calls that need at most L.
enum class Convergence : uint8_t { Thread, Warp, Warpgroup, Cta, Cluster, Grid };
std::string_view convergenceName(Convergence c);
Convergence convergenceOf(ExecScope s);

enum class ArgKind : uint8_t {
  Buffer,  // a buffer or a region of one
  Barrier, // one mbarrier (an element of a barrier array)
  Int,
  Bool,
  Number, // an integer or float scalar
  String,
  Operand, // a buffer region or a scalar (elementwise operands)
};

struct ParamSpec {
  std::string_view name;
  ArgKind kind;
  bool required;
};

enum class CallClass : uint8_t { TilePrimitive, Native };

enum class TargetFeature : uint8_t { None, Sm90Plus, Wgmma, Tcgen05 };

struct IntrinsicInfo {
  std::string_view name;
  CallClass cls;
  std::vector<ParamSpec> positional;
  std::vector<ParamSpec> keywords;
  Convergence convergence; // natives: who must execute it together
  TargetFeature feature;
  std::string_view summary;
};

const std::vector<IntrinsicInfo> &intrinsics();
const IntrinsicInfo *findIntrinsic(std::string_view name);
bool targetHas(TargetKind target, TargetFeature feature);
std::string_view featureDescription(TargetFeature feature);

// Expression-level functions (math, warp collectives, conversions).
struct ExprFunctionInfo {
  std::string_view name;
  size_t arity;
  Convergence result; // how uniform the result is across threads
  bool needsConvergedWarp;
};
const ExprFunctionInfo *findExprFunction(std::string_view name);
// Every name findIntrinsic / findExprFunction knows (for "did you mean").
std::vector<std::string_view> intrinsicNames();
std::vector<std::string_view> exprFunctionNames();

} // namespace tilescope
