// Internal to the device-scale proofs (verifier/PeerAccess.cpp,
// verifier/FlagEpochs.cpp): one Z3 query of a devices(N) kernel and the
// witness text of its model. Exposes z3++.h: include it only from .cpp files.
#pragma once

#include "ir/Stmt.h"
#include "proof/ProtoEncoding.h"

#include <optional>
#include <string>
#include <vector>

namespace tilescope::detail {

// The unknowns every device query shares: the device count, this device's
// rank and the thread.
struct DeviceUnknowns {
  z3::expr ndev, devid, thread;
};

struct DeviceAnswer {
  z3::check_result result = z3::unknown;
  std::optional<z3::model> model;
  std::string why; // when Z3 gave up
};

// Whether `violation` can hold under the encoder's assumptions (the `where`
// clause, the symbols' ranges) and `facts`, within `budgetMs`; when it can,
// a model at the least N, devid, sizes, thread and then `extra` values
// (proof/LeastWitness.h), its literals named after `name` (unique per call).
DeviceAnswer askDevices(ProtoEncoder &enc, const DeviceUnknowns &u,
                        const std::vector<z3::expr> &facts, const z3::expr &violation,
                        const std::vector<z3::expr> &extra, const std::string &name,
                        unsigned budgetMs);

// "N = 2 devices, devid = 0, E = 256, G = 1" (the sizes but the device
// count's own name), then ", s = 1" for each of `loops`.
std::string deviceWitness(const z3::model &m, const ProtoEncoder &enc, const Kernel &kernel,
                          const DeviceUnknowns &u,
                          const std::vector<std::pair<std::string, z3::expr>> &loops = {});

} // namespace tilescope::detail
