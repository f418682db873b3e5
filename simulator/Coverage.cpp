#include "simulator/Coverage.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <unordered_set>

namespace tilescope::sim {

WriteAttribution::WriteAttribution(const std::vector<HostTensor> &tensors, std::vector<int> outputs)
    : tensors_(tensors), outputs_(std::move(outputs)), firstWrites_(outputs_.size()) {
  for (int o : outputs_)
    attributed_.emplace_back((tensors_[o].written.size() + 63) / 64, 0);
}

void WriteAttribution::unitDone() {
  for (size_t k = 0; k < outputs_.size(); ++k) {
    const std::vector<uint8_t> &written = tensors_[outputs_[k]].written;
    std::vector<uint64_t> &seen = attributed_[k];
    std::vector<int64_t> &mine = firstWrites_[k].emplace_back();
    const size_t n = written.size();
    // 64 elements at a time: a block that nobody wrote (most of a large
    // output) costs eight word loads.
    for (size_t w = 0; w < seen.size(); ++w) {
      const size_t base = w * 64, len = std::min<size_t>(64, n - base);
      uint64_t any = 0;
      for (size_t i = 0; i + 8 <= len; i += 8) {
        uint64_t word;
        std::memcpy(&word, &written[base + i], 8);
        any |= word;
      }
      for (size_t i = len / 8 * 8; i < len; ++i)
        any |= written[base + i];
      if (!any)
        continue;
      uint64_t fresh = 0;
      for (size_t i = 0; i < len; ++i)
        fresh |= uint64_t{written[base + i] != 0} << i;
      fresh &= ~seen[w];
      seen[w] |= fresh;
      for (; fresh; fresh &= fresh - 1)
        mine.push_back(static_cast<int64_t>(base + std::countr_zero(fresh)));
    }
  }
}

namespace {

// The tile extent of one dimension from each unit's written coordinates
// (sorted, distinct): the smallest T >= the longest run with every run start
// a multiple of T; 1 when there is none up to the extent.
int64_t tileExtent(const std::vector<std::vector<int64_t>> &coords, int64_t extent) {
  int64_t longest = 0;
  std::vector<int64_t> starts;
  for (const std::vector<int64_t> &c : coords) {
    for (size_t i = 0; i < c.size();) {
      size_t j = i;
      while (j + 1 < c.size() && c[j + 1] == c[j] + 1)
        ++j;
      starts.push_back(c[i]);
      longest = std::max(longest, c[j] - c[i] + 1);
      i = j + 1;
    }
  }
  if (longest == 0)
    return 1;
  for (int64_t t = longest; t <= extent; ++t)
    if (std::all_of(starts.begin(), starts.end(), [&](int64_t s) { return s % t == 0; }))
      return t;
  return 1;
}

} // namespace

WriteAttribution::Region WriteAttribution::region(int tensor) const {
  Region r;
  auto it = std::find(outputs_.begin(), outputs_.end(), tensor);
  if (it == outputs_.end())
    return r;
  const HostTensor &t = tensors_[tensor];
  const std::vector<std::vector<int64_t>> &units = firstWrites_[it - outputs_.begin()];
  std::vector<int64_t> shape = t.shape.empty() ? std::vector<int64_t>{1} : t.shape;
  size_t rank = shape.size();
  std::vector<int64_t> idx(rank);
  auto unflatten = [&](int64_t flat) {
    for (size_t d = rank; d-- > 0;) {
      idx[d] = flat % shape[d];
      flat /= shape[d];
    }
  };
  // Per dimension, per unit: the coordinates it wrote, sorted and distinct
  // (an empty list first: the unit numbers start at 1).
  std::vector<std::vector<std::vector<int64_t>>> seen(
      rank, std::vector<std::vector<int64_t>>(units.size() + 1));
  for (size_t u = 0; u < units.size(); ++u) {
    for (int64_t i : units[u]) {
      unflatten(i);
      for (size_t d = 0; d < rank; ++d)
        seen[d][u + 1].push_back(idx[d]);
    }
    for (size_t d = 0; d < rank; ++d) {
      std::vector<int64_t> &c = seen[d][u + 1];
      std::sort(c.begin(), c.end());
      c.erase(std::unique(c.begin(), c.end()), c.end());
    }
  }
  r.tile.resize(rank);
  for (size_t d = 0; d < rank; ++d)
    r.tile[d] = tileExtent(seen[d], shape[d]);
  // A cell by its index in the grid of cells (row-major).
  auto cellOf = [&](int64_t flat) {
    unflatten(flat);
    int64_t key = 0;
    for (size_t d = 0; d < rank; ++d)
      key = key * ((shape[d] + r.tile[d] - 1) / r.tile[d]) + idx[d] / r.tile[d];
    return key;
  };
  std::unordered_set<int64_t> cells;
  for (const std::vector<int64_t> &mine : units)
    for (int64_t i : mine)
      cells.insert(cellOf(i));
  // In flat order, a run of the last dimension's tile at a time: its
  // elements share one cell (the other coordinates are the same, and the
  // last one's quotient by its tile too).
  const int64_t last = shape[rank - 1], lastTile = r.tile[rank - 1];
  const int64_t size = t.elements();
  for (int64_t row = 0; row < size; row += last)
    for (int64_t run = row; run < row + last; run += lastTile) {
      if (!cells.count(cellOf(run)))
        continue;
      for (int64_t i = run; i < std::min(run + lastTile, row + last); ++i) {
        ++r.elements;
        if (!t.written[i]) {
          ++r.unwritten;
          if (r.firstUnwritten.size() < 8)
            r.firstUnwritten.push_back(i);
        }
      }
    }
  return r;
}

} // namespace tilescope::sim
