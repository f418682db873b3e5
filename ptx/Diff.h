// Side-by-side comparison of two condensed kernels (Condense.h): the facts
// a person asks about when one compiler's kernel is faster -- pipeline depth,
// MMA shapes, vector widths and cache hints of global accesses, the barrier
// scheme, register pressure, the instruction mix of the hottest loop.
//
// Loops are matched by heat: the loop with the most tensor-core instructions
// (then the most instructions) of one kernel against that of the other, and
// so on down both lists.
#pragma once

#include "ptx/Condense.h"

#include <llvm/Support/JSON.h>

#include <string>
#include <vector>

namespace tilescope::ptx {

struct DiffRow {
  std::string fact, a, b;
  bool differs() const { return a != b; }
};

std::vector<DiffRow> diffSummaries(const KernelSummary &a, const KernelSummary &b);

// Only the rows that differ, as a table; the count of equal ones at the end.
std::string printDiff(const KernelSummary &a, const KernelSummary &b,
                      const std::vector<DiffRow> &rows);
llvm::json::Value diffToJson(const KernelSummary &a, const KernelSummary &b,
                             const std::vector<DiffRow> &rows);

} // namespace tilescope::ptx
