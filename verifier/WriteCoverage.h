// Write coverage of a kernel's outputs: every element of each global tensor
// the kernel writes is written by some CTA, iteration and thread, for every
// size the `where` clause admits. (That no element is written twice is the
// static race check's business: two writes of one element are a race.)
//
// The proof. For an unknown element x of an output (0 <= x_d < extent_d) and
// each store into it (tma.store, wg.copy, cta.copy, element stores ...), the
// executor that should write x is computed from x by inverting the store's
// region: each region start is split into constant multiples of "digits"
// (a loop variable, blockIdx, a thread index, or `(v % H) / L` of one of
// them), the digits of x_d - const are read off by division, and each
// variable is put back together from its digits (`t = t / tn * tn + t % tn`).
// Z3 then looks for sizes and an x that no store's candidate executor
// writes: the candidate must exist (CTA inside the grid, loop values inside
// their loops and on their step, the thread among those executing the store,
// the guards true) and its region must contain x. No such x: proved. The
// candidates only make the query cheaper; a wrong one cannot prove anything.
//
// Otherwise the element Z3 found is searched for concretely at its sizes
// (every CTA, iteration and thread of every store): nobody writes it — a
// finding with the sizes, the element and the stores; someone does — the
// inversion was out of reach, and the tensor's coverage is not proved.
//
// Depends on ir/ and verifier/ (Z3 inside the .cpp).
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Stmt.h"

#include <string>
#include <utility>
#include <vector>

namespace tilescope {

struct CoverageFinding {
  llvm::SMLoc loc; // the (first) store into the tensor
  std::string message;
  std::vector<std::pair<llvm::SMLoc, std::string>> notes;
};

struct CoverageReport {
  std::vector<CoverageFinding> findings;
  // Tensors whose coverage could be neither proved nor refuted, with why.
  std::vector<std::pair<llvm::SMLoc, std::string>> notProved;
  // Per output tensor: "C: proved for all sizes: every element is written".
  std::vector<std::string> results;
  // "proved for all sizes", "violated", or "not proved (...)".
  std::string method = "proved for all sizes";
};

struct CoverageOptions {
  unsigned timeoutMs = 4000;
  // Executors the concrete search of a candidate element may visit.
  size_t searchCap = 20'000'000;
};

CoverageReport proveWriteCoverage(const Kernel &kernel, const CoverageOptions &options = {});

// Errors (`write coverage: ...`) and `not proved: ...` warnings into `diag`;
// returns the number of findings.
unsigned reportWriteCoverage(const CoverageReport &report, Diagnostics &diag);

} // namespace tilescope
