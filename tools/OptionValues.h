// Diagnostics on the command line's option values, and the integer (and
// floating-point) options of every subcommand. An option's value is a source buffer of its own
// (OptionText), so a bad value gets tilescope's diagnostic,
// `<threads>:1:1: error: expected an integer, not 'abc'` with the text and a
// caret under it, as `tilescope viz` reports its integer fields; never LLVM's
// option-parser message. A value that is not an integer of the option's type
// refuses the command line (exit 2) before any command runs.
#pragma once

#include "ir/Diagnostics.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/ADT/Twine.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/SMLoc.h>

#include <cstdint>
#include <limits>
#include <string>

namespace tilescope::tool {

// An option's text as a source buffer named `name` ("<threads>"), so that
// its diagnostics point into it.
struct OptionText {
  Diagnostics &diag;
  llvm::SMLoc start;
  OptionText(Diagnostics &d, llvm::StringRef name, llvm::StringRef text);
  void error(size_t column, const llvm::Twine &message);
};

// Reports a value `text` of option `option` that is not an integer in
// [lo, hi] as an error on `<option>`; returns true (an error, as llvm::cl's
// parsers answer).
bool badIntegerOption(llvm::StringRef option, llvm::StringRef text, const std::string &lo,
                      const std::string &hi);

// llvm::cl's parser of T (the same values accepted: decimal, 0x hex, 0
// octal, as StringRef::getAsInteger reads them; the same value name in
// --help) with tilescope's message. llvm::cl's parsers are final: this one
// is a basic_parser that hands --print-options to the parser it replaces.
template <class T> class IntegerParser : public llvm::cl::basic_parser<T> {
public:
  explicit IntegerParser(llvm::cl::Option &o) : llvm::cl::basic_parser<T>(o), llvm_(o) {}

  bool parse(llvm::cl::Option &o, llvm::StringRef name, llvm::StringRef arg, T &value) {
    if (!arg.getAsInteger(0, value))
      return false;
    return badIntegerOption(name.empty() ? o.ArgStr : name, arg,
                            std::to_string(std::numeric_limits<T>::min()),
                            std::to_string(std::numeric_limits<T>::max()));
  }
  llvm::StringRef getValueName() const override { return llvm_.getValueName(); }
  // What llvm::cl's option printer takes (cl::printOptionDiff).
  operator const llvm::cl::parser<T> &() const { return llvm_; }

private:
  llvm::cl::parser<T> llvm_;
};

// An integer option of a subcommand: `IntOption<int64_t> threads("threads", ...)`.
template <class T> using IntOption = llvm::cl::opt<T, false, IntegerParser<T>>;

// llvm::cl's parser of double (the values llvm::to_float reads, as it does)
// with tilescope's message: `<timeout-ms>:1:1: error: expected a number, not 'abc'`.
class NumberParser : public llvm::cl::basic_parser<double> {
public:
  explicit NumberParser(llvm::cl::Option &o) : llvm::cl::basic_parser<double>(o), llvm_(o) {}

  bool parse(llvm::cl::Option &o, llvm::StringRef name, llvm::StringRef arg, double &value);
  llvm::StringRef getValueName() const override { return llvm_.getValueName(); }
  operator const llvm::cl::parser<double> &() const { return llvm_; }

private:
  llvm::cl::parser<double> llvm_;
};

// A floating-point option of a subcommand.
using NumberOption = llvm::cl::opt<double, false, NumberParser>;

} // namespace tilescope::tool
