// A tuning table: for a kernel with parameters (ir/Space.h) and a machine,
// the point chosen for each shape bucket by `tilescope tune` (the model's
// fastest point that passed the proofs), and how `lower --auto` and
// `bench --auto` pick an entry for other sizes. JSON:
//
//   {"kernel": "gemm_bf16_sm90_family", "target": "h100",
//    "machine": "NVIDIA H100 SXM5 80GB", "measured": false, "note": "...",
//    "entries": [{"shape": {"M": 4096, "N": 4096, "K": 4096},
//                 "point": "BM=128,...", "hash": "...", "predicted_us": 151.2,
//                 "verdict": "proved"}, ...]}
//
// An entry's shape is its bucket's centre: sizes pick the entries nearest in
// log2 distance, sum over the shape symbols of |log2(size / centre)|, and
// the caller takes the first whose point admits the sizes (its where clause).
// Entries without a point (none passed the proofs in budget) are kept in the
// file, with the reason, and never picked. Depends on LLVM's JSON only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::model {

struct TableEntry {
  std::map<std::string, int64_t> shape; // the bucket's centre
  std::string point;                    // `--set` text; empty: none found
  std::string hash;                     // structural hash of the instance
  double predictedUs = 0;
  double measuredUs = 0; // the measured time that chose the point (tune --measured); 0: none
  std::string verdict; // of the point's proofs: "proved"
  std::string reason;  // why no point, when `point` is empty
  // Global tensors the point is lowered with an L2 evict_first policy for
  // (`lower --evict-first`, a cache hint chosen by measurement); JSON
  // "evict_first": ["X"], absent when none.
  std::vector<std::string> evictFirst;
};

struct TuningTable {
  std::string kernel, target, machine, note;
  bool measured = false; // whether the choice was timed on the GPU
  std::vector<TableEntry> entries;
};

std::optional<TuningTable> parseTuningTable(std::string_view json, std::string *error);
std::string tuningTableJson(const TuningTable &table);

// The entries with a point, nearest to `sizes` first (ties: table order).
// Sizes of symbols an entry's shape lacks are ignored.
std::vector<const TableEntry *> nearestEntries(const TuningTable &table,
                                               const std::map<std::string, int64_t> &sizes);

// The tables shipped with tilescope (model/tables/*.json, compiled in), by
// kernel and target; nothing, with `error`, when none is shipped.
std::optional<TuningTable> bundledTuningTable(std::string_view kernel, std::string_view target,
                                              std::string *error);

} // namespace tilescope::model
