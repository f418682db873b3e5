// Bank-conflict analysis of one shared-memory instruction over a whole tile:
// which thread touches which element in each request (the access pattern of
// the instruction in InstructionRules.h), and how many wavefronts each
// request costs. Enumerates rather than proves: a tile has few requests.
//
// Model (ir/BankModel.h, shared with the visualizer): 32 banks of 4 bytes, phases
// (32 threads for 4-byte accesses, 16 for 8-byte, 8 for 16-byte; one 8x8
// matrix per phase for ldmatrix/stmatrix); a phase costs as many wavefronts as
// the largest number of distinct 4-byte words any one bank holds among its
// accesses (equal words broadcast).
//
// Depends on ir/ and InstructionRules.h; never on Z3.
#pragma once

#include "ir/BankModel.h"
#include "ir/InstructionRules.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tilescope {

// One element access of a conflicting bank.
struct BankAccess {
  int64_t thread;
  std::vector<int64_t> logical;
  int64_t byte;
  int64_t bank;
};

struct BankReport {
  std::string instruction;
  int64_t requests = 0;
  int64_t wavefrontsPerRequest = 0; // the worst request
  int64_t idealWavefronts = 0;      // one per phase
  int64_t totalWavefronts = 0;
  int64_t worstRequest = 0;
  // Accesses to the most contended bank of the worst phase (empty when
  // conflict-free).
  std::vector<BankAccess> conflicts;
  std::string error; // the pattern does not apply to this tile
  bool conflictFree() const { return error.empty() && wavefrontsPerRequest <= idealWavefronts; }
  // Worst wavefronts over ideal, e.g. 2 for a two-way conflict.
  int64_t degree() const {
    return idealWavefronts ? (wavefrontsPerRequest + idealWavefronts - 1) / idealWavefronts : 0;
  }
};

// The requests a shared-memory instruction makes over a tile of `shape`
// (`size` elements of `bits`): per request, its phases, each the elements
// every thread touches. Empty with `error` set when the pattern does not
// apply. The visualizer's copy view steps through these.
using BankRequest = std::vector<std::vector<ThreadAccess>>;
std::vector<BankRequest> instructionRequests(const InstructionRule &rule,
                                             const std::vector<int64_t> &shape, int64_t size,
                                             int bits, std::string *error);

// The analysis for a shared-memory instruction (families Matrix and
// SharedAccess); `error` explains any other.
BankReport analyzeBankConflicts(const InstructionRule &rule, const Layout &layout,
                                const std::vector<int64_t> &shape, const BufferInfo &buffer);

// `8 wavefronts per request (ideal 4): 2-way bank conflict; ...` — one line.
std::string describe(const BankReport &report);

// A violation of kind Banks when the report shows a conflict.
std::optional<LayoutViolation> bankViolation(const BankReport &report);

} // namespace tilescope
