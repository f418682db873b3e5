#include "model/Baseline.h"

#include <algorithm>

namespace tilescope::model {

std::optional<Baseline> baselineFor(double flops, double bytes, const Machine &machine,
                                    std::string *why) {
  if (machine.dramDatasheetTBs <= 0 || machine.cublasRooflineFactor <= 0) {
    *why = "the machine description '" + machine.name +
           "' has no dram_datasheet_tb_s or cublas_roofline_factor";
    return std::nullopt;
  }
  Baseline b;
  b.flops = flops;
  b.bytes = bytes;
  b.computeUs = flops / (machine.peakTflopsDatasheet * 1e12) * 1e6;
  b.memoryUs = bytes / (machine.dramDatasheetTBs * 1e12) * 1e6;
  b.rooflineUs = std::max(b.computeUs, b.memoryUs);
  b.cublasUs = machine.cublasRooflineFactor * b.rooflineUs + machine.cublasOverheadUs;
  return b;
}

} // namespace tilescope::model
