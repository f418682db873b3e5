// Internal to the references: what one problem kind takes and how it computes
// its expected outputs. Each kind lives in its own file (ReferenceGemm.cpp,
// ReferenceRmsnorm.cpp, ReferenceSoftmax.cpp, ReferenceAttention.cpp);
// Reference.cpp binds names and compares. A kind never calls the simulator's
// arithmetic: values are decoded to double and computed there.
#pragma once

#include "simulator/Reference.h"

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace tilescope::sim {

enum class OptionKind : uint8_t {
  ScaleTensor,  // an input tensor of block scales
  OutputTensor, // an extra output
  Number,       // a number, or the name of a scalar parameter
  Integer,      // a positive integer literal
  Bool,         // true or false
};

struct OptionRule {
  std::string_view key;
  OptionKind kind;
};

// The expected value of every element of one output and, per element, the
// absolute error the kernel's arithmetic may add before the output is rounded
// to its format (docs/simulator.md, "References").
struct Expected {
  std::vector<double> value, bound;
};

// Whether output `output` (an index into BoundProblem::outputs) needs element
// `flat`; elements no CTA that ran could write need no reference.
using NeededFn = std::function<bool(size_t output, int64_t flat)>;

struct ProblemRule {
  std::string_view kind;
  std::string_view signature; // how it is written, for diagnostics
  size_t tensorInputs;        // positional tensor inputs
  size_t scalarInputs;        // then positional scalars (rmsnorm's eps)
  size_t outputs;             // positional outputs
  bool transposable;          // inputs take ^T
  std::vector<OptionRule> options;
  // Checks ranks, shapes and option values once names are resolved.
  std::function<std::optional<ProblemError>(const BoundProblem &, const std::vector<HostTensor> &)>
      check;
  // One Expected per BoundProblem::outputs entry.
  std::function<std::vector<Expected>(const BoundProblem &, const std::vector<HostTensor> &,
                                      const NeededFn &)>
      reference;
};

const ProblemRule &gemmRule();
const ProblemRule &rmsnormRule();
const ProblemRule &softmaxRule();
const ProblemRule &attentionRule();

// Helpers shared by the kinds.
std::vector<double> decodedValues(const HostTensor &t);
// 2^-(mantissa bits + 1) of a float format; 2^-53 for f64.
double unitRoundoff(Dtype d);
// An error at operand or option value `name` of the annotation.
ProblemError errorAt(const BoundProblem &p, std::string_view name, std::string message);
std::string shapeText(const std::vector<int64_t> &shape);
// An error unless output `y` has the shape of input `x` (elementwise problems).
std::optional<ProblemError> sameShape(const BoundProblem &p, const HostTensor &y,
                                      const HostTensor &x);

// Unit roundoff of the single-precision arithmetic kernels accumulate in.
inline constexpr double kF32Unit = 0x1p-24;

} // namespace tilescope::sim
