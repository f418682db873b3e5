// What `tilescope sim` prints after a checked run (simulator/Simulate.h): the
// result and verdict, the findings, each output's comparison (elements
// compared, unwritten elements and the first of them, mismatches and the
// first of them, maximum absolute and relative errors; with sampled CTAs the
// inferred tile and the unwritten elements in it) and the run's statistics
// (steps per warp, bytes per memory space, MMAs), as text or as JSON.
#pragma once

#include "simulator/Engine.h"
#include "simulator/Reference.h"
#include "simulator/Simulate.h"

#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <optional>
#include <string>
#include <vector>

namespace tilescope::tool {

struct SimReport {
  std::string file, kernel;
  std::optional<std::string> problem; // the problem checked against, when there is one
  std::string problemFrom;            // "option" (--problem), "annotation", or empty
  uint64_t seed = 0;
  std::string poison; // the pattern's name (simulator/Poison.h)
  const std::vector<sim::HostTensor> *tensors = nullptr;
  const sim::SimulationResult *result = nullptr;
  std::vector<std::string> notes; // the command's own (sampled scalars, tensors not dumped)
};

// Text: the verdict line and the outputs on `out`, a failed run's message and
// notes on `err`.
void printText(const SimReport &r, llvm::raw_ostream &out, llvm::raw_ostream &err);

llvm::json::Object toJson(const SimReport &r);

} // namespace tilescope::tool
