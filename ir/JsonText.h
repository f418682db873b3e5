// JSON text from outside (a task, a batch line, an IR tree, a cache entry),
// parsed with a bound on nesting. LLVM's json::parse recurses once per
// nested array or object, so a line of a million '[' overflowed the stack
// and crashed `tilescope reward --task` (found 2026-11-25). Deeper nesting
// than kMaxJsonDepth is refused with a json::ParseError at the bracket that
// goes too deep, like any other syntax error, before LLVM's parser runs.
//
// Depends on LLVM's JSON support only.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>
// gcc 12 reports a false -Wmaybe-uninitialized inside LLVM's integer
// formatter (FormatProviders.h), which json::ParseError instantiates.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <llvm/Support/JSON.h>
#pragma GCC diagnostic pop

namespace tilescope {

// Far above any document the tool reads (an IR tree nests about 2 levels
// per expression level, and the kernel parser stops at 200 of those).
inline constexpr unsigned kMaxJsonDepth = 512;

llvm::Expected<llvm::json::Value> parseJsonText(llvm::StringRef text,
                                                unsigned maxDepth = kMaxJsonDepth);

} // namespace tilescope
