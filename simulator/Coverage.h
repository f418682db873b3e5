// Which output elements the CTAs that ran should have written, when only a
// sample of the grid runs (`--ctas N`). With every CTA run, every output
// element must be written; with a sample, most elements belong to CTAs that
// did not run, so only the sampled CTAs' own tiles can be checked.
//
// A sampled CTA's tile is inferred from what it wrote: the engine calls back
// after each CTA (cluster), and each output element is attributed to the
// first sampled unit that wrote it. Per output dimension, the written
// coordinates of each unit form runs; the tile extent T of that dimension is
// the smallest T at least as long as the longest run with every run starting
// at a multiple of T (the corner CTAs that sampleCtas runs first give starts
// such as 0 and 16, so a tile whose last row is never written still gets
// T = 16). Where no such T exists (a unit's runs are not aligned) the
// dimension's tile is 1: only coordinates the units wrote count. The region
// checked is every T-aligned cell in which some sampled unit wrote an element;
// an element of such a cell that nobody wrote is an unwritten output. With a
// single sampled CTA, the tile is its written extent (a missing last row is
// then out of sight): sample at least two, or run every CTA.
#pragma once

#include "simulator/Engine.h"

#include <array>
#include <cstdint>
#include <vector>

namespace tilescope::sim {

class WriteAttribution {
public:
  // Tracks the tensors `outputs` (indices into `tensors`, which must outlive
  // this object and keep their `written` marks).
  WriteAttribution(const std::vector<HostTensor> &tensors, std::vector<int> outputs);
  // The engine's EngineOptions::afterUnit: attributes the newly written
  // elements to the unit that just ran.
  void unitDone();

  struct Region {
    std::vector<int64_t> tile;           // inferred extent per dimension
    int64_t elements = 0;                // elements in the sampled units' cells
    int64_t unwritten = 0;               // ... that nobody wrote
    std::vector<int64_t> firstUnwritten; // up to 8 flat indices
  };
  // The region of output `tensor` (an index into `tensors`).
  Region region(int tensor) const;

private:
  const std::vector<HostTensor> &tensors_;
  std::vector<int> outputs_;
  // Per output, per unit (in run order): the flat indices that unit wrote
  // first, ascending. Only written elements are kept: a sampled run of a
  // large output writes a few tiles of it.
  std::vector<std::vector<std::vector<int64_t>>> firstWrites_;
  // Per output: the elements attributed so far, one bit each.
  std::vector<std::vector<uint64_t>> attributed_;
};

} // namespace tilescope::sim
