// The parser of the tile IR's text form (docs/ir.md). It reports every error
// it finds through Diagnostics, recovering at the next statement so one run
// shows several, and never crashes on any input: unknown bytes, truncation,
// deep nesting and huge files all end in diagnostics.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Stmt.h"

namespace tilescope {

// Parses buffer `bufferId` of diag.sourceMgr(). The module holds whatever
// parsed; it is only meaningful when diag has no errors.
Module parseModule(unsigned bufferId, Diagnostics &diag);

// Convenience: adds `text` as a buffer named `name` and parses it.
Module parseModuleText(llvm::StringRef text, llvm::StringRef name, Diagnostics &diag);

// Words of the text form that can never be names (`let`, `for`, `shared`, ...).
bool isReservedWord(llvm::StringRef word);

} // namespace tilescope
