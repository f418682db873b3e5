// The normalisations over the last axis:
//   rmsnorm(X, W, eps -> Y): Y[r, h] = X[r, h] / sqrt(mean_h(X[r, :]^2) + eps) * W[h];
//   layernorm(X, W, Bias, eps -> Y):
//       Y[r, h] = (X[r, h] - mean_r) / sqrt(var_r + eps) * W[h] + Bias[h],
//       var_r the biased variance (mean of squared deviations) of row r.
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
  Expected e = Expected::zeros(R * H);
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
  return oneOutput(std::move(e));
}

std::optional<ProblemError> checkLayernorm(const BoundProblem &p,
                                           const std::vector<HostTensor> &t) {
  const HostTensor &x = t[p.inputs[0]], &y = t[p.outputs[0]];
  if (x.shape.empty())
    return errorAt(p, x.name, fmt::format("layernorm input '{}' has no axis", x.name));
  for (int i : {1, 2}) {
    const HostTensor &v = t[p.inputs[i]];
    if (v.shape != std::vector<int64_t>{x.shape.back()})
      return errorAt(p, v.name,
                     fmt::format("'{}' is {}; '{}' {} needs [{}]", v.name, shapeText(v.shape),
                                 x.name, shapeText(x.shape), x.shape.back()));
  }
  return sameShape(p, y, x);
}

// Bounds: the row mean in f32 is within (H + 2) units of 2^-24 of the mean
// magnitude; the variance, also when computed in one pass as E[x^2] - mean^2,
// within 2 (H + 4) units of E[x^2] + mean^2 plus the mean's error carried
// through; 1 / sqrt(var + eps) inherits half the variance's relative error
// plus a few roundings; the scale, weight and bias add a few more.
std::vector<Expected> referenceLayernorm(const BoundProblem &p, const std::vector<HostTensor> &t,
                                         const NeededFn &) {
  const HostTensor &x = t[p.inputs[0]];
  int64_t H = x.shape.back(), R = x.elements() / H;
  std::vector<double> xv = decodedValues(x), wv = decodedValues(t[p.inputs[1]]),
                      bv = decodedValues(t[p.inputs[2]]);
  double eps = p.numbers.at(p.spec.inputs[3].name);
  double u = kF32Unit, dH = static_cast<double>(H);
  Expected e = Expected::zeros(R * H);
  for (int64_t r = 0; r < R; ++r) {
    const double *row = xv.data() + r * H;
    double sum = 0, abs = 0, sq = 0;
    for (int64_t h = 0; h < H; ++h) {
      sum += row[h];
      abs += std::fabs(row[h]);
      sq += row[h] * row[h];
    }
    double mean = sum / dH, var = 0;
    for (int64_t h = 0; h < H; ++h)
      var += (row[h] - mean) * (row[h] - mean);
    var /= dH;
    double rs = 1.0 / std::sqrt(var + eps);
    double dMean = (dH + 2) * u * abs / dH;
    double dVar = 2 * (dH + 4) * u * (sq / dH + mean * mean) + 2 * std::fabs(mean) * dMean;
    double relR = 0.5 * dVar / (var + eps) + 4 * u;
    for (int64_t h = 0; h < H; ++h) {
      double d = row[h] - mean, y = d * rs * wv[h] + bv[h];
      e.value[r * H + h] = y;
      e.bound[r * H + h] = std::fabs(wv[h]) * rs * (std::fabs(d) * relR + dMean) +
                           4 * u * std::fabs(d * rs * wv[h]) + 2 * u * std::fabs(bv[h]);
    }
  }
  return oneOutput(std::move(e));
}

} // namespace

const ProblemRule &layernormRule() {
  static const ProblemRule rule{
      "layernorm",       "layernorm(X, W, Bias, eps -> Y)", 3, 1, 1, false, {}, checkLayernorm,
      referenceLayernorm};
  return rule;
}

const ProblemRule &rmsnormRule() {
  static const ProblemRule rule{"rmsnorm", "rmsnorm(X, W, eps -> Y)", 2, 1, 1, false, {}, check,
                                reference};
  return rule;
}

} // namespace tilescope::sim
