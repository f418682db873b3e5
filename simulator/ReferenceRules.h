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
#include <utility>
#include <vector>

namespace tilescope::sim {

enum class OptionKind : uint8_t {
  ScaleTensor,  // an input tensor of block scales
  OutputTensor, // an extra output
  Number,       // a number, or the name of a scalar parameter
  Integer,      // a positive integer literal
  Bool,         // true or false
  InputTensor,  // an extra input tensor (gemm's bias)
  Name,         // a word from the rule's list (gemm's act = relu)
  Index,        // a non-negative integer literal (axis = 0)
};

struct OptionRule {
  std::string_view key;
  OptionKind kind;
  std::vector<std::string_view> names = {}; // OptionKind::Name: the words allowed
  // A Number a scalar parameter may give with either sign (a gemm's alpha;
  // Reference.h signedScalars); the others are positive by their meaning.
  bool eitherSign = false;
};

// The expected value of every element of one output and, per element, the
// absolute error the kernel's arithmetic may add before the output is rounded
// to its format (docs/simulator.md, "References").
struct Expected {
  // Doubles that `Values(n)` leaves unset; `Values(n, 0.0)` zeros them.
  template <typename T> struct UnsetAllocator : std::allocator<T> {
    template <typename U> struct rebind {
      using other = UnsetAllocator<U>;
    };
    template <typename U> void construct(U *p) noexcept { ::new (static_cast<void *>(p)) U; }
    template <typename U, typename... Args> void construct(U *p, Args &&...args) {
      ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
    }
  };
  using Values = std::vector<double, UnsetAllocator<double>>;

  Values value, bound;

  // `n` elements of each, zero.
  static Expected zeros(size_t n) { return {Values(n, 0.0), Values(n, 0.0)}; }
  // `n` elements of each, unset, for a reference that sets every element
  // the comparison needs (compareWithReference reads no other): a sampled
  // run's large output is neither zeroed nor touched beyond its tiles.
  static Expected unset(size_t n) { return {Values(n), Values(n)}; }
};

// A reference's one output, moved into the result (`return {std::move(e)}`
// copies: an initializer list's elements are const).
inline std::vector<Expected> oneOutput(Expected &&e) {
  std::vector<Expected> out;
  out.push_back(std::move(e));
  return out;
}

// Whether output `output` (an index into BoundProblem::outputs) needs element
// `flat`; elements no CTA that ran could write need no reference. A plain
// test, not a std::function: the references ask it once per element.
class NeededFn {
public:
  // Every element of every output.
  NeededFn() = default;
  // The elements marked in `written` (per output, one byte per element).
  explicit NeededFn(std::vector<const uint8_t *> written) : written_(std::move(written)) {}
  bool all() const { return written_.empty(); }
  bool operator()(size_t output, int64_t flat) const {
    return written_.empty() || written_[output][flat] != 0;
  }

private:
  std::vector<const uint8_t *> written_;
};

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
  // The positional scalars take either sign (`scale(X, s -> Y)`), unlike
  // rmsnorm's eps.
  bool signedScalarInputs = false;
};

const ProblemRule &gemmRule();
const ProblemRule &rmsnormRule();
const ProblemRule &softmaxRule();
const ProblemRule &attentionRule();
const ProblemRule &layernormRule();
// ReferenceElementwise.cpp: copy, transpose, the maps and the binary ops.
const std::vector<const ProblemRule *> &elementwiseRules();
// ReferenceReduce.cpp: sum, max, mean.
const std::vector<const ProblemRule *> &reduceRules();

// Activations (ReferenceElementwise.cpp), by name: relu, gelu (erf form),
// gelu_tanh (the tanh approximation), silu, exp, identity.
double activation(std::string_view name, double x);
// The absolute error an f32 kernel may add computing activation `name` at x
// (whose exact value is y): a few units of 2^-24 of the terms it sums; for
// exp, also the rounding of x's product with log2(e) (exp2-based kernels).
double activationBound(std::string_view name, double x, double y);
// A bound on |activation'(x)| (error in the argument carries through).
double activationSlope(std::string_view name, double x);
// The activations gemm's act option takes.
const std::vector<std::string_view> &activationNames();

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

// The gemm reference's eight-column sums (ReferenceGemm.cpp), for its tests:
// `wide` runs the 512-bit instantiation (only where gemmWideLanes(): the
// processor has AVX-512), else the 256-bit one (its AVX2 or default clone).
bool gemmWideLanes();
void gemmEightColumnSums(bool wide, const double *a, const double *b, int64_t K, int64_t n,
                         double *sums, double *magnitudes);
void gemmEightColumnFp8Sums(bool wide, const double *a, int64_t aStep, const double *b, int64_t K,
                            int64_t sumBlock, double *sums, double *magnitudes, double *bounds);

} // namespace tilescope::sim
