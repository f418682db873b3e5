// The gate in front of `lower` and `bench`: the proofs of `tilescope check`
// run on every kernel to lower, and the CUDA is written only for a kernel
// whose verdict is `proved`. A finding stops the command with exit 1, a
// budget with exit 4, and an obligation left open (`unknown`) with exit 3
// unless the user passed --allow-unknown, which lowers an unproved kernel
// knowingly (the "not proved" warnings are printed either way).
#pragma once

#include "tools/InputFile.h"

#include <llvm/ADT/StringRef.h>

namespace tilescope::tool {

// Runs the proofs on the kernels of `in` (only `kernelName` when it is not
// empty). Returns kClean when lowering may go on, else the exit status,
// after saying on stderr why `command` does not lower.
int gateLowering(CommandInput &in, llvm::StringRef kernelName, bool allowUnknown,
                 llvm::StringRef command);

} // namespace tilescope::tool
