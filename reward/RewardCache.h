// A cache of reward stage results by the semantic hash of a kernel
// (ir/SemanticHash.h), the task's problem and the sizes option: a candidate
// whose static stages were decided before is answered from the cache (its
// stages say `"cached": true`). In memory, and optionally on disk (one JSON
// file per key in a directory, shared by the workers of a batch and by later
// batches). The simulate stage is stored too, but read only when the caller
// asks for it (--cache-dynamic): fresh inputs are the default.
//
// Thread-safe. Diagnostics read from the cache keep the locations of the
// candidate that filled it.
#pragma once

#include "reward/Reward.h"

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tilescope {

class RewardCache {
public:
  // `dir` empty: in memory only. The directory is created when missing.
  explicit RewardCache(std::string dir = "");

  std::optional<std::vector<StageResult>> find(const std::string &key);
  void store(const std::string &key, const std::vector<StageResult> &stages);

  size_t hits() const { return hits_; }
  size_t misses() const { return misses_; }

private:
  std::string path(const std::string &key) const;

  std::string dir_;
  std::mutex mutex_;
  std::map<std::string, std::vector<StageResult>> memory_;
  size_t hits_ = 0, misses_ = 0;
};

} // namespace tilescope
