// The problem annotation of a kernel: what it claims to compute, written in a
// comment right before its declaration:
//
//   // problem: gemm(A, B^T -> C)
//   // problem: gemm(A, B^T -> C, scale_a = SA, scale_b = SB, block = 32)
//   // problem: rmsnorm(X, W, eps -> Y)
//   // problem: softmax(X -> Y)
//   // problem: attention(Q, K, V -> O, scale = sm_scale, causal = true, lse = L)
//   // problem: gemm(A, B^T -> C, M = 4096, N = 4096, K = 4096)
//
// The grammar is `KIND(INPUT, ... -> OUTPUT, ..., KEY = VALUE, ...)`: inputs
// are names with an optional `^T`, outputs are names, and options follow the
// outputs or stand among the inputs (`sum(X, axis = 1 -> Y)`, `gemm(A, B^T,
// bias = Bv, act = relu -> C)`); a value is a name, a number, `true` or
// `false`. Reference.h lists the kinds. An option whose key
// is a shape symbol of the kernel names a problem size (problemSizes): the
// size the kernel is meant for, which `tilescope check` uses where it needs
// concrete sizes and none are given. Only the syntax is
// checked here; what a kind needs and whether it fits the kernel's tensors is
// Reference.h's business. Every piece keeps its byte offset in the annotation
// so that a diagnostic can point at it.
//
// Must not depend on the simulator's engine or on LLVM.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::sim {

struct ProblemOperand {
  std::string name;
  bool transposed = false; // written NAME^T
  size_t offset = 0;       // of the name, in ProblemSpec::text
};

struct ProblemOption {
  std::string key, value;
  size_t offset = 0;      // of the key
  size_t valueOffset = 0; // of the value
};

struct ProblemSpec {
  std::string kind;
  size_t kindOffset = 0;
  std::vector<ProblemOperand> inputs, outputs;
  std::vector<ProblemOption> options;
  std::string text; // as written, trimmed
};

// A syntax error and where it is (a byte offset in the annotation).
struct ProblemSyntaxError {
  std::string message;
  size_t offset = 0;
};

// Parses `kind(inputs -> outputs, options)`.
std::optional<ProblemSpec> parseProblem(std::string_view text, ProblemSyntaxError *error);

// A size the annotation names: an option `NAME = VALUE` on one of `symbols`.
struct ProblemSize {
  std::string name;
  long long value = 0;
  size_t offset = 0; // of the name
};

// The problem sizes among the options, in order; nothing, with `error`, when
// such an option's value is not a positive integer.
std::optional<std::vector<ProblemSize>> problemSizes(const ProblemSpec &spec,
                                                     const std::vector<std::string> &symbols,
                                                     ProblemSyntaxError *error);

// Where the annotation of `kernelName` is in a source file: the text after
// `// problem:` and its byte offset in `source`. The comment is recognised
// with any spacing and case (`//problem:`, `// Problem :`); the last one
// before the kernel's declaration counts. `nearMisses`, when given, receives
// the byte offsets of comments between the previous kernel and this one that
// start with the word `problem` but are not an annotation (`// problem
// gemm(...)`, `// problems: ...`): callers warn about them, since such a
// kernel would otherwise silently run without a reference.
struct ProblemAnnotation {
  std::string text;
  size_t offset = 0;
};
std::optional<ProblemAnnotation> findProblemAnnotation(std::string_view source,
                                                       std::string_view kernelName,
                                                       std::vector<size_t> *nearMisses = nullptr);

} // namespace tilescope::sim
