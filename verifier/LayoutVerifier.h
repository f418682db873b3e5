// The layout legality verifier: proves, with Z3, that a layout is a sound
// storage contract for one buffer on one target and launch, and when a proof
// fails returns a concrete witness (logical coordinates and the physical
// coordinate they reach). It also offers a brute-force enumerator with the
// same answers, used for small concrete shapes (it is faster there) and by the
// tests as an independent oracle.
//
// What is proved for one buffer (see docs/verifier.md):
//   scope    every iter and offset sits on an axis the buffer's scope can hold
//            (a replica iter on such an axis is reported as kind `replica`);
//   bounds   every owner coordinate lies inside its axis extent;
//   alias    two distinct logical elements never share a physical coordinate
//            (replica digits at 0), unless the buffer says it may;
//   replica  replicas of different elements never collide;
// and for two buffers in one space, `overlap`: their footprints are disjoint.
// Instruction legality and bank conflicts live in InstructionRules.h and
// BankConflicts.h.
//
// No exception crosses this interface: Z3 errors and time-outs come back as
// `undecided` entries. Depends on ir/ (layouts, targets, dtypes) and Z3; never
// on the parser, the simulator or the command line.
#pragma once

#include "ir/Dtype.h"
#include "ir/Layout.h"
#include "ir/Target.h"

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

// How the proofs are decided.
enum class ProofEngine : uint8_t {
  Auto,      // enumerate when size x replicas is small, Z3 otherwise
  Z3,        // always Z3
  Enumerate, // always enumerate (refused past kEnumerationLimit owners)
};
constexpr int64_t kAutoEnumerationLimit = 1 << 12;
constexpr int64_t kEnumerationLimit = 1 << 20;

struct VerifyOptions {
  ProofEngine engine = ProofEngine::Auto;
  unsigned timeoutMs = 10000; // per Z3 query
};

struct LayoutReport {
  std::vector<LayoutViolation> violations;
  // Input errors (shape not admitted) and proofs the engine could not decide.
  std::vector<std::string> undecided;
  bool legal() const { return violations.empty() && undecided.empty(); }
};

// Proves scope, bounds, alias and replica legality of `layout` for a buffer
// of `shape`. At most one violation per kind (one per axis for bounds).
LayoutReport verifyLayout(const Layout &layout, const std::vector<int64_t> &shape,
                          const BufferInfo &buffer, const TargetInfo &target,
                          const LaunchShape &launch, const VerifyOptions &options = {});

// One buffer as the overlap proof sees it.
struct BufferView {
  const Layout *layout;
  std::vector<int64_t> shape;
  BufferInfo info;
};

// Proves that two buffers of the same space never occupy the same slot:
// shared / global memory bytes, TMEM lanes x columns, registers of one thread.
// Buffers of different scopes never overlap.
LayoutReport verifyNoOverlap(const BufferView &a, const BufferView &b,
                             const VerifyOptions &options = {});

// The extent the verifier bounds axis `a` by for this buffer (0: unbounded).
int64_t boundOf(Axis a, const BufferInfo &buffer, const std::vector<int64_t> &shape,
                const TargetInfo &target, const LaunchShape &launch);

// `(3, 9)`
std::string formatLogical(const std::vector<int64_t> &coords);

} // namespace tilescope
