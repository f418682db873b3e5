// `tilescope sim` and `tilescope race` on a devices(N) kernel: the checked
// device simulation (simulator/DeviceSimulate.h), printed as text or JSON.
#pragma once

#include "ir/Diagnostics.h"
#include "simulator/DeviceSimulate.h"

#include <string>

namespace tilescope::tool {

struct DeviceSimRequest {
  std::string file;
  const Kernel *kernel = nullptr;
  sim::ArgValues args;
  const sim::ProblemSpec *problem = nullptr;
  sim::DeviceSimOptions options;
  bool json = false;
  std::string command = "sim";
  std::string dumpDir; // every device's tensors after the run, as DIR/devD/NAME.npy
};

// Returns the exit status (0 ok, 1 finding, 2 input error, 3 unknown, 4 budget).
int runDeviceSimulation(const DeviceSimRequest &request, Diagnostics &diag);

} // namespace tilescope::tool
