// Problems a kernel can claim to solve, and their independent references.
//
// A kernel names its problem in a comment right before its declaration:
//
//   // problem: gemm(A, B^T -> C)        C = A * B^T   (A: M x K, B: N x K)
//   // problem: gemm(A, B -> C)          C = A * B     (A: M x K, B: K x N)
//   // problem: rmsnorm(X, W, eps -> Y)  Y = X / sqrt(mean(X^2, row) + eps) * W
//
// (`^T` on A or B transposes it.) Bundled kernels without the comment get it
// from a small table keyed by kernel name. References are computed in double
// precision from the decoded inputs, never by the simulator's own code paths,
// and every output element is compared with a tolerance derived from the
// problem: the output format's rounding plus a bound on the accumulation
// error (see docs/simulator.md).
#pragma once

#include "simulator/Engine.h"

#include <optional>
#include <string>
#include <vector>

namespace tilescope::sim {

struct ProblemSpec {
  std::string kind;                // "gemm", "rmsnorm"
  std::vector<std::string> inputs; // tensor and scalar names, in order
  std::vector<bool> transposed;    // per input (gemm)
  std::vector<std::string> outputs;
  std::string text; // as written
};

// Parses `gemm(A, B^T -> C)`; nothing with `error` set when malformed.
std::optional<ProblemSpec> parseProblem(std::string_view text, std::string *error);

// The `// problem:` annotation before `kernel NAME` in `source`, else the
// bundled table's entry, else nothing. `error` is set for a malformed one,
// and `errorOffset` to the annotation's byte offset in `source`.
std::optional<ProblemSpec> problemOf(std::string_view source, std::string_view kernelName,
                                     std::string *error, size_t *errorOffset = nullptr);

struct Mismatch {
  int64_t index; // flat
  double got, expected;
};

struct OutputReport {
  std::string name;
  int64_t elements = 0;
  int64_t compared = 0;  // elements some thread wrote (or all, when every CTA ran)
  int64_t unwritten = 0; // elements nobody wrote (counted as mismatches when every CTA ran)
  int64_t mismatches = 0;
  double maxAbsError = 0, maxRelError = 0;
  std::vector<Mismatch> first; // up to 8
};

// Checks the outputs of `problem` in `tensors` (after the run) against the
// reference computed from the inputs. `allCtas` says whether every CTA ran.
// Returns nothing with `error` set when the problem does not fit the kernel.
std::optional<std::vector<OutputReport>>
compareWithReference(const ProblemSpec &problem, const Program &program,
                     const std::vector<HostTensor> &tensors, bool allCtas, std::string *error);

} // namespace tilescope::sim
