// The `tilescope` command line: a thin dispatcher over the libraries.
#include "tools/Command.h"

#include <llvm/Support/CommandLine.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/InitLLVM.h>
#include <llvm/Support/PrettyStackTrace.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <vector>

namespace tilescope::tool {
namespace {
struct Entry {
  llvm::cl::SubCommand *sub;
  CommandFn run;
};
std::vector<Entry> &registry() {
  static std::vector<Entry> entries;
  return entries;
}
} // namespace

CommandRegistration::CommandRegistration(llvm::cl::SubCommand &sub, CommandFn run) {
  registry().push_back({&sub, run});
}

namespace {
// A fatal error inside LLVM (or an allocation that fails: InitLLVM routes
// operator new's failures here too) is an error of this input, exit 2, with
// no "submit a bug report to llvm-project" message. The checker bounds every
// declared size first (ir/SizeLimits.h), so reaching this is a gap there.
// Only write(2): the heap may be exhausted.
[[noreturn]] void fatal(const char *what, const char *reason) {
  auto put = [](const char *text) { (void)!::write(2, text, std::strlen(text)); };
  put("tilescope: error: ");
  put(what);
  if (reason && *reason) {
    put(": ");
    put(reason);
  }
  put("\n");
  std::_Exit(kInputError);
}
void onFatalError(void *, const char *reason, bool) {
  fatal("fatal error", reason);
}
void onBadAlloc(void *, const char *reason, bool) {
  fatal("out of memory (an input size beyond what can be allocated)", reason);
}
} // namespace

void installErrorHandlers() {
  llvm::install_fatal_error_handler(onFatalError, nullptr);
  llvm::install_bad_alloc_error_handler(onBadAlloc, nullptr);
  llvm::setBugReportMsg("tilescope crashed: this is a bug in tilescope, not in LLVM; please "
                        "report it with the input that caused it.\n");
}
} // namespace tilescope::tool

int main(int argc, char **argv) {
  using namespace tilescope::tool;
  llvm::InitLLVM init(argc, argv);
  installErrorHandlers();
  // The LLVM library registers hundreds of its own options (backends, Polly,
  // ...) at the top level; `tilescope --help` shows tilescope's subcommands
  // and the generic options (--help, --version) only.
  static llvm::cl::OptionCategory tilescopeOptions("tilescope options");
  llvm::cl::HideUnrelatedOptions(tilescopeOptions);
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (!llvm::cl::ParseCommandLineOptions(
          argc, argv, "tilescope: verify, simulate, race-check and lower GPU tile kernels\n",
          &errorStream)) {
    errorStream.flush();
    llvm::errs() << errors;
    return kInputError;
  }
  for (const auto &entry : registry())
    if (*entry.sub)
      return entry.run();
  llvm::errs() << "tilescope: error: no command given (try `tilescope --help`)\n";
  return kInputError;
}
