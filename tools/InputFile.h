// Reading the file a command works on, with the same diagnostics as parsing:
// a missing or unreadable file is an input error (exit 2), never a crash.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Stmt.h"

#include <llvm/ADT/StringRef.h>

#include <optional>

namespace tilescope::tool {

// Adds FILE ("-" for standard input) to diag.sourceMgr(); returns its buffer id.
std::optional<unsigned> loadInput(llvm::StringRef path, Diagnostics &diag);

enum class Checked : bool { No, Yes };

// Reads and parses FILE and, with Checked::Yes, runs the well-formedness
// checker on it. Nothing (after the diagnostics) when any of that fails.
std::optional<Module> loadModule(llvm::StringRef path, Diagnostics &diag, Checked check);

// False, after saying so on stderr, when `name` is given (not empty) and the
// module has no kernel of that name (--kernel K of lower, bench, dispatch).
bool kernelNamedIn(const Module &module, llvm::StringRef name);

} // namespace tilescope::tool
