// The table of calls the IR knows: tile primitives (copy, gemm, fill, ...,
// which take an execution scope) and native intrinsics (mbarrier, TMA,
// ldmatrix, wgmma, tcgen05, fences, named barriers, ...). One source of truth
// for the checker, and later for dispatch, the verifier, the simulator and
// codegen: what each call takes, which threads must execute it together, and
// which targets have it.
#pragma once

#include "ir/Stmt.h"

#include <climits>
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

// The values an integer operand may take, checked where the operand is a
// constant (verifier/Resources.h): [min, max], a multiple of `multipleOf`,
// a power of two; `immediate` operands must be constants (PTX takes them as
// immediates or instruction suffixes). Launch-dependent ranges: a CTA rank
// in the cluster, [0, cluster size), or a CTA mask, [1, 2^cluster size).
struct IntRange {
  enum Launch : uint8_t { None, ClusterRank, ClusterMask };
  int64_t min = INT64_MIN, max = INT64_MAX;
  int64_t multipleOf = 1;
  bool powerOfTwo = false;
  bool immediate = false;
  Launch launch = None;
  bool constrained() const {
    return min != INT64_MIN || max != INT64_MAX || multipleOf != 1 || powerOfTwo || immediate ||
           launch != None;
  }
};

struct ParamSpec {
  std::string_view name;
  ArgKind kind;
  bool required;
  IntRange range = {};
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
