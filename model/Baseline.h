// A baseline to hold a predicted kernel time against (docs/model.md,
// "Baseline"): the roofline of the work — its flops at the datasheet's dense
// tensor peak or its compulsory bytes at the datasheet's DRAM rate, whichever
// takes longer — and the time cuBLAS takes for that work on the measured
// machine, modelled as factor * roofline + overhead with the two numbers
// fitted on cuBLAS's measured times (tests/model/h100_calib.csv). The reward's
// performance stage reports a candidate's predicted time against it.
// Reads the machine description only.
#pragma once

#include "model/Machine.h"

#include <optional>
#include <string>

namespace tilescope::model {

struct Baseline {
  double flops = 0, bytes = 0; // the work it was computed for
  double computeUs = 0;        // flops at the datasheet peak
  double memoryUs = 0;         // bytes at the datasheet DRAM rate
  double rooflineUs = 0;       // the larger of the two
  double cublasUs = 0;         // factor * roofline + overhead
};

// The baseline of `flops` and `bytes` on `machine`; nothing, with `why`, when
// the description lacks the datasheet DRAM rate or the cuBLAS fit.
std::optional<Baseline> baselineFor(double flops, double bytes, const Machine &machine,
                                    std::string *why);

} // namespace tilescope::model
