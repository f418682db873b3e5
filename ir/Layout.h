// The layout engine: what a layout is, and how to evaluate, invert and
// enumerate one. Used by the parser, the checker, the verifier, the simulator
// and the visualizer alike; it must never depend on Z3, CUDA or the simulator.
//
// A layout maps a logical index of a tensor to a *set* of physical
// coordinates on named hardware axes (Target.h). It has three parts:
//
//   S (shard)   iters (extent, stride, axis). The logical index, flattened
//               row-major, is split mixed-radix over the shard extents with the
//               first iter most significant: c_k = floor(flat / prod_{l>k} e_l)
//               mod e_k, and c_k * s_k is added onto axis a_k.
//   R (replica) iters enumerated independently of the logical index: every
//               combination r_t in [0, e_t) adds r_t * s_t onto a_t, giving one
//               more owner of the same element.
//   O (offset)  a constant added per axis.
//
// Written  S[(e0,e1,...):(s0@a0,s1@a1,...)] + R[(e..):(s@a..)] + k@axis,
// where a stride without @axis is on the memory axis m.
//
// Example: S[(4,8):(1@warpid,1@laneid)] puts row i of a 4x8 tile on warp i and
// column j on lane j; adding R[2:32@laneid]... is not legal on 32 lanes, which
// the verifier reports; the engine itself evaluates any layout.
//
// Swizzle (M, B, S) is composed on top of the memory coordinate m after
// everything else: with x = m >> M,
//   f(x) = x XOR ((x AND ((2^B - 1) << S)) >> S),   m' = f(x) * 2^M + m mod 2^M.
// S >= B makes f an involution, which the inverse relies on. The shorthands
// 32B / 64B / 128B are B = 1 / 2 / 3, S = 3, M = log2(128 / element bits): the
// XOR acts on 16-byte chunks, as the hardware's swizzle modes do.
#pragma once

#include "ir/Dtype.h"
#include "ir/Target.h"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tilescope {

struct Iter {
  int64_t extent = 1;
  int64_t stride = 0;
  Axis axis = Axis::m;
  bool operator==(const Iter &) const = default;
};

struct AxisOffset {
  Axis axis = Axis::m;
  int64_t value = 0;
  bool operator==(const AxisOffset &) const = default;
};

// One swizzle function. `shorthandBytes` (32/64/128) and `shorthandDtype`
// remember that it was written as a mode, so printing gives the same text back.
struct Swizzle {
  int bitsKept = 0;  // M
  int bitsXored = 0; // B
  int shift = 0;     // S
  int shorthandBytes = 0;
  Dtype shorthandDtype = Dtype::bf16;

  int64_t apply(int64_t m) const;
  bool operator==(const Swizzle &) const = default;
  // The mode-form parameters for 32/64/128-byte swizzle of `dtype`, or an
  // explanation of why that combination does not exist.
  static std::optional<Swizzle> fromMode(int bytes, Dtype dtype, std::string *why);
};

// A point in the physical space: a value per axis, plus which axes it names.
struct PhysCoord {
  std::array<int64_t, kNumAxes> value{};
  uint32_t axes = 0;

  int64_t get(Axis a) const { return value[static_cast<size_t>(a)]; }
  bool has(Axis a) const { return axes & (1u << static_cast<unsigned>(a)); }
  void add(Axis a, int64_t v) {
    value[static_cast<size_t>(a)] += v;
    axes |= 1u << static_cast<unsigned>(a);
  }
  void set(Axis a, int64_t v) {
    value[static_cast<size_t>(a)] = v;
    axes |= 1u << static_cast<unsigned>(a);
  }
  bool operator==(const PhysCoord &o) const;
  // `{laneid: 12, warpid: 6, m: 1}`
  std::string str() const;
};

class Layout {
public:
  Layout() = default;

  // Builds a layout, checking what every layout must satisfy (extents >= 1,
  // strides and offsets >= 0, at least one shard iter, swizzle S >= B).
  // Returns the layout, or fills `error` and returns nothing.
  static std::optional<Layout> make(std::vector<Iter> shard, std::vector<Iter> replica,
                                    std::vector<AxisOffset> offset, std::optional<Swizzle> swizzle,
                                    std::string *error);

  // Row-major layout of `shape` on the memory axis.
  static Layout rowMajor(const std::vector<int64_t> &shape);

  const std::vector<Iter> &shard() const { return shard_; }
  const std::vector<Iter> &replica() const { return replica_; }
  const std::vector<AxisOffset> &offset() const { return offset_; }
  const std::optional<Swizzle> &swizzle() const { return swizzle_; }

  // Number of logical elements: the product of the shard extents.
  int64_t size() const { return size_; }
  // Owners per element: the product of the replica extents.
  int64_t replicas() const { return replicas_; }
  // A shape is admitted when its element count equals size().
  bool admits(const std::vector<int64_t> &shape) const;
  // Axes the layout places anything on (bit i = Axis i).
  uint32_t axesUsed() const { return axesUsed_; }

  // The owner of a flat logical index with every replica digit at 0.
  PhysCoord base(int64_t flat) const;
  // Every owner of a flat logical index, replicas included (size replicas()).
  std::vector<PhysCoord> owners(int64_t flat) const;
  void forEachOwner(int64_t flat, const std::function<void(const PhysCoord &)> &fn) const;

  // The inverse query: every flat logical index that has `coord` among its
  // owners (at most `limit` of them). Axes the layout does not use must be 0
  // in `coord` or absent. Empty when the slot holds nothing.
  std::vector<int64_t> preimages(const PhysCoord &coord, size_t limit = 16) const;

  // Canonical text, e.g. `S[(4,8):(1@warpid,1@laneid)] + R[2:4@warpid] + 3@m`.
  std::string str() const;

  bool operator==(const Layout &o) const;

private:
  std::vector<Iter> shard_, replica_;
  std::vector<AxisOffset> offset_;
  std::optional<Swizzle> swizzle_;
  int64_t size_ = 1;
  int64_t replicas_ = 1;
  uint32_t axesUsed_ = 0;
  std::vector<int64_t> radix_; // radix_[k] = prod_{l>k} e_l

  // For the inverse query: per axis, its iters (shard then replica indices)
  // by decreasing stride. When every axis is "nested" (each stride exceeds
  // all that the smaller iters can reach, no zero strides) the digits follow
  // greedily and the inverse needs no search.
  struct AxisIter {
    uint32_t index; // into shard_ (< shard_.size()) or replica_ (after)
    int64_t extent, stride;
  };
  std::array<std::vector<AxisIter>, kNumAxes> byAxis_;
  bool nested_ = true;
  std::vector<int64_t> preimagesBySearch(const std::array<int64_t, kNumAxes> &target,
                                         size_t limit) const;
};

// Row-major flattening of a logical coordinate; nothing if out of range.
std::optional<int64_t> flattenIndex(const std::vector<int64_t> &shape,
                                    const std::vector<int64_t> &index);
std::vector<int64_t> unflattenIndex(const std::vector<int64_t> &shape, int64_t flat);

// Shared memory geometry: 32 banks of 4 bytes, 128-byte lines.
struct BankSlot {
  int64_t bank;
  int64_t line;
};
BankSlot bankOf(int64_t memoryElement, Dtype dtype);

} // namespace tilescope
