// The PTX reader: text to ptx::Module (Ptx.h).
//
// Covers the PTX ISA 8.x/9.x surface that nvcc and Triton emit: module
// directives (.version, .target, .address_size, .file, .loc, .section),
// linkage (.visible, .extern, .weak), .entry/.func with parameters and return
// parameters, performance directives (.maxntid, .reqntid, .maxnreg, ...),
// state-space declarations (.reg with <N>, .shared/.local/.global/.const with
// .align, vector types and array dimensions, initialisers), .pragma, labels,
// guards (@%p, @!%p), inline `{ }` scopes, and every instruction as mnemonic +
// modifiers + operands (registers, immediates, symbols, memory operands,
// vectors, call lists, `a|b` pairs). An instruction it does not know is kept
// as written; only text that does not fit the grammar is an error.
//
// Errors go to `diag` as `file:line:col: error: ...` and the result is empty.
// The reader never recurses deeper than a fixed operand nesting and scope
// depth (both errors past their limit), so any input finishes in time linear
// in its length.
#pragma once

#include "ir/Diagnostics.h"
#include "ptx/Ptx.h"

#include <optional>

namespace tilescope::ptx {

// Parses the buffer `bufferId` of diag.sourceMgr().
std::optional<Module> parseModule(unsigned bufferId, Diagnostics &diag);

// Limits that keep hostile input bounded.
inline constexpr int kMaxScopeDepth = 64;
inline constexpr int kMaxOperandNesting = 3;

} // namespace tilescope::ptx
