// The `tilescope` subcommands. Each Cmd*.cpp file defines one llvm::cl
// SubCommand with its own options and registers the function that runs it;
// tilescope.cpp parses the command line and calls the chosen one.
//
// Exit status, for every command: 0 clean (proved), 1 the input has
// findings, 2 usage or input error (after a file:line:col diagnostic),
// 3 unknown (an obligation neither proved nor checked: never a pass),
// 4 a budget ran out (ir/Verdict.h).
#pragma once

#include <llvm/Support/CommandLine.h>

namespace tilescope::tool {

enum ExitCode : int { kClean = 0, kFindings = 1, kInputError = 2, kUnknown = 3, kBudget = 4 };

using CommandFn = int (*)();

struct CommandRegistration {
  CommandRegistration(llvm::cl::SubCommand &sub, CommandFn run);
};

} // namespace tilescope::tool
