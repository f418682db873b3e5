// attention(Q, K, V -> O [, scale = S, causal = true, lse = L]): for every
// leading (batch, head) index and query row i,
//   s_ij = S * q_i . k_j            (S defaults to 1 / sqrt(D))
//   O_i  = sum_j p_ij v_j,  p_ij = exp(s_ij - m_i) / l_i,  l_i = sum_j exp(s_ij - m_i)
//   L_i  = m_i + log(l_i)           (natural log; -inf for a row with no key)
// over the keys j the mask allows: with causal = true, j <= i + (Sk - Sq)
// (the last query row sees every key, as FlashAttention aligns it). A row
// with no key has O_i = 0.
//
// Shapes: Q [..., Sq, D], K [..., Sk, D], V [..., Sk, Dv], O [..., Sq, Dv],
// L [..., Sq], with equal leading dimensions.
//
// Tolerance, per row i (u = 2^-24; the kernel computes S in single precision,
// holds P in V's format for the P V product and rescales its accumulator and
// its row sum by the same factor, as FlashAttention does):
//   ds_ij  = S 4 (D + 2) u sum_d |q_id k_jd| + u |s_ij|   (the Q K^T gemm, the scaling)
//   dp     = max_j (ds_ij + (|s_ij| + |m_i| + 2) u)        (relative error of exp(s - m))
//   up     = unit roundoff of V's format (P is rounded into it)
//   dl     = (Sk + 2) u + dp + up                           (the row sum)
//   O:  (2 dp + 2 up + 4 (Sk + 2) u + (Sk + 2) u + 2 Sk u) sum_j p_ij |v_jc|
//       (exp in the numerator and in the row sum, P rounded into V's format and
//       a row sum of rounded or unrounded P, the P V gemm, the row sum's
//       additions, two roundings per rescale; the final division is within
//       the output's rounding term)
//   L:  max_j ds_ij + dl + 3 u (|L_i| + 1)
#include "simulator/ReferenceRules.h"

#include <fmt/format.h>

#include <cmath>

namespace tilescope::sim {

namespace {

struct Dims {
  int64_t batch, Sq, Sk, D, Dv;
};

Dims dimsOf(const BoundProblem &p, const std::vector<HostTensor> &t) {
  const HostTensor &q = t[p.inputs[0]], &v = t[p.inputs[2]];
  size_t r = q.shape.size();
  return {q.elements() / (q.shape[r - 2] * q.shape[r - 1]), q.shape[r - 2], v.shape[r - 2],
          q.shape[r - 1], v.shape[r - 1]};
}

std::optional<ProblemError> check(const BoundProblem &p, const std::vector<HostTensor> &t) {
  const HostTensor &q = t[p.inputs[0]], &k = t[p.inputs[1]], &v = t[p.inputs[2]],
                   &o = t[p.outputs[0]];
  size_t r = q.shape.size();
  if (r < 2)
    return errorAt(p, q.name,
                   fmt::format("attention query '{}' is {}; it needs [..., Sq, D]", q.name,
                               shapeText(q.shape)));
  std::vector<int64_t> lead(q.shape.begin(), q.shape.end() - 2);
  auto expect = [&](const HostTensor &x, std::vector<int64_t> tail,
                    const char *what) -> std::optional<ProblemError> {
    std::vector<int64_t> want = lead;
    want.insert(want.end(), tail.begin(), tail.end());
    if (x.shape == want)
      return std::nullopt;
    return errorAt(p, x.name,
                   fmt::format("'{}' is {}; with '{}' {} it must be {} ({})", x.name,
                               shapeText(x.shape), q.name, shapeText(q.shape), shapeText(want),
                               what));
  };
  for (const HostTensor *x : {&k, &v})
    if (x->shape.size() != r)
      return errorAt(p, x->name,
                     fmt::format("'{}' is {}; it needs the rank of '{}' {}", x->name,
                                 shapeText(x->shape), q.name, shapeText(q.shape)));
  int64_t Sq = q.shape[r - 2], D = q.shape[r - 1];
  int64_t Sk = k.shape[r - 2];
  if (auto e = expect(k, {Sk, D}, "[..., Sk, D]"))
    return e;
  int64_t Dv = v.shape[r - 1];
  if (auto e = expect(v, {Sk, Dv}, "[..., Sk, Dv]"))
    return e;
  if (auto e = expect(o, {Sq, Dv}, "[..., Sq, Dv]"))
    return e;
  if (auto it = p.tensors.find("lse"); it != p.tensors.end())
    if (auto e = expect(t[it->second], {Sq}, "[..., Sq]"))
      return e;
  return std::nullopt;
}

std::vector<Expected> reference(const BoundProblem &p, const std::vector<HostTensor> &t,
                                const NeededFn &needed) {
  auto [batch, Sq, Sk, D, Dv] = dimsOf(p, t);
  std::vector<double> qv = decodedValues(t[p.inputs[0]]), kv = decodedValues(t[p.inputs[1]]),
                      vv = decodedValues(t[p.inputs[2]]);
  double scale =
      p.numbers.count("scale") ? p.numbers.at("scale") : 1.0 / std::sqrt(static_cast<double>(D));
  bool causal = p.numbers.count("causal") && p.numbers.at("causal") != 0;
  bool hasLse = p.tensors.count("lse") != 0;
  double u = kF32Unit, up = std::max(unitRoundoff(t[p.inputs[2]].dtype), u);
  std::vector<Expected> out(hasLse ? 2 : 1);
  out[0] = Expected::zeros(batch * Sq * Dv);
  if (hasLse)
    out[1] = Expected::zeros(batch * Sq);
  std::vector<double> s(Sk), ds(Sk), pv(Sk);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < Sq; ++i) {
      int64_t row = b * Sq + i;
      bool any = hasLse && needed(1, row);
      for (int64_t c = 0; c < Dv && !any; ++c)
        any = needed(0, row * Dv + c);
      if (!any)
        continue;
      int64_t keys = causal ? std::clamp<int64_t>(i + (Sk - Sq) + 1, 0, Sk) : Sk;
      const double *q = qv.data() + row * D;
      double m = -INFINITY, dsMax = 0;
      for (int64_t j = 0; j < keys; ++j) {
        const double *k = kv.data() + (b * Sk + j) * D;
        double dot = 0, abs = 0;
        for (int64_t d = 0; d < D; ++d) {
          dot += q[d] * k[d];
          abs += std::fabs(q[d] * k[d]);
        }
        s[j] = scale * dot;
        ds[j] = std::fabs(scale) * 4.0 * static_cast<double>(D + 2) * u * abs + u * std::fabs(s[j]);
        m = std::max(m, s[j]);
        dsMax = std::max(dsMax, ds[j]);
      }
      double l = 0, dp = 0;
      for (int64_t j = 0; j < keys; ++j) {
        pv[j] = std::exp(s[j] - m);
        l += pv[j];
        dp = std::max(dp, ds[j] + (std::fabs(s[j]) + std::fabs(m) + 2) * u);
      }
      double dl = static_cast<double>(Sk + 2) * u + dp + up;
      // dp twice (numerator and row sum), up twice (P in V's format, a row
      // sum of the rounded or the unrounded P), the P V gemm, the row sum's
      // additions, two roundings per rescale.
      double rel = 2 * dp + 2 * up + 4.0 * static_cast<double>(Sk + 2) * u +
                   static_cast<double>(Sk + 2) * u + 2.0 * static_cast<double>(Sk) * u;
      for (int64_t c = 0; c < Dv; ++c) {
        double acc = 0, abs = 0, flushed = 0;
        for (int64_t j = 0; j < keys; ++j) {
          double v = vv[(b * Sk + j) * Dv + c];
          double term = pv[j] / l * v;
          acc += term;
          abs += std::fabs(term);
          flushed += std::fabs(v);
        }
        out[0].value[row * Dv + c] = acc;
        // Plus 2^-126 |v| / l a key: the hardware's exp may flush a weight
        // below 2^-126 to zero (as for softmax). It matters where the terms
        // that survive cancel or are zero: a one-hot row of P whose V element
        // is 0 expects the flushed keys' ~1e-40 (widened inputs, session 24).
        out[0].bound[row * Dv + c] = rel * abs + 0x1p-126 * flushed / l;
      }
      if (hasLse) {
        double lse = keys == 0 ? -INFINITY : m + std::log(l);
        out[1].value[row] = lse;
        out[1].bound[row] = keys == 0 ? 0 : dsMax + dl + 3 * u * (std::fabs(lse) + 1);
      }
    }
  return out;
}

} // namespace

const ProblemRule &attentionRule() {
  static const ProblemRule rule{"attention",
                                "attention(Q, K, V -> O [, scale = S, causal = true, lse = L])",
                                3,
                                0,
                                1,
                                false,
                                {{"scale", OptionKind::Number},
                                 {"causal", OptionKind::Bool},
                                 {"lse", OptionKind::OutputTensor}},
                                check,
                                reference};
  return rule;
}

} // namespace tilescope::sim
