// Reductions: sum, max and mean (X [, axis = k] -> Y). Over axis k, Y has X's
// shape without that axis (or with extent 1 there); without an axis over the
// last axis, or over every element when Y has a single element.
//
// Tolerances (docs/simulator.md, "References"): max is exact; an f32 sum of n
// terms in any order is within (n - 1) units of 2^-24 of the sum of their
// magnitudes, taken as n units; mean adds one rounding of the division.
#include "simulator/ReferenceRules.h"

#include <fmt/format.h>

#include <cmath>
#include <memory>

namespace tilescope::sim {

namespace {

// The reduced axis of X, or -1 for all of them.
int reducedAxis(const BoundProblem &p, const std::vector<HostTensor> &t) {
  const HostTensor &x = t[p.inputs[0]], &y = t[p.outputs[0]];
  if (auto it = p.numbers.find("axis"); it != p.numbers.end())
    return static_cast<int>(it->second);
  if (y.elements() == 1 && x.elements() != 1)
    return -1;
  return static_cast<int>(x.shape.size()) - 1;
}

std::optional<ProblemError> check(const BoundProblem &p, const std::vector<HostTensor> &t) {
  const HostTensor &x = t[p.inputs[0]], &y = t[p.outputs[0]];
  int axis = reducedAxis(p, t);
  if (axis >= static_cast<int>(x.shape.size()))
    return errorAt(
        p, "axis",
        fmt::format("axis {} is out of range for '{}' {}", axis, x.name, shapeText(x.shape)));
  if (axis < 0)
    return std::nullopt;
  std::vector<int64_t> dropped = x.shape, kept = x.shape;
  dropped.erase(dropped.begin() + axis);
  kept[axis] = 1;
  if (y.shape != dropped && y.shape != kept)
    return errorAt(p, y.name,
                   fmt::format("output '{}' is {}; reducing '{}' {} over axis {} gives {}", y.name,
                               shapeText(y.shape), x.name, shapeText(x.shape), axis,
                               shapeText(dropped)));
  return std::nullopt;
}

ProblemRule reduceRule(std::string_view kind) {
  auto reference = [kind](const BoundProblem &p, const std::vector<HostTensor> &t,
                          const NeededFn &needed) {
    const HostTensor &x = t[p.inputs[0]], &y = t[p.outputs[0]];
    std::vector<double> xv = decodedValues(x);
    int axis = reducedAxis(p, t);
    // X as [outer, n, inner] around the reduced axis (n = everything for -1).
    int64_t outer = 1, n = x.elements(), inner = 1;
    if (axis >= 0) {
      n = x.shape[axis];
      for (int d = 0; d < axis; ++d)
        outer *= x.shape[d];
      for (size_t d = axis + 1; d < x.shape.size(); ++d)
        inner *= x.shape[d];
    }
    Expected e = Expected::zeros(y.elements());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t out = o * inner + i;
        if (!needed(0, out))
          continue;
        double s = 0, abs = 0, m = -INFINITY;
        for (int64_t k = 0; k < n; ++k) {
          double v = xv[(o * n + k) * inner + i];
          s += v;
          abs += std::fabs(v);
          m = std::max(m, v);
        }
        double dn = static_cast<double>(n);
        if (kind == "max") {
          e.value[out] = m;
        } else if (kind == "sum") {
          e.value[out] = s;
          e.bound[out] = dn * kF32Unit * abs;
        } else {
          e.value[out] = s / dn;
          e.bound[out] = (dn + 1) * kF32Unit * abs / dn;
        }
      }
    return oneOutput(std::move(e));
  };
  return ProblemRule{kind,
                     "sum(X [, axis = k] -> Y), likewise max and mean",
                     1,
                     0,
                     1,
                     false,
                     {{"axis", OptionKind::Index}},
                     check,
                     reference};
}

} // namespace

const std::vector<const ProblemRule *> &reduceRules() {
  static const std::vector<std::unique_ptr<ProblemRule>> owned = [] {
    std::vector<std::unique_ptr<ProblemRule>> v;
    for (std::string_view k : {"sum", "max", "mean"})
      v.push_back(std::make_unique<ProblemRule>(reduceRule(k)));
    return v;
  }();
  static const std::vector<const ProblemRule *> rules = [] {
    std::vector<const ProblemRule *> v;
    for (const auto &r : owned)
      v.push_back(r.get());
    return v;
  }();
  return rules;
}

} // namespace tilescope::sim
