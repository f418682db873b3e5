// Invariants of IR construction. A violated invariant is a bug in the code
// that builds the IR (the parser reports bad input as diagnostics before it
// builds anything), so it stops the program with the broken rule named, in
// every build type — unlike assert, which release builds compile out.
#pragma once

#include <llvm/Support/ErrorHandling.h>

#define TILESCOPE_INVARIANT(cond, what)                                                            \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      llvm::report_fatal_error("tilescope IR invariant violated: " what, false);                   \
  } while (false)
