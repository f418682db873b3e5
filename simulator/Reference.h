// Problems a kernel can claim to solve (Problem.h), and their independent
// references.
//
//   gemm(A[^T], B[^T] -> C [, scale_a = SA, scale_b = SB, block = 32])
//       C = A * B (A: M x K, B: K x N; `^T` stores it transposed). With block
//       scales, element k of A's row i is multiplied by SA at k / block of
//       that row (SA has A's shape with K divided by `block`), likewise B.
//   rmsnorm(X, W, eps -> Y)
//       Y = X / sqrt(mean(X^2, row) + eps) * W
//   softmax(X -> Y)
//       Y = exp(X - max) / sum(exp(X - max)) over the last axis
//   attention(Q, K, V -> O [, scale = S, causal = true, lse = L])
//       O = softmax(scale * Q K^T [masked]) V per leading (batch) index;
//       L = log(sum(exp(scale * Q K^T - ...))) per query row (natural log).
//   gemm(A, B^T, bias = Bv, act = relu -> C)
//       C = act(A * B + Bv), Bv of shape [N] (one per column) or C's shape;
//       act one of relu, gelu (erf), gelu_tanh, silu, identity.
//   layernorm(X, W, Bias, eps -> Y)
//       Y = (X - mean) / sqrt(var + eps) * W + Bias over the last axis
//       (var the biased variance, W and Bias of the last axis's extent).
//   copy(X -> Y), transpose(X -> Y)
//       Y = X; Y = X with its last two axes swapped.
//   relu / gelu / gelu_tanh / silu / exp (X -> Y)
//       the map applied to every element.
//   scale(X, s -> Y), add_scalar(X, s -> Y)
//       Y = s * X; Y = X + s (s a float scalar parameter).
//   add / sub / mul / max / min (A, B -> C)
//       element-wise; B may have A's shape or a suffix of it (broadcast
//       along the leading axes, e.g. a bias row).
//   sum / max / mean (X [, axis = k] -> Y)
//       over axis k (Y: X's shape without it, or with 1 there); without an
//       axis over the last one, or over everything when Y has one element.
//
// References are computed in double precision from the decoded inputs, never
// by the simulator's own code paths, and every output element is compared with
// a tolerance derived from the problem: the output format's rounding plus a
// bound on the error of the kernel's arithmetic (docs/simulator.md says how
// each is derived).
#pragma once

#include "simulator/Engine.h"
#include "simulator/Problem.h"
#include "simulator/WideTargets.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tilescope::sim {

struct ProblemRule;

// A problem checked against a bound kernel: every name resolved to a tensor
// (an index into the tensors of allocateTensors) or a scalar value, and every
// shape found consistent.
struct BoundProblem {
  ProblemSpec spec;
  const ProblemRule *rule = nullptr;
  std::vector<int> inputs;               // tensor index per positional input, -1 for a scalar
  std::vector<int> outputs;              // positional outputs, then output options (lse)
  std::map<std::string, int> tensors;    // tensor options by key (scale_a, lse, ...)
  std::map<std::string, double> numbers; // scalars and number options by key or input name
  std::map<std::string, std::string> names; // word options by key (act = relu)
  std::vector<int> scales;               // tensors that hold block scales
};

// What went wrong and where: a byte offset in ProblemSpec::text.
struct ProblemError {
  std::string message;
  size_t offset = 0;
};

// Empty when `kind` names a known problem, else "unknown problem 'KIND'
// (known: ...)" with "did you mean" for a close one (`ad` -> `add`): the
// message bindProblem gives, which the reward also gives a task's problem
// before any candidate is run (a task's typo is no candidate's failure).
std::string unknownProblemKind(std::string_view kind);

// Checks `spec` against the kernel: a known kind, its operands and options,
// names of the kernel's tensor parameters or scalars, shapes that agree.
std::optional<BoundProblem> bindProblem(const ProblemSpec &spec, const Program &program,
                                        const std::vector<HostTensor> &tensors,
                                        ProblemError *error);

// The scalar parameters `spec` takes with either sign: the one named by a
// gemm's `alpha = NAME` (C = alpha * A B: a kernel that takes |alpha| is
// wrong) and the scalar input of `scale(X, s -> Y)` and `add_scalar(X, s ->
// Y)`. Other scalars are positive by their meaning (eps, a variance epsilon;
// attention's softmax scale, which the library's kernels apply after taking
// the row maximum) and are not listed.
std::set<std::string> signedScalars(const ProblemSpec &spec);

// Random inputs of a problem: values in [-1, 1] that are not zero once
// encoded (integers in [1, 7]); block scales are powers of two in
// [2^-3, 2^3] (rounded into their format). Seeded by `seed` and the name.
void fillRandomInput(HostTensor &t, uint64_t seed, bool isScale);

// Widens a float input that fillRandomInput filled (docs/simulator.md,
// "Inputs"): each row (the elements that share every index but the last)
// times 2^e, e an integer drawn from [-E, E] for the row, and each element
// made exactly zero with probability 1/16. E is 6 for f32 and bf16, less for
// the narrow formats (2^(2E + 6) at most the format's largest value: f16
// and e5m2 4, e4m3 1, e2m1 0). Values in [-1, 1] that
// are never zero hid kernels that clamp an input, special-case zero, or
// overflow or underflow for large or small rows (session 24's red team).
// Integer tensors are left as they are. Seeded by `seed` and the name.
// Since session 25, for f32 and bf16 some rows go further: 1 row in 16 is
// scaled by 2^-24 (outputs far below 2^-10 become common), and, with
// `targets` (WideTargets.h: the kernel's literals), 1 other row in 2 by
// 2^e for an e of `targets` (in [-56, 55]), drawn per row.
void widenInput(HostTensor &t, uint64_t seed, const WideTargets &targets = {});

// Widens a block-scale tensor that fillRandomInput filled (session 26): each
// scale times 2^e, e an integer drawn per element from [-10, 10] (kept where
// the format holds the result: e4m3 scales move less), or, with `targets`,
// 1 scale in 2 by a target's 2^e. Scales in [2^-3, 2^3] alone hid a kernel
// that clamped its scales to that range or flushed the ones below it (hack
// `scale-clamp`), where a real FP8 scale (amax / 448) is often below 2^-3.
// Scales stay positive. Seeded by `seed` and the name.
void widenScales(HostTensor &t, uint64_t seed, const WideTargets &targets = {});

struct Mismatch {
  int64_t index; // flat
  double got, expected;
  bool written; // false: nobody stored the element (got is meaningless)
};

struct OutputReport {
  std::string name;
  int64_t elements = 0;
  int64_t compared = 0;  // elements some thread wrote (or all, when every CTA ran)
  int64_t unwritten = 0; // elements nobody wrote (counted as mismatches when every CTA ran)
  int64_t mismatches = 0;
  double maxAbsError = 0, maxRelError = 0;
  std::vector<Mismatch> first;         // up to 8
  std::vector<int64_t> firstUnwritten; // up to 8 flat indices
  // When CTAs were sampled (Coverage.h): the tile inferred from the sampled
  // CTAs' stores, the elements of their tiles, and those nobody wrote.
  std::vector<int64_t> sampledTile; // empty when every CTA ran
  int64_t regionElements = 0, regionUnwritten = 0;
  std::vector<int64_t> firstRegionUnwritten; // up to 8 flat indices
};

// A task's tolerance for one output, replacing the reference's own bound
// (docs/simulator.md, "Comparison"): an element matches when
// |got - ref| <= atol + rtol * |ref|. Keyed by output name, or "*" for every
// output without a key of its own.
struct Tolerance {
  double rtol = 0, atol = 0;
};
using Tolerances = std::map<std::string, Tolerance>;
const Tolerance *toleranceOf(const Tolerances &tolerances, const std::string &output);

// Checks the outputs of `problem` in `tensors` (after the run) against the
// reference computed from the inputs in `before` (a copy of the tensors taken
// before the run, so that a kernel that overwrites its inputs is not compared
// with a reference of what it left there). `allCtas` says whether every CTA
// ran. `tolerances` (may be null) replaces the references' bounds.
std::vector<OutputReport> compareWithReference(const BoundProblem &problem,
                                               const std::vector<HostTensor> &tensors,
                                               const std::vector<HostTensor> &before, bool allCtas,
                                               const Tolerances *tolerances = nullptr);
// The same with the inputs read from `tensors` (unit tests of references).
std::vector<OutputReport> compareWithReference(const BoundProblem &problem,
                                               const std::vector<HostTensor> &tensors,
                                               bool allCtas);

} // namespace tilescope::sim
