// The outcome of a check, as users, agents and reward scores must read it.
// Exactly one of:
//   proved   every obligation proved for all sizes the `where` clause admits,
//            or checked exhaustively at sizes the result states;
//   finding  at least one obligation fails, with a witness and a location;
//   unknown  nothing fails, but some obligation was neither proved nor
//            checked (the solver gave up, a pattern is out of reach); the
//            reasons say which. Unknown is never a pass;
//   budget   a wall-time, step or memory budget ran out before a decision.
// Exit statuses for every command: 0 proved, 1 finding, 2 input error,
// 3 unknown, 4 budget. Nothing here depends on Z3 or the simulator.
#pragma once

#include <llvm/Support/SMLoc.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilescope {

enum class Verdict : uint8_t { Proved, Unknown, Budget, Finding };

std::string_view verdictName(Verdict v); // "proved", "unknown", "budget", "finding"
int verdictExitCode(Verdict v);          // 0, 3, 4, 1

// The verdict of two parts together: a finding outweighs a budget, a budget
// an unknown, an unknown a proof.
inline Verdict combine(Verdict a, Verdict b) {
  return a > b ? a : b;
}

// What one proof decided on one kernel.
struct ProofOutcome {
  unsigned findings = 0;
  // Obligations neither proved nor checked, with the reason for each.
  std::vector<std::pair<llvm::SMLoc, std::string>> unknown;
  bool budgetExceeded = false;
  // How it was decided, where the proof says ("proved for all sizes",
  // "checked exhaustively at K = 512, M = 128 (not proved for all sizes)",
  // "not proved (not checked exhaustively: ...)"); may be empty.
  std::string method;

  Verdict verdict() const {
    return findings          ? Verdict::Finding
           : budgetExceeded  ? Verdict::Budget
           : unknown.empty() ? Verdict::Proved
                             : Verdict::Unknown;
  }
};

} // namespace tilescope
