// softmax(X -> Y): over the last axis, Y = exp(X - max) / sum(exp(X - max)).
//
// Tolerance (single-precision arithmetic inside the kernel): with n the row
// length and D = max |X| over the row, each exp(x - m) carries a relative
// error of at most (|x| + |m| + 2) u (the rounded subtraction, or a scaled
// exp2, moves the exponent by u |x - m| <= u (|x| + |m|); the exp itself a
// few units), the sum of n positive terms (n - 1) u more, the division u:
// relative (4 D + n + 8) u with u = 2^-24, plus 2^-126 absolute for terms
// that underflow (flush to zero) in single precision.
#include "simulator/ReferenceRules.h"

#include <fmt/format.h>

#include <cmath>

namespace tilescope::sim {

namespace {

std::optional<ProblemError> check(const BoundProblem &p, const std::vector<HostTensor> &t) {
  const HostTensor &x = t[p.inputs[0]], &y = t[p.outputs[0]];
  if (x.shape.empty())
    return errorAt(p, x.name, fmt::format("softmax input '{}' has no axis", x.name));
  return sameShape(p, y, x);
}

std::vector<Expected> reference(const BoundProblem &p, const std::vector<HostTensor> &t,
                                const NeededFn &) {
  const HostTensor &x = t[p.inputs[0]];
  int64_t n = x.shape.back(), rows = n == 0 ? 0 : x.elements() / n;
  std::vector<double> xv = decodedValues(x);
  Expected e = Expected::zeros(x.elements());
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = xv.data() + r * n;
    double m = -INFINITY, d = 0, sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      m = std::max(m, row[j]);
      d = std::max(d, std::fabs(row[j]));
    }
    for (int64_t j = 0; j < n; ++j)
      sum += std::exp(row[j] - m);
    double rel = (4 * d + static_cast<double>(n) + 8) * kF32Unit;
    for (int64_t j = 0; j < n; ++j) {
      double y = std::exp(row[j] - m) / sum;
      e.value[r * n + j] = y;
      e.bound[r * n + j] = rel * y + 0x1p-126;
    }
  }
  return oneOutput(std::move(e));
}

} // namespace

const ProblemRule &softmaxRule() {
  static const ProblemRule rule{"softmax", "softmax(X -> Y)", 1, 0, 1, false, {}, check, reference};
  return rule;
}

} // namespace tilescope::sim
