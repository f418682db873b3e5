// The bank panel's warp request on a shared-memory layout: which elements
// each of a warp's 32 threads reads (a column, a row, or a custom list of
// coordinates, `vector` consecutive elements each), costed by the one bank
// model of ir/BankModel.h — the model `tilescope layout --banks` uses — so
// the page shows the engine's wavefronts, never its own.
//
// Depends on ir/ only.
#pragma once

#include "ir/Layout.h"

#include <llvm/Support/JSON.h>

#include <string>
#include <vector>

namespace tilescope::viz {

struct AccessRequest {
  std::string mode = "column"; // column | row | custom
  std::string index = "0";     // column c (mode column) or row r (mode row)
  std::string vector = "1";    // consecutive elements per thread
  std::string custom;          // `r,c; r,c; ...`, thread 0 first
};

// Adds `bankAccess` (threads, phases, wavefronts, ideal) to `doc`, or
// diagnostics of kind `access` (with a column into the custom list) to
// `diagnostics` when the request is malformed.
void analyzeAccess(const AccessRequest &request, const Layout &layout,
                   const std::vector<int64_t> &shape, Dtype dtype, llvm::json::Object &doc,
                   llvm::json::Array &diagnostics);

// Parses a decimal integer field with the messages the CLI gives:
// `expected an integer, not 'abc'`, `<what> must be in [lo, hi], not -5`.
// Returns false with `message` set.
bool parseIntegerField(const std::string &text, const std::string &what, int64_t lo, int64_t hi,
                       int64_t *value, std::string *message);

} // namespace tilescope::viz
