// Shared by the libFuzzer targets of fuzz/: what a target asserts about the
// code under test. A broken property aborts with a message, which libFuzzer
// reports as a crash with the input that broke it (docs/robustness.md).
//
// Depends on ir/ only.
#pragma once

#include "ir/Checker.h"
#include "ir/Diagnostics.h"
#include "ir/Parser.h"

#include <llvm/Support/SourceMgr.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace tilescope::fuzz {

// Aborts the run when `ok` is false: a property of the code under test broke.
inline void require(bool ok, const char *property, const std::string &detail = {}) {
  if (ok)
    return;
  std::fprintf(stderr, "fuzz property broken: %s\n%s\n", property, detail.c_str());
  std::abort();
}

// Inputs past this many bytes are skipped: they add time, not coverage.
inline constexpr size_t kMaxInputBytes = 16 * 1024;

// Every diagnostic is well-formed: a message, and a location that is either
// unknown (line 0) or inside the text it was reported on (`lines` lines).
inline void requireWellFormed(const Diagnostics &diag, size_t lines) {
  for (const Diagnostic &d : diag.all())
    require(
        !d.message.empty() && (d.line == 0 ? d.column == 0 : d.line <= lines + 1 && d.column >= 1),
        "diagnostics are well-formed",
        d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": " + d.message);
}

// Lines of `text` (a final line without a newline counts).
inline size_t lineCount(const std::string &text) {
  size_t n = 1;
  for (char c : text)
    n += c == '\n';
  return n;
}

// Diagnostics that are collected, never printed.
struct QuietDiagnostics {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag{sourceMgr, /*printImmediately=*/false};
};

// The input as a module that parses, has a kernel and passes the
// well-formedness checker (ir/Checker.h), its diagnostics in `q`; nothing
// otherwise, and for inputs past kMaxInputBytes: the targets that run a
// kernel start from such a module.
inline std::optional<Module> checkedModule(const uint8_t *data, size_t size,
                                           QuietDiagnostics &q) {
  if (size > kMaxInputBytes)
    return std::nullopt;
  std::string text(reinterpret_cast<const char *>(data), size);
  Module module = parseModuleText(text, "input.tile", q.diag);
  if (q.diag.hasErrors() || module.kernels.empty())
    return std::nullopt;
  checkModule(module, q.diag);
  if (q.diag.hasErrors())
    return std::nullopt;
  return module;
}

} // namespace tilescope::fuzz
