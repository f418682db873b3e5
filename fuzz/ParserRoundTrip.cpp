// Fuzz target: the kernel parser and printer. Any text must parse to a module
// or to diagnostics (never a crash); a module that parses must print to text
// that parses back to the same module (print(parse(print(x))) == print(x),
// equal structural hashes), and the well-formedness checker must accept or
// reject it without crashing.
#include "fuzz/FuzzSupport.h"
#include "ir/Checker.h"
#include "ir/Parser.h"
#include "ir/Printer.h"

using namespace tilescope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > fuzz::kMaxInputBytes)
    return 0;
  std::string text(reinterpret_cast<const char *>(data), size);
  fuzz::QuietDiagnostics first;
  Module module = parseModuleText(text, "input.tile", first.diag);
  if (first.diag.hasErrors())
    return 0;
  std::string printed = print(module);
  fuzz::QuietDiagnostics second;
  Module again = parseModuleText(printed, "printed.tile", second.diag);
  fuzz::require(!second.diag.hasErrors(), "the printed module parses", printed);
  fuzz::require(print(again) == printed, "parse(print(x)) prints as print(x)", printed);
  fuzz::require(again.kernels.size() == module.kernels.size(), "the same kernels", printed);
  for (size_t i = 0; i < module.kernels.size(); ++i)
    fuzz::require(structuralHash(again.kernels[i]) == structuralHash(module.kernels[i]),
                  "parse(print(x)) hashes as x", printed);
  checkModule(module, first.diag);
  return 0;
}
