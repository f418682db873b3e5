// A cache of reward stage results by the semantic hash of a kernel
// (ir/SemanticHash.h), the task's problem and the sizes option: a candidate
// whose static stages were decided before is answered from the cache (its
// stages say `"cached": true`). In memory, and optionally on disk (one JSON
// file per key in a directory, shared by the workers of a batch and by later
// batches). The simulate stage is stored too, but read only when the caller
// asks for it (--cache-dynamic): fresh inputs are the default.
//
// Thread-safe. An entry keeps the source anchors of the candidate that
// filled it (reward/SourceAnchors.h), so that the reward can move its
// diagnostics to the lines and columns of a later candidate with the same
// hash.
#pragma once

#include "reward/Reward.h"

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tilescope {

class RewardCache {
public:
  struct Entry {
    std::vector<StageResult> stages;
    // (line, column) of each node of the filling candidate's normal form.
    std::vector<std::pair<unsigned, unsigned>> anchors;
  };

  // `dir` empty: in memory only. The directory is created when missing.
  explicit RewardCache(std::string dir = "");

  std::optional<Entry> find(const std::string &key);
  void store(const std::string &key, const Entry &entry);

  size_t hits() const { return hits_; }
  size_t misses() const { return misses_; }

private:
  std::string path(const std::string &key) const;

  std::string dir_;
  std::mutex mutex_;
  std::map<std::string, Entry> memory_;
  size_t hits_ = 0, misses_ = 0;
};

} // namespace tilescope
