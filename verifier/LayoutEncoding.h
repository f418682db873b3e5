// Internal to verifier/: a layout as Z3 terms. One element is a vector of
// shard digits (and replica digits), each constrained to its extent; each axis
// coordinate is the sum of digit x stride plus the offset, with the swizzle
// composed on m. Only verifier/*.cpp include this (it exposes z3++.h, whose
// exceptions must not leave the library).
//
// Sort, chosen per query:
//  - bit-vectors when the layout swizzles (XOR and shifts have no integer
//    counterpart) or when every extent and stride is a power of two: then
//    each digit is a bit-field, range constraints are single bits and
//    bit-blasting decides the query almost by propagation alone;
//  - integers otherwise: digit ranges like d < 5 and multiplications by
//    arbitrary constants stay linear (QF_LIA), where bit-blasting would build
//    multiplier circuits for every stride.
// The width is chosen so that no sum of the question can wrap.
#pragma once

#include "verifier/LayoutChecks.h"
#include "proof/SharedContext.h"

#include <z3++.h>

namespace tilescope::detail {

class LayoutEncoding {
public:
  // Values at or past this do not fit the bit-vectors; queries that reach it
  // use integers, or (with a swizzle, which needs bit-vectors) are refused.
  static constexpr int64_t kHuge = int64_t{1} << 61;
  // `maxValue`: the largest number any term of the query may reach.
  LayoutEncoding(z3::context &ctx, bool bitVector, int64_t maxValue);

  // Whether `layouts` should be encoded with bit-vectors (see above).
  static bool prefersBitVectors(std::initializer_list<const Layout *> layouts);
  // The largest coordinate any owner of `layout` may have on any axis, plus
  // its extents: a bound for the width.
  static int64_t largestValue(const Layout &layout);

  struct Element {
    std::vector<z3::expr> shard, replica;
    std::vector<z3::expr> axis; // by Axis; 0 where the layout puts nothing
  };
  // Declares one element (with its replica digits when `withReplicas`) and
  // adds its range constraints to `solver`.
  Element element(z3::solver &solver, const Layout &layout, const std::string &prefix,
                  bool withReplicas);

  z3::expr num(int64_t v);
  z3::expr less(const z3::expr &a, const z3::expr &b);
  z3::expr lessEq(const z3::expr &a, const z3::expr &b);
  int64_t valueOf(const z3::model &model, const z3::expr &e);
  // A solver for this sort's logic, with a time-out.
  z3::solver solver(unsigned timeoutMs);
  bool bitVector() const { return bitVector_; }

private:
  z3::expr swizzled(const z3::expr &m, const Swizzle &s);
  z3::context &ctx_;
  bool bitVector_;
  unsigned width_;
};

// Flat index and replica number of an element in a model.
int64_t flatIndexOf(LayoutEncoding &enc, const z3::model &model, const Layout &layout,
                    const LayoutEncoding::Element &e);
int64_t replicaIndexOf(LayoutEncoding &enc, const z3::model &model, const Layout &layout,
                       const LayoutEncoding::Element &e);

} // namespace tilescope::detail
