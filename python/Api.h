// What the Python module does, in plain C++: parse, the IR as a JSON tree,
// check, simulate, layout and reward, each returning JSON text or host
// tensors. Bindings.cpp converts to and from Python objects and releases the
// GIL around every call here, so nothing in this folder but Bindings.cpp may
// touch a Python object. Problems the caller can act on are thrown as
// ApiError and become tilescope.Error subclasses in Python.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Stmt.h"
#include "simulator/Engine.h"

#include <llvm/Support/JSON.h>
#include <llvm/Support/SourceMgr.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::python {

// An error for the Python caller: which exception class, what went wrong,
// the diagnostics (as `tilescope check --json` prints them) and, for a
// malformed tree, the JSON path of the value at fault.
struct ApiError {
  enum Kind { Input, Tree, Usage } kind;
  std::string message;
  llvm::json::Array diagnostics;
  std::string path;
};

// Throws ApiError(Input) whose message is the first error of `diag`
// (file:line:col: error: ...) and whose diagnostics are all of them.
[[noreturn]] void throwInputError(const Diagnostics &diag);

// A parsed source with the buffer its locations point into.
struct ParsedModule {
  std::shared_ptr<llvm::SourceMgr> sourceMgr = std::make_shared<llvm::SourceMgr>();
  Module module;
  std::string name; // the buffer's name in diagnostics
};

// Parses (no type checks); throws ApiError(Input) with the diagnostics.
std::shared_ptr<const ParsedModule> parseSource(const std::string &source, const std::string &name);
// The IR as JSON text (IrJson.h).
std::string moduleJsonText(const ParsedModule &module);
// The module a JSON text describes, printed and parsed back so that its
// locations point into its canonical text; throws ApiError(Tree) with the
// path of a malformed value.
std::shared_ptr<const ParsedModule> moduleFromJsonText(const std::string &text);
// The structural hash (`tilescope fmt --hash`) of `kernel`, or of the only
// kernel when `kernel` is empty; throws ApiError(Usage) otherwise.
std::string kernelHash(const ParsedModule &module, const std::string &kernel);

struct CheckOptions {
  std::string name = "<source>";
  std::string kernel;                  // empty: every kernel
  std::map<std::string, int64_t> args; // sizes for the exhaustive barrier check
  int64_t timeoutMs = 10000;           // processor time of the proofs of the file (0: none),
                                       // as `tilescope check --timeout-ms`; past: "budget"
};
// Parse, type checks and the proofs (layouts, barriers, races) as a verdict
// document (docs/python.md); input errors throw ApiError(Input).
std::string checkJson(const std::string &source, const CheckOptions &options);

// A tensor crossing the boundary: its name, dtype, shape and values (floats
// as doubles, integers as int64 in `ints`).
struct TensorValues {
  std::string name;
  Dtype dtype = Dtype::f32;
  std::vector<int64_t> shape;
  std::vector<double> floats; // float dtypes
  std::vector<int64_t> ints;  // integer and pred dtypes
};

struct SimulateOptions {
  std::string name = "<source>";
  std::string kernel;
  std::map<std::string, int64_t> ints;  // shape symbols and integer scalars
  std::map<std::string, double> floats; // float scalars
  std::map<std::string, TensorValues> inputs;
  uint64_t seed = 1;
  std::string problem; // overrides the kernel's `// problem:` line when not empty
  int64_t ctas = 0;    // 0: every CTA
  int64_t maxSteps = int64_t{1} << 32;
  int64_t memoryCapMb = 4096;
};
struct SimulateResult {
  std::string json;                  // as `tilescope sim --json` prints it
  std::vector<TensorValues> tensors; // every tensor after the run
};
SimulateResult simulate(const std::string &source, const SimulateOptions &options);

// The layout visualizer's evaluation document (layoutviz/Evaluation.h) of a
// layout at a shape; a layout or shape that does not evaluate throws
// ApiError(Input) with the document's diagnostics.
struct LayoutOptions {
  std::string shape, dtype, target = "sm_90a", scope = "auto";
  int64_t threads = 128;
};
std::string layoutJson(const std::string &layout, const LayoutOptions &options);

} // namespace tilescope::python
