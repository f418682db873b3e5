// The machine descriptions of model/machines/ and the tuning tables of
// model/tables/, compiled in by model/Embed*.cmake so the tools need no data
// path.
#pragma once

#include <string_view>
#include <vector>

namespace tilescope::model {

struct BundledMachine {
  std::string_view target; // the file's "target": "h100"
  std::string_view text;   // the whole JSON file
};

const std::vector<BundledMachine> &bundledMachines();

// The tuning tables of model/tables/ (embedded by cmake/TilescopeEmbed.cmake).
struct BundledTable {
  std::string_view file; // "gemm_bf16_sm90_family.h100.json"
  std::string_view text;
};

const std::vector<BundledTable> &bundledTables();

} // namespace tilescope::model
