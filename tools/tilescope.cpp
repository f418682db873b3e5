// The `tilescope` command line: a thin dispatcher over the libraries.
#include "tools/Command.h"

#include <llvm/Support/InitLLVM.h>
#include <llvm/Support/raw_ostream.h>

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
} // namespace tilescope::tool

int main(int argc, char **argv) {
  using namespace tilescope::tool;
  llvm::InitLLVM init(argc, argv);
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
