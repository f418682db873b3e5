// The epochs of a devices(N) kernel's flag barriers (docs/scales.md, "Flags
// and epochs"), for every device count and size the `where` clause admits.
//
// A flag barrier (verifier/DeviceProtocol.h recognizes them) stores a value V
// into slot c of its flag tensor F on every device and waits until its own
// flag of slot c has reached V (wrap-aware: `(int32)(F - V) >= 0`). Flags are
// never reset, so a use of slot c is a barrier only if the flag cannot
// already hold a value that satisfies its wait: every earlier use of the
// same slot (an earlier iteration of the loops around it, an earlier flag
// barrier of the kernel, or any use in the previous call of the kernel) must
// have stored a value V' with 1 <= V - V' < 2^31. Obligations, each a Z3
// query over the sizes, N, devid, the thread, blockIdx and the iterations of
// the loops around both uses:
//
// - agreement: slot and value are the same for the signalling and the
//   waiting thread (another device, another thread, the same iteration);
// - within a call: for every two uses a before b of one slot of one flag
//   tensor (program order: the loops' iterations lexicographically, then
//   the text), 1 <= V_b - V_a < 2^31;
// - across calls: the scalar parameter `epoch` is the call's epoch, one more
//   per call (the runtime's counter, which the lowering passes): for every
//   use a in the call with epoch e and b in the call with epoch e + 1 of one
//   slot, 1 <= V_b - V_a < 2^31. A kernel without an `epoch` parameter is
//   not proved across calls.
//
// A refuted obligation is a finding with the witness (N, devid, the sizes,
// the two uses' iterations, the slot and both values) when every condition
// around both uses was encoded; otherwise, and when Z3 gives up, not proved.
//
// Depends on ir/ and proof/ (Z3 inside the .cpp).
#pragma once

#include "ir/Stmt.h"

#include <string>
#include <utility>
#include <vector>

namespace tilescope {

// A recognized flag barrier: `site` is its `if threadIdx.x < ndev { ... }`.
struct FlagBarrierSite {
  const StmtNode *site = nullptr;
  std::string flags; // F
  Expr slot, value;  // c and V
  llvm::SMLoc loc;
  std::string broken; // the idiom without its fence or its wait: why it orders nothing
};

struct FlagEpochFinding {
  llvm::SMLoc loc;     // the later use, whose wait passes early
  std::string message;
  llvm::SMLoc earlier; // the use whose value it passes on
};

struct FlagEpochReport {
  std::vector<FlagEpochFinding> findings;
  std::vector<std::pair<llvm::SMLoc, std::string>> notProved;
  unsigned obligations = 0; // proved
};

// `kernel` carries the launch's device facts (ir/DeviceScale.h,
// appendDeviceFacts).
FlagEpochReport checkFlagEpochs(const Kernel &kernel, const std::vector<FlagBarrierSite> &sites);

} // namespace tilescope
