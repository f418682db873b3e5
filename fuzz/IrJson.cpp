// Fuzz target: the IR as a JSON tree (ir/IrJson.h, the Python module's
// tilescope.from_json). Any bytes must fail to parse as JSON, be refused
// with an error naming a JSON path ("$..." and a message), or give a module;
// a module must go back to a tree that reads to the same module
// (from_json(to_json(m)) == m, printing the same text), and its text must
// parse back to it.
#include "ir/IrJson.h"
#include "fuzz/FuzzSupport.h"
#include "ir/JsonText.h"
#include "ir/Parser.h"
#include "ir/Printer.h"

#include <llvm/Support/Error.h>

using namespace tilescope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > fuzz::kMaxInputBytes * 4)
    return 0;
  llvm::Expected<llvm::json::Value> tree =
      parseJsonText(llvm::StringRef(reinterpret_cast<const char *>(data), size));
  if (!tree) {
    llvm::consumeError(tree.takeError());
    return 0;
  }
  IrJsonError error;
  std::optional<Module> module = moduleFromJson(*tree, &error);
  if (!module) {
    fuzz::require(!error.path.empty() && error.path[0] == '$' && !error.message.empty(),
                  "a refused tree names a JSON path and a reason", error.str());
    return 0;
  }
  std::string text = print(*module);
  IrJsonError again;
  std::optional<Module> back = moduleFromJson(moduleToJson(*module), &again);
  fuzz::require(back.has_value(), "from_json(to_json(m)) is accepted", again.str() + "\n" + text);
  fuzz::require(equal(*back, *module), "from_json(to_json(m)) == m", text);
  fuzz::require(print(*back) == text, "from_json(to_json(m)) prints as m", text);
  fuzz::QuietDiagnostics q;
  Module parsed = parseModuleText(text, "printed.tile", q.diag);
  fuzz::require(!q.diag.hasErrors() && equal(parsed, *module), "parse(print(m)) == m", text);
  return 0;
}
