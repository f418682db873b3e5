#include "tools/JsonOutput.h"

#include "tools/Command.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/raw_ostream.h>

namespace tilescope::tool {

llvm::json::Array diagnosticsJson(const Diagnostics &diag) {
  llvm::json::Array out;
  for (const Diagnostic &d : diag.all()) {
    const char *severity = d.kind == Diagnostic::Error     ? "error"
                           : d.kind == Diagnostic::Warning ? "warning"
                                                           : "note";
    out.push_back(llvm::json::Object{{"severity", severity},
                                     {"file", d.file},
                                     {"line", static_cast<int64_t>(d.line)},
                                     {"column", static_cast<int64_t>(d.column)},
                                     {"message", d.message}});
  }
  return out;
}

int finishInputError(const Diagnostics &diag, bool json) {
  if (json) {
    llvm::json::Object out{{"ok", false},
                           {"status", static_cast<int64_t>(kInputError)},
                           {"verdict", "error"},
                           {"diagnostics", diagnosticsJson(diag)}};
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
  }
  return kInputError;
}

} // namespace tilescope::tool
