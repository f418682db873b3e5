// Diagnostics for everything that reads user text: errors and notes at a
// source location, printed through llvm::SourceMgr as
//   file:line:col: error: message
//   <the source line>
//        ^
// or collected for JSON output. Library code reports here and never exits or
// throws; the tool decides the exit status from errorCount().
#pragma once

#include <llvm/Support/SMLoc.h>
#include <llvm/Support/SourceMgr.h>

#include <string>
#include <vector>

namespace tilescope {

struct Diagnostic {
  enum Kind { Error, Warning, Note } kind;
  std::string file;
  unsigned line = 0, column = 0; // 1-based; 0 when the location is unknown
  std::string message;
};

class Diagnostics {
public:
  explicit Diagnostics(llvm::SourceMgr &sourceMgr, bool printImmediately = true)
      : sourceMgr_(sourceMgr), print_(printImmediately) {}

  void error(llvm::SMLoc loc, const llvm::Twine &message);
  void warning(llvm::SMLoc loc, const llvm::Twine &message);
  void note(llvm::SMLoc loc, const llvm::Twine &message);

  unsigned errorCount() const { return errors_; }
  bool hasErrors() const { return errors_ != 0; }
  // Past this many errors further ones are dropped (after one notice), so a
  // 10 MB file of garbage gives a short report.
  static constexpr unsigned kMaxErrors = 20;
  bool tooManyErrors() const { return errors_ >= kMaxErrors; }

  const std::vector<Diagnostic> &all() const { return diagnostics_; }
  llvm::SourceMgr &sourceMgr() { return sourceMgr_; }

private:
  void report(Diagnostic::Kind kind, llvm::SMLoc loc, const llvm::Twine &message);

  llvm::SourceMgr &sourceMgr_;
  bool print_;
  unsigned errors_ = 0;
  std::vector<Diagnostic> diagnostics_;
};

} // namespace tilescope
