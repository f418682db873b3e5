// The machine descriptions of model/machines/, compiled in by
// model/EmbedMachines.cmake so the tools need no data path.
#pragma once

#include <string_view>
#include <vector>

namespace tilescope::model {

struct BundledMachine {
  std::string_view target; // the file's "target": "h100"
  std::string_view text;   // the whole JSON file
};

const std::vector<BundledMachine> &bundledMachines();

} // namespace tilescope::model
