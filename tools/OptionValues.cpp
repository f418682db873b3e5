#include "tools/OptionValues.h"

#include <fmt/format.h>

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>

namespace tilescope::tool {

OptionText::OptionText(Diagnostics &d, llvm::StringRef name, llvm::StringRef text) : diag(d) {
  unsigned id = d.sourceMgr().AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name),
                                                 llvm::SMLoc());
  start = llvm::SMLoc::getFromPointer(d.sourceMgr().getMemoryBuffer(id)->getBufferStart());
}

void OptionText::error(size_t column, const llvm::Twine &message) {
  diag.error(llvm::SMLoc::getFromPointer(start.getPointer() + column), message);
}

bool badIntegerOption(llvm::StringRef option, llvm::StringRef text, const std::string &lo,
                      const std::string &hi) {
  llvm::StringRef digits = text.startswith("-") ? text.drop_front() : text;
  bool numeric = !digits.empty() && digits.find_first_not_of("0123456789") == llvm::StringRef::npos;
  llvm::SourceMgr sm;
  Diagnostics diag(sm);
  OptionText(diag, ("<" + option + ">").str(), text)
      .error(0, numeric
                    ? fmt::format("expected an integer in [{}, {}], not '{}'", lo, hi, text.str())
                    : fmt::format("expected an integer, not '{}'", text.str()));
  return true;
}

bool NumberParser::parse(llvm::cl::Option &o, llvm::StringRef name, llvm::StringRef arg,
                         double &value) {
  if (llvm::to_float(arg, value))
    return false;
  llvm::SourceMgr sm;
  Diagnostics diag(sm);
  OptionText(diag, ("<" + (name.empty() ? o.ArgStr : name) + ">").str(), arg)
      .error(0, fmt::format("expected a number, not '{}'", arg.str()));
  return true;
}

} // namespace tilescope::tool
