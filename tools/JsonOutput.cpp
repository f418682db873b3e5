#include "tools/JsonOutput.h"

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

} // namespace tilescope::tool
