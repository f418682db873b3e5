// Shadow memory of the dynamic race detector: one cell per tracked unit of
// memory (a shared-memory byte, a global tensor element, a tensor-memory
// 32-bit cell) with the last write's epoch and the reads since, FastTrack
// style: one read epoch while the reads are ordered, a read set once two
// unordered reads meet (kept aside, indexed from the cell, so cells stay
// small).
//
// Global memory is shadowed in pages allocated on first touch, so a run that
// touches one tile of a large tensor pays for that tile only.
#pragma once

#include "racecheck/dynamic/VectorClock.h"

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace tilescope::sim {

struct ShadowCell {
  Epoch write;
  Epoch read;           // the one read since the write, unless readSet >= 0
  int32_t readSet = -1; // index into ReadSets
};

// Read sets of cells whose reads are unordered with each other.
class ReadSets {
public:
  int32_t create(const Epoch &a, const Epoch &b);
  // Adds a read, replacing the reader's previous one when it is the last
  // entry. Other repeats are dropped in batches (at each power of two past 64
  // entries) so that many readers cost O(log n) each, not a scan.
  void add(int32_t index, const Epoch &read);
  const std::vector<Epoch> &at(int32_t index) const { return sets_[index]; }
  void release(int32_t index);
  void clear();

private:
  std::vector<std::vector<Epoch>> sets_;
  std::vector<int32_t> free_;
};

// Cells of one space addressed 0 .. size-1 (shared bytes, tensor memory).
class FlatShadow {
public:
  void reset(int64_t size) { cells_.assign(static_cast<size_t>(size), ShadowCell{}); }
  bool contains(int64_t a) const { return a >= 0 && a < static_cast<int64_t>(cells_.size()); }
  ShadowCell &at(int64_t a) { return cells_[static_cast<size_t>(a)]; }

private:
  std::vector<ShadowCell> cells_;
};

// Cells of every global tensor, by (tensor, element), in pages made on demand.
class PagedShadow {
public:
  ShadowCell &at(int object, int64_t element);
  void clear() { objects_.clear(); }

private:
  static constexpr int kPageBits = 12;
  using Page = std::array<ShadowCell, size_t{1} << kPageBits>;
  std::vector<std::vector<std::unique_ptr<Page>>> objects_;
};

} // namespace tilescope::sim
