// Reading the file a command works on, with the same diagnostics as parsing:
// a missing or unreadable file is an input error (exit 2), never a crash.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Stmt.h"

#include <llvm/ADT/StringRef.h>

#include <functional>
#include <optional>
#include <string>

namespace tilescope::tool {

// Adds FILE ("-" for standard input) to diag.sourceMgr(); returns its buffer id.
std::optional<unsigned> loadInput(llvm::StringRef path, Diagnostics &diag);

enum class Checked : bool { No, Yes };

// Which point of a kernel with parameters (ir/Space.h) a command runs:
// `set` as `tilescope instantiate --set` takes it (empty: none chosen), for
// kernel `kernel` (empty: every kernel with parameters).
struct PointChoice {
  llvm::StringRef kernel;
  llvm::StringRef set;
  // Without `set`: chooses the point of a kernel with parameters (`lower
  // --auto`: from a tuning table); nothing after diagnostics.
  std::function<std::optional<std::string>(const Kernel &, Diagnostics &)> choose = nullptr;
};

// Reads and parses FILE and, with Checked::Yes, runs the well-formedness
// checker on it. Nothing (after the diagnostics) when any of that fails.
// With Checked::Yes a kernel with parameters is replaced by its instance at
// `point.set`; without a point that is an input error, unless another
// kernel was chosen (then it is dropped).
std::optional<Module> loadModule(llvm::StringRef path, Diagnostics &diag, Checked check,
                                 PointChoice point = {});

// Replaces the kernels of `module` that have parameters by their instances
// at `point` (see loadModule); false after diagnostics when one fails.
bool instantiateChosen(Module &module, PointChoice point, Diagnostics &diag);

// The kernel of `module` a command works on: the one named `name`, or,
// without a name, the module's only kernel. Nothing, after an input error
// that names the choice (`path` holds N kernels; no kernel named 'X'),
// otherwise.
const Kernel *chooseKernel(const Module &module, llvm::StringRef name, llvm::StringRef path,
                           Diagnostics &diag);

// The checked module a command works on, with the diagnostics over its file.
struct CommandInput {
  explicit CommandInput(bool printImmediately = true) : diag(sourceMgr, printImmediately) {}
  CommandInput(const CommandInput &) = delete;
  CommandInput &operator=(const CommandInput &) = delete;

  // Reads and checks FILE. False, after the diagnostics, when that fails or
  // when `kernel` is given and names no kernel of the file (said on stderr).
  bool load(llvm::StringRef path, llvm::StringRef kernel = "", PointChoice point = {});

  llvm::SourceMgr sourceMgr;
  Diagnostics diag;
  std::optional<Module> module;
};

} // namespace tilescope::tool
