// rmsnorm(X, W, eps -> Y): Y[r, h] = X[r, h] / sqrt(mean_h(X[r, :]^2) + eps) * W[h].
#include "simulator/ReferenceRules.h"

#include <fmt/format.h>

#include <cmath>

namespace tilescope::sim {

namespace {

std::optional<ProblemError> check(const BoundProblem &p, const std::vector<HostTensor> &t) {
  const HostTensor &x = t[p.inputs[0]], &w = t[p.inputs[1]], &y = t[p.outputs[0]];
  if (x.shape.size() != 2)
    return errorAt(p, x.name,
                   fmt::format("rmsnorm input '{}' is {}, not 2-D (rows x hidden)", x.name,
                               shapeText(x.shape)));
  if (w.shape != std::vector<int64_t>{x.shape[1]})
    return errorAt(p, w.name,
                   fmt::format("weight '{}' is {}; '{}' {} needs [{}]", w.name, shapeText(w.shape),
                               x.name, shapeText(x.shape), x.shape[1]));
  return sameShape(p, y, x);
}

std::vector<Expected> reference(const BoundProblem &p, const std::vector<HostTensor> &t,
                                const NeededFn &) {
  const HostTensor &x = t[p.inputs[0]], &w = t[p.inputs[1]];
  int64_t R = x.shape[0], H = x.shape[1];
  std::vector<double> xv = decodedValues(x), wv = decodedValues(w);
  double eps = p.numbers.at(p.spec.inputs[2].name);
  Expected e{std::vector<double>(R * H), std::vector<double>(R * H)};
  for (int64_t r = 0; r < R; ++r) {
    double ss = 0;
    for (int64_t h = 0; h < H; ++h)
      ss += xv[r * H + h] * xv[r * H + h];
    double scale = 1.0 / std::sqrt(ss / static_cast<double>(H) + eps);
    for (int64_t h = 0; h < H; ++h) {
      double y = xv[r * H + h] * scale * wv[h];
      e.value[r * H + h] = y;
      // fp32 sum of squares over H terms and a few fp32 roundings after it.
      e.bound[r * H + h] = std::fabs(y) * static_cast<double>(H + 16) * kF32Unit;
    }
  }
  return {std::move(e)};
}

} // namespace

const ProblemRule &rmsnormRule() {
  static const ProblemRule rule{"rmsnorm", "rmsnorm(X, W, eps -> Y)", 2, 1, 1, false, {}, check,
                                reference};
  return rule;
}

} // namespace tilescope::sim
