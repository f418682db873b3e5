// What `tilescope sim` prints after a run: the verdict, each output's
// comparison (elements compared, unwritten elements and the first of them,
// mismatches and the first of them, maximum absolute and relative errors) and
// the run's statistics (steps per warp, bytes per memory space, MMAs), as
// text or as JSON.
#pragma once

#include "simulator/Engine.h"
#include "simulator/Reference.h"

#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <optional>
#include <string>
#include <vector>

namespace tilescope::tool {

struct SimReport {
  std::string file, kernel, verdict;
  std::optional<std::string> problem; // the annotation, when the kernel has one
  uint64_t seed = 0;
  bool allCtas = true;
  int status = 0;
  const std::vector<sim::HostTensor> *tensors = nullptr;
  std::vector<sim::OutputReport> outputs;
  const sim::RunResult *run = nullptr;
  std::vector<std::string> notes; // the command's own (defaults, tensors not dumped)
};

// Text: the verdict line and the outputs on `out`, a failed run's message and
// notes on `err`.
void printText(const SimReport &r, llvm::raw_ostream &out, llvm::raw_ostream &err);

llvm::json::Object toJson(const SimReport &r);

} // namespace tilescope::tool
