// Element-wise problems: copy(X -> Y), transpose(X -> Y), the maps relu,
// gelu, gelu_tanh, silu, exp (X -> Y), the scalar maps scale(X, s -> Y) and
// add_scalar(X, s -> Y), and the binary ops add, sub, mul, max, min (A, B ->
// C) with B of A's shape or a suffix of it. Also the activations gemm's
// epilogue shares (ReferenceRules.h).
//
// Tolerances (docs/simulator.md, "References"): copy, transpose, relu, max
// and min are exact (the output's rounding only); one f32 operation adds one
// unit of 2^-24 of its result (add, sub, mul, scale, add_scalar, counting the
// operands' magnitudes for sums); a transcendental a few units of the terms
// it is built from (activationBound).
#include "simulator/ReferenceRules.h"

#include <fmt/format.h>

#include <cmath>
#include <memory>

namespace tilescope::sim {

double activation(std::string_view name, double x) {
  if (name == "relu")
    return x > 0 ? x : 0.0;
  if (name == "gelu")
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  if (name == "gelu_tanh")
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  if (name == "silu")
    return x / (1.0 + std::exp(-x));
  if (name == "exp")
    return std::exp(x);
  return x; // identity
}

double activationBound(std::string_view name, double x, double y) {
  double ax = std::fabs(x);
  if (name == "gelu")
    return 8.0 * kF32Unit * ax;
  if (name == "gelu_tanh")
    return 8.0 * kF32Unit * ax * (1.0 + ax + 0.05 * ax * ax * ax);
  if (name == "silu")
    return 8.0 * kF32Unit * ax * (1.0 + ax);
  if (name == "exp")
    return (4.0 + 2.0 * ax) * kF32Unit * std::fabs(y);
  return 0; // relu, identity: exact
}

double activationSlope(std::string_view name, double x) {
  if (name == "gelu" || name == "gelu_tanh")
    return 1.13;
  if (name == "silu")
    return 1.1;
  if (name == "exp")
    return std::exp(x) * 1.01;
  return 1.0;
}

const std::vector<std::string_view> &activationNames() {
  static const std::vector<std::string_view> names = {"relu", "gelu", "gelu_tanh", "silu",
                                                      "identity"};
  return names;
}

namespace {

// B of A's shape or a suffix of it (broadcast along A's leading axes).
bool suffixOf(const std::vector<int64_t> &b, const std::vector<int64_t> &a) {
  if (b.size() > a.size() || b.empty())
    return false;
  return std::equal(b.begin(), b.end(), a.end() - static_cast<std::ptrdiff_t>(b.size()));
}

ProblemRule unaryRule(std::string_view kind, std::string_view signature) {
  auto check = [](const BoundProblem &p, const std::vector<HostTensor> &t) {
    return sameShape(p, t[p.outputs[0]], t[p.inputs[0]]);
  };
  auto reference = [kind](const BoundProblem &p, const std::vector<HostTensor> &t,
                          const NeededFn &needed) {
    std::vector<double> x = decodedValues(t[p.inputs[0]]);
    Expected e = Expected::zeros(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      if (!needed(0, static_cast<int64_t>(i)))
        continue;
      e.value[i] = kind == "copy" ? x[i] : activation(kind, x[i]);
      e.bound[i] = kind == "copy" ? 0 : activationBound(kind, x[i], e.value[i]);
    }
    return oneOutput(std::move(e));
  };
  return ProblemRule{kind, signature, 1, 0, 1, false, {}, check, reference};
}

ProblemRule scalarRule(std::string_view kind, std::string_view signature) {
  auto check = [](const BoundProblem &p, const std::vector<HostTensor> &t) {
    return sameShape(p, t[p.outputs[0]], t[p.inputs[0]]);
  };
  auto reference = [kind](const BoundProblem &p, const std::vector<HostTensor> &t,
                          const NeededFn &needed) {
    std::vector<double> x = decodedValues(t[p.inputs[0]]);
    double s = p.numbers.at(p.spec.inputs[1].name);
    Expected e = Expected::zeros(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      if (!needed(0, static_cast<int64_t>(i)))
        continue;
      bool scale = kind == "scale";
      e.value[i] = scale ? s * x[i] : x[i] + s;
      e.bound[i] = kF32Unit * (scale ? std::fabs(e.value[i]) : std::fabs(x[i]) + std::fabs(s));
    }
    return oneOutput(std::move(e));
  };
  return ProblemRule{kind, signature, 1, 1, 1, false, {}, check, reference, true};
}

ProblemRule binaryRule(std::string_view kind, std::string_view signature) {
  auto check = [](const BoundProblem &p,
                  const std::vector<HostTensor> &t) -> std::optional<ProblemError> {
    const HostTensor &a = t[p.inputs[0]], &b = t[p.inputs[1]], &c = t[p.outputs[0]];
    if (!suffixOf(b.shape, a.shape))
      return errorAt(p, b.name,
                     fmt::format("'{}' is {}; it needs the shape of '{}' {} or a suffix of it",
                                 b.name, shapeText(b.shape), a.name, shapeText(a.shape)));
    return sameShape(p, c, a);
  };
  auto reference = [kind](const BoundProblem &p, const std::vector<HostTensor> &t,
                          const NeededFn &needed) {
    std::vector<double> a = decodedValues(t[p.inputs[0]]), b = decodedValues(t[p.inputs[1]]);
    Expected e = Expected::zeros(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      if (!needed(0, static_cast<int64_t>(i)))
        continue;
      double x = a[i], y = b[i % b.size()], v = 0, bound = 0;
      if (kind == "add" || kind == "sub") {
        v = kind == "add" ? x + y : x - y;
        bound = kF32Unit * (std::fabs(x) + std::fabs(y));
      } else if (kind == "mul") {
        v = x * y;
        bound = kF32Unit * std::fabs(v);
      } else {
        v = kind == "max" ? std::max(x, y) : std::min(x, y);
      }
      e.value[i] = v;
      e.bound[i] = bound;
    }
    return oneOutput(std::move(e));
  };
  return ProblemRule{kind, signature, 2, 0, 1, false, {}, check, reference};
}

std::optional<ProblemError> checkTranspose(const BoundProblem &p,
                                           const std::vector<HostTensor> &t) {
  const HostTensor &x = t[p.inputs[0]], &y = t[p.outputs[0]];
  if (x.shape.size() < 2)
    return errorAt(p, x.name,
                   fmt::format("transpose input '{}' is {}; it needs at least 2 axes", x.name,
                               shapeText(x.shape)));
  std::vector<int64_t> want = x.shape;
  std::swap(want[want.size() - 1], want[want.size() - 2]);
  if (y.shape != want)
    return errorAt(p, y.name,
                   fmt::format("output '{}' is {}; the transpose of '{}' {} is {}", y.name,
                               shapeText(y.shape), x.name, shapeText(x.shape), shapeText(want)));
  return std::nullopt;
}

std::vector<Expected> transposeReference(const BoundProblem &p, const std::vector<HostTensor> &t,
                                         const NeededFn &needed) {
  const HostTensor &x = t[p.inputs[0]];
  std::vector<double> xv = decodedValues(x);
  int64_t R = x.shape[x.shape.size() - 2], C = x.shape.back(), batch = x.elements() / (R * C);
  Expected e = Expected::zeros(xv.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t r = 0; r < R; ++r) {
        int64_t out = b * R * C + c * R + r;
        if (needed(0, out))
          e.value[out] = xv[b * R * C + r * C + c];
      }
  return oneOutput(std::move(e));
}

} // namespace

const std::vector<const ProblemRule *> &elementwiseRules() {
  static const std::vector<std::unique_ptr<ProblemRule>> owned = [] {
    std::vector<std::unique_ptr<ProblemRule>> v;
    auto add = [&](ProblemRule r) { v.push_back(std::make_unique<ProblemRule>(std::move(r))); };
    add(unaryRule("copy", "copy(X -> Y)"));
    add(ProblemRule{
        "transpose", "transpose(X -> Y)", 1, 0, 1, false, {}, checkTranspose, transposeReference});
    for (std::string_view k : {"relu", "gelu", "gelu_tanh", "silu", "exp"})
      add(unaryRule(k, "MAP(X -> Y) with MAP one of relu, gelu, gelu_tanh, silu, exp"));
    add(scalarRule("scale", "scale(X, s -> Y)"));
    add(scalarRule("add_scalar", "add_scalar(X, s -> Y)"));
    for (std::string_view k : {"add", "sub", "mul", "max", "min"})
      add(binaryRule(k, "OP(A, B -> C) with OP one of add, sub, mul, max, min"));
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
