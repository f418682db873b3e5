// The analytical performance model (docs/model.md): a predicted time for a
// kernel at given sizes on a machine, with the resource that bounds it and
// every bound beside it, from the kernel's IR (model/Profile.h) and a
// machine description (model/Machine.h), its numbers fitted on H100 times.
//
// Per CTA, a pipeline step (one ring stage) takes the longest of: its wgmma
// instructions on the SM's tensor cores (per instruction shape: issue
// efficiency, and the shared-memory bytes the instruction reads), one
// warpgroup's chain when it drains the tensor pipe every step, the TMA bytes
// of the stage at the SM's share of the L2-to-shared-memory bandwidth, and
// the ring's Little's law (each stage busy for a load latency plus the MMAs
// of its step; with g wgmma groups kept in flight, at most depth - g loads
// overlap one latency). A CTA adds its
// epilogues and one load latency to fill the ring. CTAs resident together
// on an SM share its tensor cores and bandwidth; the SMs that load in a wave
// share the L2's rate, each up to its own limit; each SM runs its CTAs in
// waves. DRAM traffic is counted per wave from the distinct row blocks the
// CTAs of the wave load (reuse in L2 by tile order), less what L2 kept of
// the waves before while they fit, plus C. The kernel
// takes the slowest SM or the DRAM bound, whichever is longer, plus launch.
#pragma once

#include "model/Machine.h"
#include "model/Profile.h"

#include <string>
#include <tuple>
#include <vector>

namespace tilescope::model {

struct Bound {
  std::string resource; // "tensor cores", "L2 -> shared memory", "DRAM", ...
  double us = 0;        // the kernel's time if this alone bounded it
  std::string detail;
};

struct Prediction {
  double us = 0;           // predicted kernel time
  std::string boundBy;     // the resource of the longest bound
  double tflops = 0;       // achieved at the predicted time
  double peakFraction = 0; // of the datasheet's dense BF16 peak
  std::vector<Bound> bounds;
  // Facts of the structure the prediction used.
  int64_t grid = 0, ctasPerSm = 0, stages = 0, steps = 0, tiles = 0;
  double waves = 0, waveEfficiency = 0, sharedBytes = 0, flops = 0, loadBytes = 0;
  double dramBytes = 0, storeBytes = 0;
  std::string occupancyLimit; // what limits CTAs per SM
  std::map<int64_t, int64_t> wgmmaByN;
};

// What a prediction computes from the profile alone (and the machine's
// occupancy limits), kept by a caller that predicts one profile on many
// machines (the fit, model/Calibration.h).
struct PredictCache {
  int64_t ctasPerSm = 0;
  std::string occupancyLimit;
  double dramBytes = 0; // loads (per wave, L2 reuse in and across waves) and stores
  // Of the bytes the waves' CTAs load by TMA, the part that is a wave's first
  // read of a line (its distinct row blocks); the rest are other SMs of the
  // same wave reading the same lines.
  double l2FirstFraction = 1;
};
PredictCache predictCache(const KernelProfile &profile, const Machine &machine);

Prediction predict(const KernelProfile &profile, const Machine &machine,
                   const PredictCache *cache = nullptr);

// The order predictions rank in, smallest first (`tilescope tune`'s choice
// and the predicted best of model/Calibration.h): the time in buckets of 0.5%
// (closer than that the model does not tell points apart), then the deeper
// ring (the model takes the load latency as fixed, and measured, a shallow
// ring loses where the model ties: 2 stages of 128x256 ran 20% slower than 3
// at 4096^3), then the fewer predicted DRAM bytes (measured, a compute-bound
// tile order that reads less from DRAM still ran faster: grouped against row
// order, 128x256 persistent, 1.26x at 8192^3; docs/perf.md).
std::tuple<int64_t, int64_t, double> rankKey(const Prediction &prediction);

} // namespace tilescope::model
