// The checked simulation of a devices(N) kernel: N programs (one per devid),
// inputs drawn per device from the seed (fresh values on every device),
// outputs poisoned, a run of the device groups (Devices.h), then every
// output element of every device compared with a float64 reference of the
// device problem the kernel names:
//
//   // problem: allreduce(X -> Y)              Y[d] = sum over p of X[p]
//   // problem: all_gather(X -> Y)             Y[d] = X[0], ..., X[N-1] along dim 0
//   // problem: reduce_scatter(X -> Y)         Y[d] = chunk d (dim 0) of sum X[p]
//   // problem: tp_gemm_allreduce(A, B^T -> C) C[d] = sum over p of A[p] B[p]^T
//   // problem: allgather_gemm(A, B^T -> C)    C[d] = (A[0]; ...; A[N-1]) B[d]^T
//   // problem: gemm_reduce_scatter(A, B^T -> C)  C[d] = chunk d of sum A[p] B[p]^T
//
// (X[p] is device p's tensor X.) Must not depend on the command line.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Placement.h"
#include "simulator/Devices.h"
#include "simulator/Problem.h"
#include "simulator/Program.h"

#include <optional>
#include <string>
#include <vector>

namespace tilescope::sim {

struct DeviceSimOptions {
  uint64_t seed = 1;
  bool detectRaces = false;
  int64_t maxSteps = int64_t{1} << 32;
  std::function<std::string(llvm::SMLoc)> where;
};

struct DeviceSimulation {
  int devices = 0;
  DeviceRunResult run;
  bool checked = false; // a problem named the outputs and they were compared
  int64_t compared = 0, mismatches = 0, unwritten = 0;
  std::string firstMismatch; // "device 1: Y[3] = 2.5, reference 2.25 (tolerance ...)"
  std::vector<std::string> notes;
  // tensors whose declared placement the problem reads otherwise (findings)
  std::vector<std::string> placementFindings;
  // every device's tensors after the run (device d's at [d])
  std::vector<std::vector<HostTensor>> memory;
  // 0 ok, 1 finding, 3 unknown (no problem), 4 budget
  int exitCode() const;
  std::string verdict() const;
};

bool isDeviceProblem(std::string_view kind);

// What a device problem reads of its tensors' placements over the devices
// (ir/Placement.h): the collectives' inputs blocked along dimension 0 (one
// block per device: the partial sums, or the pieces to gather), their
// outputs replicated (all_gather, allreduce) or blocked along dimension 0
// (reduce_scatter); the GEMMs' operands blocked along K (tp_gemm_allreduce,
// gemm_reduce_scatter) or A along M and B along N (allgather_gemm, whose C is
// blocked along its columns). A stored transposed operand (`A^T`) swaps the
// dimensions. Empty for other problems.
std::vector<ProblemPlacement> problemPlacements(const ProblemSpec &problem);

// Input errors (no device count, a problem that does not fit) go to `diag`
// and give nothing.
std::optional<DeviceSimulation> simulateDevices(const Kernel &kernel, const ArgValues &args,
                                                const ProblemSpec *problem,
                                                const DeviceSimOptions &options, Diagnostics &diag);

} // namespace tilescope::sim
