// What one kernel does at given sizes, CTA by CTA, read from its IR: the
// tensor-core work (wgmma instructions by shape), the bytes its TMA loads
// bring into shared memory (by stage, and which row block of which tensor,
// for L2 reuse), the bytes it stores, its output tiles and the steps of its
// pipeline. It runs the kernel's control flow (loops, lets, branches) for one
// representative thread per warpgroup (thread 0 of it, `elect_sync()` true)
// without touching any data: a tile-level trace, not a simulation. Reads the
// IR only: tile primitives (`wg.gemm`, `copy_async`) and the native
// instructions they dispatch to (`wgmma.mma_async`, `tma.load`) alike.
#pragma once

#include "ir/Stmt.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::model {

// Bytes a CTA loads of one row block of a global tensor for one tile.
struct BlockLoad {
  int64_t stage = 0; // the producer's stage fill it belongs to (0, 1, ...)
  std::string tensor;
  int64_t rowStart = 0;
  double bytes = 0;
  int64_t rank = 0; // the CTA's rank in its cluster (split K: ranks load distinct K slices)
};

struct CtaWork {
  double flops = 0;
  std::map<int64_t, int64_t> wgmmaByN; // m64nNk16 instructions, by N, all warpgroups
  int64_t consumerWarpgroups = 0;      // warpgroups that issue MMAs
  int64_t steps = 0;                   // ring stages consumed (by one consumer warpgroup)
  int64_t drainingSteps = 0;           // of those, ending in wgmma.wait_group(0)
  int64_t groupsInFlight = 0; // wgmma groups a consumer leaves in flight (the largest N of wait_group(N))
  int64_t stageFills = 0;              // stages the producer filled
  double loadBytes = 0, storeBytes = 0;
  // Of loadBytes, those from global tensors whose rows (innermost extent x
  // element size) are a multiple of 16 but not of 32 bytes, and of 32 but not
  // of 128: a TMA box row then straddles one more L2 line or sector.
  double loadBytesPitch16 = 0, loadBytesPitch32 = 0;
  double clusterBytes = 0;     // read or written in peers' shared memory (dsmem), all threads
  int64_t clusterBarriers = 0; // barrier.cluster.wait by the CTA
  int64_t tiles = 0;           // output tiles written
  std::vector<BlockLoad> blocks;
};

struct KernelProfile {
  int64_t grid = 0, threads = 0;
  int64_t clusterCtas = 1; // CTAs a cluster (the product of the cluster's extents)
  int64_t stages = 0;     // depth of the ring the loads signal (0: no ring)
  double sharedBytes = 0; // shared buffers and mbarriers of one CTA
  bool setsMaxRegisters = false;
  int64_t registersPerThread = 0; // an estimate from register buffers
  std::vector<CtaWork> ctas;      // the CTAs traced (all, or the first `traced`)
  int64_t traced = 0;             // ctas.size(); the rest are taken as their average
};

// The value of an integer or boolean expression (1 / 0) over `sizes`;
// nothing when it reads anything else.
std::optional<int64_t> evaluate(const Kernel &kernel, const Expr &e,
                                const std::map<std::string, int64_t> &sizes);

// Traces `kernel` (no parameters left) at `sizes` (shape symbols and integer
// scalars); traces at most `maxCtas` CTAs. Nothing, with `error`, when a
// size is missing or a loop bound or grid extent does not evaluate.
std::optional<KernelProfile> profileKernel(const Kernel &kernel,
                                           const std::map<std::string, int64_t> &sizes,
                                           int64_t maxCtas, std::string *error);

} // namespace tilescope::model
