// What the layout proofs and the instruction rules say about a buffer and
// report: the memory scopes and the axes each may hold, a buffer as the
// proofs see it, and a violation with its concrete witness. Z3-free, so that
// the instruction rules (ir/InstructionRules.h) and dispatch sit in ir/ below
// the verifier, which proves these facts (verifier/LayoutVerifier.h).
#pragma once

#include "ir/Dtype.h"
#include "ir/Layout.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

enum class BufferScope : uint8_t { Global, Shared, Reg, Tmem };
std::string_view scopeName(BufferScope s);
std::optional<BufferScope> scopeFromName(std::string_view name);
// Whether a buffer of scope `s` may place data (shard iters, offsets) on `a`,
// and whether it may replicate over `a`.
bool scopeHoldsAxis(BufferScope s, Axis a);
bool scopeReplicatesOver(BufferScope s, Axis a);

// What the verifier needs to know about the buffer a layout describes.
struct BufferInfo {
  std::string name; // for messages; may be empty
  BufferScope scope = BufferScope::Shared;
  Dtype dtype = Dtype::f32;
  // Slots of the allocation on the memory axis m (elements of `dtype`); 0
  // takes the element count of the shape (shared, global, tmem) or the
  // register budget of one thread (reg).
  int64_t memoryElements = 0;
  int64_t tmemColumns = 0; // allocated TMEM columns; 0 takes the target's
  int64_t baseByte = 0;    // where the allocation starts in its space
  bool mayAlias = false;   // the buffer declares that elements may share slots
};

enum class ViolationKind : uint8_t { Scope, Bounds, Alias, Replica, Overlap, Instruction, Banks };
std::string_view violationKindName(ViolationKind k);

// A concrete counterexample, re-checkable with the layout engine: `logical`
// holds one coordinate (bounds, scope) or two (alias, replica, overlap), and
// `physical` the owner they reach.
struct Witness {
  std::vector<std::vector<int64_t>> logical;
  std::vector<int64_t> replica;     // replica index of each logical coordinate
  std::vector<std::string> buffers; // buffer of each logical coordinate (overlap)
  PhysCoord physical;
  std::optional<Axis> axis;                             // the axis out of bounds or out of scope
  int64_t extent = 0;                                   // that axis's extent (bounds)
  std::vector<std::pair<std::string, int64_t>> symbols; // symbolic sizes (symbolic proofs)
};

struct LayoutViolation {
  ViolationKind kind;
  Witness witness;
  std::string message; // e.g. `layout maps (3, 9) and (3, 13) to the same owner {...}`
};

// `(3, 9)`
std::string formatLogical(const std::vector<int64_t> &coords);

} // namespace tilescope
