// gemm(A[^T], B[^T] -> C [, scale_a = SA, scale_b = SB, block = N,
//                          alpha = s, bias = Bv, act = relu]):
// C[i, j] = act(alpha * sum_k (A[i, k] * SA[i, k / N]) * (B[k, j] * SB[k / N, j]) + Bv[j]),
// with alpha a number or a scalar parameter (an fp8 GEMM's per-tensor scales,
// multiplied), 1 by default,
// with Bv of shape [N] (one per column) or [M, N], act one of relu, gelu
// (erf form), gelu_tanh, silu, identity (the default), and
// A stored M x K (K x M when transposed) and B stored K x N (N x K when
// transposed). A scale tensor has its operand's stored shape with the K axis
// divided by the block: MX formats use ue8m0 scales per 32 elements, NVFP4
// e4m3 scales per 16.
#include "simulator/ReferenceRules.h"

#include <fmt/format.h>

#include <cmath>

namespace tilescope::sim {

namespace {

struct GemmShape {
  int64_t M, N, K;
};

GemmShape shapeOf(const BoundProblem &p, const std::vector<HostTensor> &t) {
  const HostTensor &a = t[p.inputs[0]], &c = t[p.outputs[0]];
  bool ta = p.spec.inputs[0].transposed;
  return {c.shape[0], c.shape[1], ta ? a.shape[0] : a.shape[1]};
}

// The stored shape a scale tensor of an operand must have.
std::vector<int64_t> scaleShape(const std::vector<int64_t> &operand, bool kFirst, int64_t block) {
  std::vector<int64_t> s = operand;
  s[kFirst ? 0 : 1] /= block;
  return s;
}

std::optional<ProblemError> check(const BoundProblem &p, const std::vector<HostTensor> &t) {
  const HostTensor &a = t[p.inputs[0]], &b = t[p.inputs[1]], &c = t[p.outputs[0]];
  for (const HostTensor *x : {&a, &b, &c})
    if (x->shape.size() != 2)
      return errorAt(p, x->name,
                     fmt::format("gemm operand '{}' is {}, not 2-D", x->name, shapeText(x->shape)));
  bool ta = p.spec.inputs[0].transposed, tb = p.spec.inputs[1].transposed;
  int64_t M = c.shape[0], N = c.shape[1], K = ta ? a.shape[0] : a.shape[1];
  if ((ta ? a.shape[1] : a.shape[0]) != M)
    return errorAt(p, a.name,
                   fmt::format("'{}' is {} but '{}' is {}: M does not agree", a.name,
                               shapeText(a.shape), c.name, shapeText(c.shape)));
  if ((tb ? b.shape[1] : b.shape[0]) != K)
    return errorAt(p, b.name,
                   fmt::format("'{}'{} is {} but '{}'{} has K = {}", b.name, tb ? "^T" : "",
                               shapeText(b.shape), a.name, ta ? "^T" : "", K));
  if ((tb ? b.shape[0] : b.shape[1]) != N)
    return errorAt(p, b.name,
                   fmt::format("'{}' is {} but '{}' is {}: N does not agree", b.name,
                               shapeText(b.shape), c.name, shapeText(c.shape)));
  if (auto it = p.tensors.find("bias"); it != p.tensors.end()) {
    const HostTensor &bias = t[it->second];
    if (bias.shape != std::vector<int64_t>{N} && bias.shape != c.shape)
      return errorAt(p, bias.name,
                     fmt::format("bias '{}' is {}; it needs [{}] (one per column) or {}", bias.name,
                                 shapeText(bias.shape), N, shapeText(c.shape)));
  }
  bool scaled = p.tensors.count("scale_a") || p.tensors.count("scale_b");
  if (p.numbers.count("block") && !scaled)
    return errorAt(p, "block", "block without scale_a or scale_b");
  if (!scaled)
    return std::nullopt;
  if (!p.numbers.count("block"))
    return errorAt(p, "scale_a", "block scales need block = N (elements per scale along K)");
  auto block = static_cast<int64_t>(p.numbers.at("block"));
  if (K % block != 0)
    return errorAt(p, "block", fmt::format("block {} does not divide K = {}", block, K));
  struct Side {
    const char *key;
    const HostTensor &operand;
    bool kFirst;
  };
  for (const Side &s : {Side{"scale_a", a, ta}, Side{"scale_b", b, !tb}}) {
    auto it = p.tensors.find(s.key);
    if (it == p.tensors.end())
      continue;
    const HostTensor &sc = t[it->second];
    std::vector<int64_t> want = scaleShape(s.operand.shape, s.kFirst, block);
    if (sc.shape != want)
      return errorAt(p, sc.name,
                     fmt::format("scale tensor '{}' is {}; {} = ... of '{}' {} with "
                                 "block {} needs {}",
                                 sc.name, shapeText(sc.shape), s.key, s.operand.name,
                                 shapeText(s.operand.shape), block, shapeText(want)));
  }
  return std::nullopt;
}

// Decoded operand values with their block scales applied (exact in double:
// narrow formats times powers of two or e4m3 scales).
std::vector<double> scaledValues(const BoundProblem &p, const std::vector<HostTensor> &t,
                                 size_t input, const char *scaleKey, bool kFirst) {
  const HostTensor &x = t[p.inputs[input]];
  std::vector<double> v = decodedValues(x);
  auto it = p.tensors.find(scaleKey);
  if (it == p.tensors.end())
    return v;
  const HostTensor &sc = t[it->second];
  std::vector<double> s = decodedValues(sc);
  auto block = static_cast<int64_t>(p.numbers.at("block"));
  int64_t rows = x.shape[0], cols = x.shape[1];
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      v[r * cols + c] *= kFirst ? s[(r / block) * cols + c] : s[r * sc.shape[1] + c / block];
  return v;
}

std::vector<Expected> reference(const BoundProblem &p, const std::vector<HostTensor> &t,
                                const NeededFn &needed) {
  bool ta = p.spec.inputs[0].transposed, tb = p.spec.inputs[1].transposed;
  auto [M, N, K] = shapeOf(p, t);
  std::vector<double> av = scaledValues(p, t, 0, "scale_a", ta);
  std::vector<double> bv = scaledValues(p, t, 1, "scale_b", !tb);
  std::vector<double> biasv;
  if (auto it = p.tensors.find("bias"); it != p.tensors.end())
    biasv = decodedValues(t[it->second]);
  std::string act = p.names.count("act") ? p.names.at("act") : "identity";
  Expected e{std::vector<double>(M * N), std::vector<double>(M * N)};
  // Accumulation error: fp32 sums truncated per k chunk (tensor cores) or
  // rounded per fma, bounded by a few units of 2^-24 per term. The sm_90 fp8
  // tensor cores (unscaled e4m3 / e5m2 operands) keep 13 mantissa bits of each
  // 32-product chunk's fused sum (docs/semantics.md, "Numerics"): each of the
  // chunk's 33 terms loses less than 2^-13 of the chunk's largest magnitude
  // (the running sum or a product), and the chunk's result less than 2^-13 of
  // its magnitude.
  bool fp8Sums = dtypeBits(t[p.inputs[0]].dtype) == 8 && isFloat(t[p.inputs[0]].dtype) &&
                 !p.tensors.count("scale_a") && !p.tensors.count("scale_b");
  constexpr int64_t kFp8Chunk = 32;
  double accUnit = 4.0 * static_cast<double>(K + 2) * kF32Unit;
  double alpha = p.numbers.count("alpha") ? p.numbers.at("alpha") : 1.0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      if (!needed(0, i * N + j))
        continue;
      double s = 0, abs = 0, fp8Bound = 0, largest = 0, chunkAbs = 0;
      for (int64_t k = 0; k < K; ++k) {
        if (fp8Sums && k % kFp8Chunk == 0) {
          largest = std::fabs(s);
          chunkAbs = std::fabs(s);
        }
        double x = av[ta ? k * M + i : i * K + k], y = bv[tb ? j * K + k : k * N + j];
        s += x * y;
        abs += std::fabs(x * y);
        largest = std::max(largest, std::fabs(x * y));
        chunkAbs += std::fabs(x * y);
        if (fp8Sums && (k % kFp8Chunk == kFp8Chunk - 1 || k == K - 1))
          fp8Bound += 0x1p-13 * (static_cast<double>(kFp8Chunk + 1) * largest + chunkAbs);
      }
      double bound = fp8Sums ? fp8Bound + accUnit * abs : accUnit * abs;
      if (p.numbers.count("alpha")) {
        // The epilogue's f32 multiply by alpha: one more rounding.
        s *= alpha;
        bound = bound * std::fabs(alpha) + kF32Unit * std::fabs(s);
      }
      if (!biasv.empty()) {
        // The epilogue's f32 add of the bias: one more rounding.
        double b = biasv[(i * N + j) % biasv.size()];
        bound += kF32Unit * (std::fabs(s) + std::fabs(b));
        s += b;
      }
      // An error in the activation's argument carries through its slope.
      double y = activation(act, s);
      e.value[i * N + j] = y;
      e.bound[i * N + j] = activationSlope(act, s) * bound + activationBound(act, s, y);
    }
  return {std::move(e)};
}

} // namespace

const ProblemRule &gemmRule() {
  static const ProblemRule rule{
      "gemm",
      "gemm(A[^T], B[^T] -> C [, scale_a = SA, scale_b = SB, block = N, alpha = s, bias = Bv, "
      "act = relu|gelu|gelu_tanh|silu|identity])",
      2,
      0,
      1,
      true,
      {{"scale_a", OptionKind::ScaleTensor},
       {"scale_b", OptionKind::ScaleTensor},
       {"block", OptionKind::Integer},
       {"alpha", OptionKind::Number},
       {"bias", OptionKind::InputTensor},
       {"act", OptionKind::Name, activationNames()}},
      check,
      reference};
  return rule;
}

} // namespace tilescope::sim
