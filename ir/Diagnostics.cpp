#include "ir/Diagnostics.h"

#include <llvm/Support/raw_ostream.h>

namespace tilescope {

void Diagnostics::error(llvm::SMLoc loc, const llvm::Twine &message) {
  report(Diagnostic::Error, loc, message);
}
void Diagnostics::warning(llvm::SMLoc loc, const llvm::Twine &message) {
  report(Diagnostic::Warning, loc, message);
}
void Diagnostics::note(llvm::SMLoc loc, const llvm::Twine &message) {
  report(Diagnostic::Note, loc, message);
}

void Diagnostics::report(Diagnostic::Kind kind, llvm::SMLoc loc, const llvm::Twine &message) {
  if (errors_ >= kMaxErrors)
    return;
  if (kind == Diagnostic::Error)
    ++errors_;
  Diagnostic d{kind, "", 0, 0, message.str()};
  if (loc.isValid()) {
    unsigned buffer = sourceMgr_.FindBufferContainingLoc(loc);
    if (buffer != 0) {
      d.file = sourceMgr_.getMemoryBuffer(buffer)->getBufferIdentifier().str();
      auto [line, col] = sourceMgr_.getLineAndColumn(loc, buffer);
      d.line = line;
      d.column = col;
    }
  }
  if (print_) {
    llvm::SourceMgr::DiagKind k = kind == Diagnostic::Error     ? llvm::SourceMgr::DK_Error
                                  : kind == Diagnostic::Warning ? llvm::SourceMgr::DK_Warning
                                                                : llvm::SourceMgr::DK_Note;
    if (loc.isValid())
      sourceMgr_.PrintMessage(llvm::errs(), loc, k, message);
    else
      llvm::errs() << "tilescope: " << (kind == Diagnostic::Error ? "error: " : "note: ") << message
                   << "\n";
  }
  diagnostics_.push_back(std::move(d));
  if (errors_ == kMaxErrors && kind == Diagnostic::Error && print_)
    llvm::errs() << "tilescope: too many errors, stopping\n";
}

} // namespace tilescope
