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
#include "ir/LayoutFacts.h"
#include "ir/Target.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

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


} // namespace tilescope
