// gemm(A[^T], B[^T] -> C [, scale_a = SA[^T], scale_b = SB[^T], block = N,
//                          block_m = Bm, block_n = Bn, alpha = s, bias = Bv,
//                          act = relu]):
//   C[i, j] = act(alpha * sum_k (A[i, k] * SA[i / Bm, k / N])
//                                * (B[k, j] * SB[k / N, j / Bn]) + Bv[j]),
// with alpha a number or a scalar parameter (an fp8 GEMM's per-tensor scales,
// multiplied), 1 by default, Bv of shape [N] (one per column) or [M, N], act
// one of relu, gelu (erf form), gelu_tanh, silu, identity (the default), A
// stored M x K (K x M when transposed) and B stored K x N (N x K when
// transposed). A scale tensor has its operand's stored shape with the K axis
// divided by the block and the other axis divided by block_m (A) or block_n
// (B), rounded up (1 by default: one scale per row or column); `SA^T` says
// the scale tensor is stored transposed. MX formats use ue8m0 scales per 32
// elements, NVFP4 e4m3 scales per 16; DeepGEMM's FP8 GEMM takes f32 scales
// per row and 128 of K for A, stored K-block-major (`scale_a = SA^T`), and
// per 128 x 128 block for B (`scale_b = SB, block = 128, block_n = 128`).
#include "simulator/Packed.h"
#include "simulator/ReferenceRules.h"
#include "simulator/Value.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>

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

// How a scale tensor covers its operand: K in blocks of `block`, the other
// axis in blocks of `other` (the last one may be partial), stored with the
// operand's orientation or (`transposed`) the other one.
struct ScaleLayout {
  bool kFirst;          // the operand is stored with K first
  int64_t block, other; // elements per scale along K and along the other axis
  bool transposed;      // the scale tensor is stored transposed
};

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// The stored shape a scale tensor of an operand must have.
std::vector<int64_t> scaleShape(const std::vector<int64_t> &operand, const ScaleLayout &l) {
  std::vector<int64_t> s = operand;
  s[l.kFirst ? 0 : 1] /= l.block;
  s[l.kFirst ? 1 : 0] = ceilDiv(s[l.kFirst ? 1 : 0], l.other);
  if (l.transposed)
    std::swap(s[0], s[1]);
  return s;
}

bool optionTransposed(const BoundProblem &p, std::string_view key) {
  for (const ProblemOption &o : p.spec.options)
    if (o.key == key)
      return o.transposed;
  return false;
}

ScaleLayout scaleLayout(const BoundProblem &p, bool isA) {
  bool ta = p.spec.inputs[0].transposed, tb = p.spec.inputs[1].transposed;
  const char *otherKey = isA ? "block_m" : "block_n";
  auto number = [&](const char *key) {
    auto it = p.numbers.find(key);
    return it == p.numbers.end() ? int64_t{1} : static_cast<int64_t>(it->second);
  };
  return {isA ? ta : !tb, number("block"), number(otherKey),
          optionTransposed(p, isA ? "scale_a" : "scale_b")};
}

// The eight-column sums below are written once over a lane group V of
// doubles (P groups make the eight columns) and compiled twice: with one
// 512-bit group for x86-64-v4 and with two 256-bit groups for the other
// clones (x86-64-v3: one AVX operation per group and step; default: two SSE2
// ones). A 512-bit vector type on a target without 512-bit registers is
// lowered through the stack lane by lane (about ten times the instructions
// of the v3 clone's loop: 30 % of the block-scaled grouped GEMM's reward
// counted by callgrind, which runs the v3 clone, 2026-11-28). Each column
// is one lane with the same operations in the same order in every
// instantiation, so every clone and the scalar loops give the same bits. The
// file is compiled without FMA contraction (simulator/CMakeLists.txt). GCC
// (the release build) keeps each addition's operands in the order written;
// clang 14 (the fuzz preset) commutes some in the 512-bit instantiation,
// which changes only which of two NaNs a sum keeps (its sign or payload).
using Oct = double __attribute__((vector_size(64)));
using Quad = double __attribute__((vector_size(32)));
using OctBits = int64_t __attribute__((vector_size(64)));
using QuadBits = int64_t __attribute__((vector_size(32)));

template <typename V> struct Lanes8 {
  static constexpr int kWidth = sizeof(V) / sizeof(double);
  static constexpr int kParts = 8 / kWidth;
  using Bits = std::conditional_t<kWidth == 8, OctBits, QuadBits>;
  V v[kParts];

  // The helpers take and give vectors by reference and are always inlined
  // into the instantiations, whose targets have the registers.
  // |x|: the sign cleared (a vector cast keeps the bits).
  [[gnu::always_inline]] static void magnitude(V &r, const V &x) {
    r = (V)((Bits)x & INT64_MAX); // the scalar in every lane
  }
  [[gnu::always_inline]] void clear() {
    #pragma GCC unroll 8
    for (int p = 0; p < kParts; ++p)
      v[p] = V{};
  }
  [[gnu::always_inline]] void store(double *out) const { std::memcpy(out, v, sizeof v); }
};

// Row `a`'s sums over k of its products with eight consecutive columns of B
// laid out k-major (`b` at the first column, rows `n` apart), and the sums of
// their magnitudes: each column's products and sums in k order, one lane per
// column.
template <typename V>
[[gnu::always_inline]] inline void eightColumnSumsOf(const double *a, const double *b, int64_t K,
                                                     int64_t n, double *sums,
                                                     double *magnitudes) {
  using L = Lanes8<V>;
  L s, abs;
  s.clear();
  abs.clear();
  for (int64_t k = 0; k < K; ++k, b += n) {
    const double x = a[k];
    V bb, xy, m;
    #pragma GCC unroll 8
    for (int p = 0; p < L::kParts; ++p) {
      std::memcpy(&bb, b + p * L::kWidth, sizeof bb);
      xy = x * bb; // x in every lane
      L::magnitude(m, xy);
      s.v[p] += xy;
      abs.v[p] += m;
    }
  }
  s.store(sums);
  abs.store(magnitudes);
}

// The fp8 chunk model's sums (reference below, fp8Elements) of row `a`
// (values `aStep` apart) with eight consecutive columns of B laid out k-major
// (`b` at the first column, rows 8 apart): per column its sum, sum of
// |products| and chunk bound, each lane with fp8Elements' operations in its
// order. fp8Elements tests the chunk (32 of k) and block (`sumBlock` of k)
// boundaries at every k; here the loop runs a chunk at a time, split where a
// block starts inside it, with the same resets at the same k: a block's
// start clears `part` before a chunk's start takes |part|, and a chunk's
// bound is added after its last k (or K's last).
template <typename V>
[[gnu::always_inline]] inline void eightColumnFp8SumsOf(const double *a, int64_t aStep,
                                                        const double *b, int64_t K,
                                                        int64_t sumBlock, double *sums,
                                                        double *magnitudes, double *bounds) {
  using L = Lanes8<V>;
  constexpr int64_t kChunk = 32;
  // fp8Elements resets `part` at k = 0 only when sumBlock is not positive.
  const int64_t block = sumBlock > 0 ? sumBlock : INT64_MAX;
  L s, part, abs, bound, largest, chunkAbs;
  s.clear();
  part.clear();
  abs.clear();
  bound.clear();
  for (int64_t k0 = 0; k0 < K; k0 += kChunk) {
    const int64_t kEnd = std::min(K, k0 + kChunk);
    if (k0 % block == 0)
      part.clear();
    #pragma GCC unroll 8
    for (int p = 0; p < L::kParts; ++p) {
      L::magnitude(largest.v[p], part.v[p]);
      chunkAbs.v[p] = largest.v[p];
    }
    for (int64_t k = k0; k < kEnd;) {
      if (k != k0 && k % block == 0)
        part.clear();
      const int64_t stop = std::min(kEnd, (k / block + 1) * block);
      for (; k < stop; ++k) {
        const double x = a[k * aStep];
        V bb, xy, m;
        #pragma GCC unroll 8
        for (int p = 0; p < L::kParts; ++p) {
          std::memcpy(&bb, b + k * 8 + p * L::kWidth, sizeof bb);
          xy = x * bb; // x in every lane
          L::magnitude(m, xy);
          s.v[p] += xy;
          part.v[p] += xy;
          abs.v[p] += m;
          largest.v[p] = largest.v[p] < m ? m : largest.v[p]; // std::max, lane by lane
          chunkAbs.v[p] += m;
        }
      }
    }
    #pragma GCC unroll 8
    for (int p = 0; p < L::kParts; ++p)
      bound.v[p] += 0x1p-13 * (static_cast<double>(kChunk + 1) * largest.v[p] + chunkAbs.v[p]);
  }
  s.store(sums);
  abs.store(magnitudes);
  bound.store(bounds);
}

#if defined(__GNUC__) && defined(__x86_64__)
#define TILESCOPE_GEMM_WIDE 1
__attribute__((target("arch=x86-64-v4"))) void
eightColumnSumsWide(const double *a, const double *b, int64_t K, int64_t n, double *sums,
                    double *magnitudes) {
  eightColumnSumsOf<Oct>(a, b, K, n, sums, magnitudes);
}
__attribute__((target("arch=x86-64-v4"))) void
eightColumnFp8SumsWide(const double *a, int64_t aStep, const double *b, int64_t K,
                       int64_t sumBlock, double *sums, double *magnitudes, double *bounds) {
  eightColumnFp8SumsOf<Oct>(a, aStep, b, K, sumBlock, sums, magnitudes, bounds);
}
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
void eightColumnSumsNarrow(const double *a, const double *b, int64_t K, int64_t n, double *sums,
                           double *magnitudes) {
  eightColumnSumsOf<Quad>(a, b, K, n, sums, magnitudes);
}

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
void eightColumnFp8SumsNarrow(const double *a, int64_t aStep, const double *b, int64_t K,
                              int64_t sumBlock, double *sums, double *magnitudes,
                              double *bounds) {
  eightColumnFp8SumsOf<Quad>(a, aStep, b, K, sumBlock, sums, magnitudes, bounds);
}

// Whether the processor runs the 512-bit instantiations (what target_clones'
// "arch=x86-64-v4" asks of it).
bool wideLanes() {
#ifdef TILESCOPE_GEMM_WIDE
  static const bool wide = __builtin_cpu_supports("avx512f") &&
                           __builtin_cpu_supports("avx512bw") &&
                           __builtin_cpu_supports("avx512cd") &&
                           __builtin_cpu_supports("avx512dq") &&
                           __builtin_cpu_supports("avx512vl");
  return wide;
#else
  return false;
#endif
}

void eightColumnSums(const double *a, const double *b, int64_t K, int64_t n, double *sums,
                     double *magnitudes) {
#ifdef TILESCOPE_GEMM_WIDE
  if (wideLanes())
    return eightColumnSumsWide(a, b, K, n, sums, magnitudes);
#endif
  eightColumnSumsNarrow(a, b, K, n, sums, magnitudes);
}

void eightColumnFp8Sums(const double *a, int64_t aStep, const double *b, int64_t K,
                        int64_t sumBlock, double *sums, double *magnitudes, double *bounds) {
#ifdef TILESCOPE_GEMM_WIDE
  if (wideLanes())
    return eightColumnFp8SumsWide(a, aStep, b, K, sumBlock, sums, magnitudes, bounds);
#endif
  eightColumnFp8SumsNarrow(a, aStep, b, K, sumBlock, sums, magnitudes, bounds);
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
  if (p.numbers.count("block_m") && !p.tensors.count("scale_a"))
    return errorAt(p, "block_m", "block_m without scale_a");
  if (p.numbers.count("block_n") && !p.tensors.count("scale_b"))
    return errorAt(p, "block_n", "block_n without scale_b");
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
    bool isA;
  };
  for (const Side &s : {Side{"scale_a", a, true}, Side{"scale_b", b, false}}) {
    auto it = p.tensors.find(s.key);
    if (it == p.tensors.end())
      continue;
    const HostTensor &sc = t[it->second];
    ScaleLayout l = scaleLayout(p, s.isA);
    std::vector<int64_t> want = scaleShape(s.operand.shape, l);
    if (sc.shape != want)
      return errorAt(p, sc.name,
                     fmt::format("scale tensor '{}'{} is {}; {} = ... of '{}' {} with "
                                 "block {}{} needs {}",
                                 sc.name, l.transposed ? "^T" : "", shapeText(sc.shape), s.key,
                                 s.operand.name, shapeText(s.operand.shape), block,
                                 l.other > 1 ? fmt::format(" and {} = {}",
                                                           s.isA ? "block_m" : "block_n", l.other)
                                             : "",
                                 shapeText(want)));
  }
  return std::nullopt;
}

// An operand's stored rows decoded with their block scales applied (exact in
// double: narrow formats times powers of two, e4m3 or f32 scales), each when
// first asked for: a run of some CTAs compares a few tiles of a wide B.
class ScaledRows {
public:
  ScaledRows(const BoundProblem &p, const std::vector<HostTensor> &t, size_t input,
             const char *scaleKey)
      : x_(t[p.inputs[input]]), cols_(x_.shape[1]), values_(x_.elements()),
        done_(x_.shape[0], 0) {
    auto it = p.tensors.find(scaleKey);
    if (it == p.tensors.end())
      return;
    const HostTensor &sc = t[it->second];
    scales_ = decodedValues(sc);
    ScaleLayout l = scaleLayout(p, input == 0);
    // The scale's coordinates in the operand's stored orientation: row r
    // reads scale row r / rowStep, and a run of colStep columns shares one
    // scale. (Integer options are positive: Reference.cpp bindOption.)
    rowStep_ = std::max<int64_t>(1, l.kFirst ? l.block : l.other);
    colStep_ = std::max<int64_t>(1, l.kFirst ? l.other : l.block);
    storedCols_ = sc.shape[1];
    transposed_ = l.transposed;
  }

  const double *row(int64_t r) {
    double *out = values_.data() + r * cols_;
    if (done_[r])
      return out;
    done_[r] = 1;
    if (!isPacked(x_.dtype) && x_.bytes.size() >= size_t(x_.elements() * dtypeBytes(x_.dtype)))
      decodeFloats(x_.dtype, x_.bytes.data() + r * cols_ * dtypeBytes(x_.dtype), cols_, out);
    else
      for (int64_t c = 0; c < cols_; ++c)
        out[c] = decodeFloat(x_.dtype, x_.bitsAt(r * cols_ + c));
    if (scales_.empty())
      return out;
    const int64_t sr = r / rowStep_;
    for (int64_t c0 = 0; c0 < cols_; c0 += colStep_) {
      const int64_t scol = c0 / colStep_;
      const double scale =
          transposed_ ? scales_[scol * storedCols_ + sr] : scales_[sr * storedCols_ + scol];
      for (int64_t c = c0; c < std::min(cols_, c0 + colStep_); ++c)
        out[c] *= scale;
    }
    return out;
  }

  // Every row: the operand as decodedValues lays it out, scaled.
  const double *all() {
    for (int64_t r = 0; r < x_.shape[0]; ++r)
      row(r);
    return values_.data();
  }

private:
  const HostTensor &x_;
  int64_t cols_;
  Expected::Values values_; // rows not asked for stay unset (and untouched)
  std::vector<uint8_t> done_;
  std::vector<double> scales_; // empty: no scale tensor
  int64_t rowStep_ = 1, colStep_ = 1, storedCols_ = 0;
  bool transposed_ = false;
};

std::vector<Expected> reference(const BoundProblem &p, const std::vector<HostTensor> &t,
                                const NeededFn &needed) {
  bool ta = p.spec.inputs[0].transposed, tb = p.spec.inputs[1].transposed;
  // Plain variables, not a structured binding: the lambdas below capture
  // them, which clang 14 (the fuzz preset's compiler) does not allow.
  const GemmShape shape = shapeOf(p, t);
  const int64_t M = shape.M, N = shape.N, K = shape.K;
  // A unscaled is decoded row by row, only the rows a needed element reads
  // (a run of some CTAs compares a few tiles of a tall A).
  const bool aRows = !p.tensors.count("scale_a");
  // A scaled and B are decoded a stored row at a time, the rows some needed
  // element reads (all of them when stored transposed to the rows: the
  // layout decodedValues gives).
  ScaledRows as(p, t, 0, "scale_a"), bs(p, t, 1, "scale_b");
  const double *av = aRows || !ta ? nullptr : as.all();
  const double *bv = tb ? nullptr : bs.all();
  std::vector<double> biasv;
  if (auto it = p.tensors.find("bias"); it != p.tensors.end())
    biasv = decodedValues(t[it->second]);
  std::string act = p.names.count("act") ? p.names.at("act") : "identity";
  Expected e = Expected::unset(M * N);
  // Accumulation error: fp32 sums truncated per k chunk (tensor cores) or
  // rounded per fma, bounded by a few units of 2^-24 per term. The sm_90 fp8
  // tensor cores (e4m3 / e5m2 operands, unscaled or with f32 scales, which a
  // kernel applies outside the tensor core) keep 13 mantissa bits of each
  // 32-product chunk's fused sum (docs/semantics.md, "Numerics"): each of the
  // chunk's 33 terms loses less than 2^-13 of the chunk's largest magnitude
  // (the running sum or a product), and the chunk's result less than 2^-13 of
  // its magnitude. With block scales the running sum is the block's: a
  // kernel must apply each K-block's scales to that block's partial sum on
  // the CUDA cores, so the tensor core's sum starts again at every block
  // (scaled values: the block's scales are common to its products, so the
  // bound scales with them).
  bool fp8Operands = dtypeBits(t[p.inputs[0]].dtype) == 8 && isFloat(t[p.inputs[0]].dtype);
  bool f32Scales = true;
  for (const char *key : {"scale_a", "scale_b"})
    if (auto it = p.tensors.find(key); it != p.tensors.end())
      f32Scales = f32Scales && t[it->second].dtype == Dtype::f32;
  bool fp8Sums = fp8Operands && f32Scales;
  int64_t sumBlock = p.numbers.count("block") ? static_cast<int64_t>(p.numbers.at("block")) : K;
  constexpr int64_t kFp8Chunk = 32;
  double accUnit = 4.0 * static_cast<double>(K + 2) * kF32Unit;
  const bool hasAlpha = p.numbers.count("alpha") != 0;
  double alpha = hasAlpha ? p.numbers.at("alpha") : 1.0;
  // The epilogue of one element: its sum s, sum of |products| abs and (fp8)
  // chunk bound.
  auto finish = [&](int64_t i, int64_t j, double s, double abs, double fp8Bound) {
    double bound = fp8Sums ? fp8Bound + accUnit * abs : accUnit * abs;
    if (hasAlpha) {
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
  };
  const int64_t aStep = aRows ? 1 : ta ? M : 1, bStep = tb ? 1 : N;
  std::vector<double> row(aRows ? K : 0);
  const HostTensor &aTensor = t[p.inputs[0]];
  const bool aWhole = !isPacked(aTensor.dtype) &&
                      aTensor.bytes.size() >= size_t(aTensor.elements() * dtypeBytes(aTensor.dtype));
  auto aRow = [&](int64_t i) {
    if (!aRows)
      return ta ? av + i : as.row(i);
    const HostTensor &a = t[p.inputs[0]];
    if (!ta && aWhole) // a stored row: decodeFloats gives decodeFloat's values
      decodeFloats(a.dtype, a.bytes.data() + i * K * dtypeBytes(a.dtype), K, row.data());
    else
      for (int64_t k = 0; k < K; ++k)
        row[k] = decodeFloat(a.dtype, a.bitsAt(ta ? k * M + i : i * K + k));
    return static_cast<const double *>(row.data());
  };
  auto bCol = [&](int64_t j) { return tb ? bs.row(j) : bv + j; };
  // The columns of row i that some compared element needs (false: none).
  auto neededColumns = [&](int64_t i, std::vector<int64_t> &cols) {
    cols.clear();
    if (needed.all()) {
      for (int64_t j = 0; j < N; ++j)
        cols.push_back(j);
      return N > 0;
    }
    for (int64_t j = 0; j < N; ++j)
      if (needed(0, i * N + j))
        cols.push_back(j);
    return !cols.empty();
  };
  if (!fp8Sums) {
    // Without fp8 chunks an element needs only its sum and its sum of
    // |products|, each accumulated in k order as below; four elements of a
    // row at a time give the CPU four independent chains (the same bits).
    // Rows whose every element is compared run eight columns at a time
    // (eightColumnSums: the same products and sums, lane by lane), from B
    // laid out k-major, column block by column block (a block of B stays in
    // cache while the rows pass).
    std::vector<double> bk;
    if (N >= 8) {
      bk.resize(K * N);
      for (int64_t k = 0; k < K; ++k)
        for (int64_t j = 0; j < N; ++j)
          bk[k * N + j] = bCol(j)[k * bStep];
    }
    std::vector<int64_t> cols, full;
    std::vector<double> fullA; // the rows of `full`, K values each
    cols.reserve(N);
    for (int64_t i = 0; i < M; ++i) {
      if (!neededColumns(i, cols))
        continue;
      const double *a = aRow(i);
      size_t c = 0;
      if (!bk.empty() && static_cast<int64_t>(cols.size()) == N) {
        full.push_back(i);
        for (int64_t k = 0; k < K; ++k)
          fullA.push_back(a[k * aStep]);
        c = static_cast<size_t>(N / 8 * 8); // the blocks run below
      }
      for (; c + 4 <= cols.size(); c += 4) {
        const double *b0 = bCol(cols[c]), *b1 = bCol(cols[c + 1]), *b2 = bCol(cols[c + 2]),
                     *b3 = bCol(cols[c + 3]);
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0, abs0 = 0, abs1 = 0, abs2 = 0, abs3 = 0;
        for (int64_t k = 0; k < K; ++k) {
          double x = a[k * aStep];
          int64_t kb = k * bStep;
          double p0 = x * b0[kb], p1 = x * b1[kb], p2 = x * b2[kb], p3 = x * b3[kb];
          s0 += p0, s1 += p1, s2 += p2, s3 += p3;
          abs0 += std::fabs(p0), abs1 += std::fabs(p1), abs2 += std::fabs(p2),
              abs3 += std::fabs(p3);
        }
        finish(i, cols[c], s0, abs0, 0);
        finish(i, cols[c + 1], s1, abs1, 0);
        finish(i, cols[c + 2], s2, abs2, 0);
        finish(i, cols[c + 3], s3, abs3, 0);
      }
      for (; c < cols.size(); ++c) {
        const double *b = bCol(cols[c]);
        double s = 0, abs = 0;
        for (int64_t k = 0; k < K; ++k) {
          double xy = a[k * aStep] * b[k * bStep];
          s += xy;
          abs += std::fabs(xy);
        }
        finish(i, cols[c], s, abs, 0);
      }
    }
    for (int64_t c = 0; c + 8 <= N && !full.empty(); c += 8)
      for (size_t r = 0; r < full.size(); ++r) {
        double s[8], abs[8];
        eightColumnSums(fullA.data() + r * K, bk.data() + c, K, N, s, abs);
        for (int l = 0; l < 8; ++l)
          finish(full[r], c + l, s[l], abs[l], 0);
      }
    return oneOutput(std::move(e));
  }
  // W elements of a row at a time, each with the loop above's operations in
  // its order (the same bits): the chunk and block boundaries are common
  // to them, and W independent chains keep the CPU busy.
  auto fp8Elements = [&](int64_t i, const double *a, const int64_t *cols, auto width) {
    constexpr int W = decltype(width)::value;
    const double *b[W];
    double s[W] = {}, part[W] = {}, abs[W] = {}, fp8Bound[W] = {}, largest[W] = {},
           chunkAbs[W] = {};
    for (int l = 0; l < W; ++l)
      b[l] = bCol(cols[l]);
    for (int64_t k = 0, inBlock = 0, inChunk = 0; k < K; ++k) {
      if (inBlock == 0)
        for (int l = 0; l < W; ++l)
          part[l] = 0;
      if (inChunk == 0)
        for (int l = 0; l < W; ++l) {
          largest[l] = std::fabs(part[l]);
          chunkAbs[l] = std::fabs(part[l]);
        }
      const double x = a[k * aStep];
      const int64_t kb = k * bStep;
      for (int l = 0; l < W; ++l) {
        double xy = x * b[l][kb];
        s[l] += xy;
        part[l] += xy;
        abs[l] += std::fabs(xy);
        largest[l] = std::max(largest[l], std::fabs(xy));
        chunkAbs[l] += std::fabs(xy);
      }
      if (++inChunk == kFp8Chunk || k == K - 1)
        for (int l = 0; l < W; ++l)
          fp8Bound[l] +=
              0x1p-13 * (static_cast<double>(kFp8Chunk + 1) * largest[l] + chunkAbs[l]);
      inChunk %= kFp8Chunk;
      if (++inBlock == sumBlock)
        inBlock = 0;
    }
    for (int l = 0; l < W; ++l)
      finish(i, cols[l], s[l], abs[l], fp8Bound[l]);
  };
  // Needed columns 8 j .. 8 j + 7 run eight at a time (eightColumnFp8Sums)
  // from B's column block j laid out k-major, made when a row first needs
  // it (a run of some CTAs needs a few blocks of a wide B); the rest four
  // or one at a time.
  std::vector<std::vector<double>> blocks(N / 8);
  auto blockOf = [&](int64_t j) -> const double * {
    std::vector<double> &blk = blocks[j];
    if (blk.empty()) {
      blk.resize(K * 8);
      for (int64_t l = 0; l < 8; ++l) {
        const double *b = bCol(j * 8 + l);
        for (int64_t k = 0; k < K; ++k)
          blk[k * 8 + l] = b[k * bStep];
      }
    }
    return blk.data();
  };
  std::vector<int64_t> cols, rest;
  cols.reserve(N);
  for (int64_t i = 0; i < M; ++i) {
    if (!neededColumns(i, cols))
      continue;
    const double *a = aRow(i);
    rest.clear();
    for (size_t c = 0; c < cols.size();) {
      if (cols[c] % 8 != 0 || c + 8 > cols.size() || cols[c + 7] != cols[c] + 7) {
        rest.push_back(cols[c++]);
        continue;
      }
      double s[8], abs[8], bound[8];
      eightColumnFp8Sums(a, aStep, blockOf(cols[c] / 8), K, sumBlock, s, abs, bound);
      for (int l = 0; l < 8; ++l)
        finish(i, cols[c] + l, s[l], abs[l], bound[l]);
      c += 8;
    }
    size_t c = 0;
    for (; c + 4 <= rest.size(); c += 4)
      fp8Elements(i, a, rest.data() + c, std::integral_constant<int, 4>());
    for (; c < rest.size(); ++c)
      fp8Elements(i, a, rest.data() + c, std::integral_constant<int, 1>());
  }
  return oneOutput(std::move(e));
}

} // namespace

bool gemmWideLanes() {
  return wideLanes();
}

void gemmEightColumnSums(bool wide, const double *a, const double *b, int64_t K, int64_t n,
                         double *sums, double *magnitudes) {
#ifdef TILESCOPE_GEMM_WIDE
  if (wide && wideLanes())
    return eightColumnSumsWide(a, b, K, n, sums, magnitudes);
#endif
  eightColumnSumsNarrow(a, b, K, n, sums, magnitudes);
}

void gemmEightColumnFp8Sums(bool wide, const double *a, int64_t aStep, const double *b, int64_t K,
                            int64_t sumBlock, double *sums, double *magnitudes, double *bounds) {
#ifdef TILESCOPE_GEMM_WIDE
  if (wide && wideLanes())
    return eightColumnFp8SumsWide(a, aStep, b, K, sumBlock, sums, magnitudes, bounds);
#endif
  eightColumnFp8SumsNarrow(a, aStep, b, K, sumBlock, sums, magnitudes, bounds);
}

const ProblemRule &gemmRule() {
  static const ProblemRule rule{
      "gemm",
      "gemm(A[^T], B[^T] -> C [, scale_a = SA[^T], scale_b = SB[^T], block = N, block_m = Bm, "
      "block_n = Bn, alpha = s, bias = Bv, act = relu|gelu|gelu_tanh|silu|identity])",
      2,
      0,
      1,
      true,
      {{"scale_a", OptionKind::ScaleTensor},
       {"scale_b", OptionKind::ScaleTensor},
       {"block", OptionKind::Integer},
       {"block_m", OptionKind::Integer},
       {"block_n", OptionKind::Integer},
       {"alpha", OptionKind::Number, {}, true},
       {"bias", OptionKind::InputTensor},
       {"act", OptionKind::Name, activationNames()}},
      check,
      reference};
  return rule;
}

} // namespace tilescope::sim
