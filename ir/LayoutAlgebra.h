// Layout algebra as CuTe teaches it — composition, complement and logical
// division — on tilescope's layouts (S/R/O notation, row-major flattening,
// most significant iter first). Each operation returns a layout in the same
// notation, or says why the answer has no such form.
//
//   compose(A, B)      (A o B)(i) = A(B(i)). B is an index map: a layout on
//                      `m` alone (no replicas, offsets or swizzle) whose
//                      values are flat logical indices of A. A's replicas,
//                      offsets and swizzle carry over.
//                      A = S[(4,8):(8,1)], B = S[(8,4):(1,8)]  ->  S[(8,4):(1,8)]
//   complement(A, M)   for A injective on one axis: the layout C, strides
//                      increasing from the least significant iter, such that
//                      i, j -> A(i) + C(j) is a bijection onto [0, M).
//                      complement(S[4:2], 16)  ->  S[(2,2):(8,1)]
//   divide(A, T)       logical division by the tiler T (an index map like
//                      B): A o (complement(T, |A|), T), a layout of shape
//                      (|A| / |T| tiles, |T| elements per tile): element
//                      (q, r) is A at index T(r) + complement(q).
//
// Strides must divide the extents they cross (as in CuTe); otherwise the
// result is not a layout of this form and the error says which iter fails.
//
// Depends on ir/Layout.h only.
#pragma once

#include "ir/Layout.h"

#include <optional>
#include <string>

namespace tilescope {

std::optional<Layout> compose(const Layout &a, const Layout &b, std::string *error);
std::optional<Layout> complement(const Layout &a, int64_t cosize, std::string *error);
std::optional<Layout> logicalDivide(const Layout &a, const Layout &tiler, std::string *error);

} // namespace tilescope
