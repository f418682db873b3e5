// The static check of a devices(N) kernel's cross-device protocol
// (docs/scales.md), for every device count the `where` clause admits:
//
// - agreement: every device reaches the same sequence of device.barrier and
//   collective calls on the same tiles. Proved when neither a call's operands
//   nor a condition or loop bound around it depends on `devid` (through
//   lets): then every device evaluates them alike, for every N;
// - peer races: a device.get of a tensor no statement of the kernel writes,
//   and a device.put into a tensor no statement reads or writes besides the
//   puts of distinct devices... are race-free by construction; others are
//   left to the dynamic check;
// - device.signal / device.wait flag protocols (epochs, fences): checked by
//   `tilescope sim --races` at the sizes given, not proved here.
//
// What is not proved is reported as "not proved" with its reason (the
// verdict is then unknown), never as a pass. Depends on ir/ only.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Stmt.h"

#include <string>
#include <utility>
#include <vector>

namespace tilescope {

struct DeviceProtocolReport {
  bool applies = false; // a devices(N) kernel
  unsigned findings = 0;
  std::vector<std::pair<llvm::SMLoc, std::string>> notProved;
  std::string method;
};

DeviceProtocolReport checkDeviceProtocol(const Kernel &kernel, Diagnostics &diag);

} // namespace tilescope
