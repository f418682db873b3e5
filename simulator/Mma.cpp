#include "simulator/Mma.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <vector>

namespace tilescope::mma {

using numerics::Decoded;

namespace {
constexpr FusedSumParams kHalfSm90{25, 23};
constexpr FusedSumParams kFp8Sm90{13, 13};
constexpr FusedSumParams kHalfSm100{25, 23};
constexpr FusedSumParams kFp4BlockScaled{35, 23};
constexpr FusedSumParams kNone{0, 0};

constexpr std::string_view kMeasured =
    "tests/hw on an H200, 2026-11-22: every output bit for bit (docs/numerics.md)";
constexpr std::string_view kReportedSm100 =
    "docs/semantics.md reports n = 25 for tcgen05 f16/bf16; not measured here (no sm_100 GPU)";
constexpr std::string_view kReportedFp4 =
    "docs/semantics.md reports n = 35 over groups of 16; not measured here (no sm_100 GPU); "
    "output mantissa of 23 bits assumed";
constexpr std::string_view kNoModel = "no measured model for this instruction";

using T = TargetKind;
using D = Dtype;
using F = MmaFamily;
using S = ModelStatus;

bool isFp8(Dtype d) {
  return d == D::f8e4m3 || d == D::f8e5m2;
}

// What the model knows of one instruction of ir/MmaShapes.h.
MmaInstructionRow withNumerics(const MmaShape &shape) {
  auto row = [&](FusedSumParams params, ModelStatus status, std::string_view note) {
    return MmaInstructionRow{shape, params, status, note};
  };
  bool half = shape.a == shape.b && (shape.a == D::bf16 || shape.a == D::f16);
  bool f32 = shape.d == D::f32;
  if (shape.target == T::sm_90a && f32 && half && shape.k == 16 &&
      (shape.family == F::Wgmma || shape.family == F::MmaSync))
    return row(kHalfSm90, S::Measured, kMeasured);
  if (shape.target == T::sm_90a && f32 && shape.family == F::Wgmma && isFp8(shape.a) &&
      isFp8(shape.b))
    return row(kFp8Sm90, S::Measured, kMeasured);
  if (shape.target == T::sm_100a && f32 && half && shape.family == F::Tcgen05)
    return row(kHalfSm100, S::Reported, kReportedSm100);
  if (shape.target == T::sm_100a && f32 && shape.family == F::Tcgen05BlockScale &&
      shape.a == D::f4e2m1 && shape.b == D::f4e2m1 && shape.scale == D::ue8m0 &&
      shape.scaleBlock == 16)
    return row(kFp4BlockScaled, S::Reported, kReportedFp4);
  return row(kNone, S::Unknown, kNoModel);
}

const std::vector<MmaInstructionRow> &table() {
  static const std::vector<MmaInstructionRow> rows = [] {
    std::vector<MmaInstructionRow> out;
    for (const MmaShape &shape : mmaShapes())
      out.push_back(withNumerics(shape));
    return out;
  }();
  return rows;
}

std::string shapeName(int m, std::string_view n, int k) {
  // Appended piece by piece: gcc 12 warns (-Wrestrict, a false positive) on
  // `"literal" + std::string`.
  std::string s = "m";
  s += std::to_string(m);
  s += 'n';
  s.append(n);
  s += 'k';
  s += std::to_string(k);
  return s;
}

std::string withTypes(const MmaInstructionRow &row, std::string name) {
  name += ".";
  name += ptxTypeName(row.d);
  name += ".";
  name += ptxTypeName(row.a);
  name += ".";
  name += ptxTypeName(row.b);
  if (row.scale) {
    name += ".";
    name += ptxTypeName(*row.scale);
  }
  return name;
}

bool parseInt(std::string_view s, int &out) {
  if (s.empty() || s.size() > 6)
    return false;
  int v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9')
      return false;
    v = v * 10 + (ch - '0');
  }
  out = v;
  return true;
}

// "m64n8k16" -> (64, 8, 16).
bool parseShape(std::string_view token, int &m, int &n, int &k) {
  if (token.size() < 6 || token[0] != 'm')
    return false;
  size_t posN = token.find('n'), posK = token.find('k');
  if (posN == std::string_view::npos || posK == std::string_view::npos || posK < posN)
    return false;
  return parseInt(token.substr(1, posN - 1), m) &&
         parseInt(token.substr(posN + 1, posK - posN - 1), n) &&
         parseInt(token.substr(posK + 1), k);
}

} // namespace

std::span<const MmaInstructionRow> instructionTable() {
  return table();
}

std::string instructionName(const MmaInstructionRow &row, int n) {
  return withTypes(row, std::string(mmaFamilyName(row.family)) + "." +
                            shapeName(row.m, std::to_string(n), row.k));
}

std::string instructionPattern(const MmaInstructionRow &row) {
  std::string n = std::to_string(row.nMin);
  if (row.nMin != row.nMax) {
    n.insert(0, 1, '{');
    n += "..";
    n += std::to_string(row.nMax);
    n += '/';
    n += std::to_string(row.nStep);
    n += '}';
  }
  return withTypes(row, std::string(mmaFamilyName(row.family)) + "." + shapeName(row.m, n, row.k));
}

std::optional<MmaInstruction> findInstruction(TargetKind target, std::string_view name,
                                              std::string *error) {
  // Split at the shape token: family before it, dtypes after it.
  std::vector<std::string_view> tokens;
  for (size_t start = 0;;) {
    size_t dot = name.find('.', start);
    tokens.push_back(name.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos)
      break;
    start = dot + 1;
  }
  int m = 0, n = 0, k = 0;
  size_t shapeAt = tokens.size();
  for (size_t i = 0; i < tokens.size(); ++i)
    if (parseShape(tokens[i], m, n, k)) {
      shapeAt = i;
      break;
    }
  auto fail = [&](std::string message) -> std::optional<MmaInstruction> {
    if (error)
      *error = std::move(message);
    return std::nullopt;
  };
  if (shapeAt == tokens.size())
    return fail(std::string(1, '\'').append(name).append("' has no shape such as m64n8k16"));
  std::string family, types;
  for (size_t i = 0; i < shapeAt; ++i)
    family.append(i ? "." : "").append(tokens[i]);
  for (size_t i = shapeAt + 1; i < tokens.size(); ++i)
    types.append(".").append(tokens[i]);

  std::vector<std::string_view> otherTargets;
  const MmaInstructionRow *wrongN = nullptr;
  for (const auto &row : table()) {
    if (mmaFamilyName(row.family) != family || row.m != m || row.k != k ||
        withTypes(row, "") != types)
      continue;
    if (!row.takesN(n)) {
      wrongN = &row;
      continue;
    }
    if (row.target != target) {
      otherTargets.push_back(targetInfo(row.target).name);
      continue;
    }
    return MmaInstruction{&row, m, n, k};
  }
  std::string targetName(targetInfo(target).name);
  if (!otherTargets.empty()) {
    std::string list;
    for (auto t : otherTargets)
      list.append(list.empty() ? "" : ", ").append(t);
    std::string quoted(1, '\'');
    quoted.append(name).append("'");
    return fail(quoted + " is not an instruction of " + targetName + " (it is one of " + list +
                ")");
  }
  if (wrongN) {
    std::string quoted(1, '\'');
    quoted.append(name).append("'");
    return fail(quoted + " has an N this instruction does not take (" +
                instructionPattern(*wrongN) + ")");
  }
  return fail("unknown MMA instruction '" + std::string(name) + "' for " + targetName);
}

namespace {
// The model's last step: the exact sum of the truncated terms (units of
// 2^quantum), normalised and truncated toward zero to the output mantissa,
// the f32 bits built directly.
inline uint32_t packSum64(int64_t sum, int quantum, int outputMantissaBits) {
  if (sum == 0)
    return 0u;
  // Sign and magnitude without a branch: the signs of the sums are random.
  const uint64_t negative = static_cast<uint64_t>(sum >> 63); // 0 or all ones
  const uint32_t sign = static_cast<uint32_t>(negative) & 0x80000000u;
  uint64_t magnitude = (static_cast<uint64_t>(sum) ^ negative) - negative;
  int top = std::bit_width(magnitude) - 1;
  int lsb = quantum;
  if (top > outputMantissaBits) {
    magnitude >>= top - outputMantissaBits;
    lsb += top - outputMantissaBits;
    top = outputMantissaBits;
  }
  if (lsb + top > 127) // beyond f32's range
    return sign | 0x7F800000u;
  if (lsb < -149) { // f32 subnormal range: truncate to its grid
    int drop = -149 - lsb;
    magnitude = drop >= 64 ? 0 : magnitude >> drop;
    lsb = -149;
  }
  if (magnitude == 0)
    return sign;
  top = std::bit_width(magnitude) - 1; // at most 23
  const int exponent = lsb + top;
  if (exponent < -126) // subnormal: its bits are the multiple of 2^-149
    return sign | static_cast<uint32_t>(magnitude << (lsb + 149));
  return sign | static_cast<uint32_t>(exponent + 127) << 23 |
         (static_cast<uint32_t>(magnitude << (23 - top)) & 0x7FFFFFu);
}

// The same for a sum wider than 64 bits: its low bits are dropped first
// (truncating toward zero twice is truncating once, the magnitude being
// shifted), then packSum64 finishes.
uint32_t packSum(__int128 sum, int quantum, const FusedSumParams &params) {
  bool negative = sum < 0;
  unsigned __int128 magnitude = negative ? -(unsigned __int128)sum : (unsigned __int128)sum;
  uint64_t high = uint64_t(magnitude >> 64);
  int width = high ? 64 + std::bit_width(high) : std::bit_width(uint64_t(magnitude));
  if (width > 62) {
    magnitude >>= width - 62;
    quantum += width - 62;
  }
  int64_t narrow = static_cast<int64_t>(magnitude);
  return packSum64(negative ? -narrow : narrow, quantum, params.outputMantissaBits);
}
} // namespace

uint32_t fusedSum(uint32_t cBits, std::span<const ProductTerm> products,
                  const FusedSumParams &params) {
  const numerics::FloatFormat &f32 = *numerics::floatFormat(Dtype::f32);
  Decoded c = numerics::decompose(cBits, f32);

  // Specials first: NaN, inf * 0, inf - inf give NaN; otherwise an infinity wins.
  bool nan = c.cls == Decoded::NaN, posInf = false, negInf = false;
  if (c.cls == Decoded::Inf)
    (c.negative ? negInf : posInf) = true;
  for (const auto &p : products) {
    if (p.a.cls == Decoded::NaN || p.b.cls == Decoded::NaN || p.scaleIsNaN) {
      nan = true;
      continue;
    }
    bool aInf = p.a.cls == Decoded::Inf, bInf = p.b.cls == Decoded::Inf;
    if (!aInf && !bInf)
      continue;
    if (p.a.cls == Decoded::Zero || p.b.cls == Decoded::Zero)
      nan = true;
    else
      ((p.a.negative != p.b.negative) ? negInf : posInf) = true;
  }
  if (nan || (posInf && negInf))
    return numerics::kCanonicalNanF32;
  if (posInf)
    return 0x7F800000u;
  if (negInf)
    return 0xFF800000u;

  // Finite terms as sig * 2^lsb with their model exponent; zeros take no part
  // in choosing the largest exponent.
  struct Term {
    bool negative;
    uint64_t significand;
    int lsb;      // exponent of the significand's unit bit
    int exponent; // the model's exponent of the term
  };
  Term terms[1 + 256];
  std::vector<Term> manyTerms;
  Term *out = terms;
  if (products.size() > 256) {
    manyTerms.resize(products.size() + 1);
    out = manyTerms.data();
  }
  size_t count = 0;
  bool allZerosNegative = c.cls != Decoded::Finite ? c.negative : false;
  if (c.cls == Decoded::Finite)
    out[count++] = {c.negative, c.significand, c.exponent - 23, c.exponent};
  for (const auto &p : products) {
    bool negative = p.a.negative != p.b.negative;
    if (p.a.cls == Decoded::Zero || p.b.cls == Decoded::Zero) {
      allZerosNegative = allZerosNegative && negative;
      continue;
    }
    int exponent = p.a.exponent + p.b.exponent + p.scaleExponent;
    out[count++] = {negative, uint64_t(p.a.significand) * p.b.significand,
                    exponent - p.manBitsA - p.manBitsB, exponent};
  }
  if (count == 0)
    return allZerosNegative ? 0x80000000u : 0u;

  int maxExponent = out[0].exponent;
  for (size_t i = 1; i < count; ++i)
    maxExponent = std::max(maxExponent, out[i].exponent);
  const int quantum = maxExponent - params.alignBits; // exponent of the kept unit bit

  // Each term truncated toward zero to the quantum, then summed exactly.
  __int128 sum = 0;
  for (size_t i = 0; i < count; ++i) {
    int shift = out[i].lsb - quantum;
    unsigned __int128 magnitude;
    if (shift >= 0)
      magnitude = (unsigned __int128)out[i].significand << shift;
    else
      magnitude = -shift >= 64 ? 0 : out[i].significand >> -shift;
    sum += out[i].negative ? -(__int128)magnitude : (__int128)magnitude;
  }
  return packSum(sum, quantum, params);
}

namespace {
// An operand tile decoded once: per element the significand, the model's
// exponent (kNoTerm for zeros, so a zero never sets the largest exponent and
// adds nothing) and the sign as a mask (0 or -1); per row and K chunk whether
// a NaN or an infinity is there (those chunks take the general path).
constexpr int32_t kNoTerm = -(1 << 28);

// One code's part of a DecodedTile.
struct CodePlanes {
  uint32_t significand;
  int32_t exponent;
  int32_t signMask;
  uint8_t special; // NaN or infinity
  uint8_t nonZero; // anything but a zero
};

CodePlanes planesOf(uint32_t code, const numerics::FloatFormat &f) {
  Decoded d = numerics::decompose(code, f);
  const bool finite = d.cls == Decoded::Finite;
  return {finite ? d.significand : 0u, finite ? d.exponent : kNoTerm, d.negative ? -1 : 0,
          uint8_t(d.cls == Decoded::NaN || d.cls == Decoded::Inf),
          uint8_t(d.cls != Decoded::Zero)};
}

// planesOf of every code of a format of at most 8 bits, made once per format
// (decompose keeps only the code's bits, so `code & mask` is its index).
struct CodeTable {
  std::array<CodePlanes, 256> planes;
  uint32_t mask;
};
const CodeTable *codeTable(const numerics::FloatFormat &f) {
  if (f.codeBits() > 8 || f.storageShift != 0)
    return nullptr;
  static constexpr Dtype kNarrow[] = {D::f8e4m3, D::f8e5m2, D::f6e2m3, D::f6e3m2, D::f4e2m1,
                                      D::ue8m0};
  static const std::vector<std::pair<const numerics::FloatFormat *, CodeTable>> tables = [] {
    std::vector<std::pair<const numerics::FloatFormat *, CodeTable>> out;
    for (Dtype d : kNarrow) {
      const numerics::FloatFormat *format = numerics::floatFormat(d);
      CodeTable t{};
      t.mask = numerics::codeMask(*format);
      for (uint32_t code = 0; code <= t.mask; ++code)
        t.planes[code] = planesOf(code, *format);
      out.emplace_back(format, t);
    }
    return out;
  }();
  for (const auto &[format, table] : tables)
    if (format == &f)
      return &table;
  return nullptr;
}

struct DecodedTile {
  std::vector<uint32_t> significand;
  std::vector<int32_t> exponent;
  std::vector<int32_t> signMask;
  std::vector<uint8_t> special; // rows x chunks
  // rows x chunks: every element of the chunk is a zero (no finite term, no
  // NaN, no infinity), as in the rows a TMA copy fills past a tensor's edge.
  std::vector<uint8_t> zero;

  // Decodes `rows` x K codes; the planes' storage is kept from one call to
  // the next (fill sets every element of each).
  void decode(std::span<const uint32_t> codes, int64_t rows, int64_t K, int64_t kStep,
              const numerics::FloatFormat &f) {
    significand.resize(rows * K);
    exponent.resize(rows * K);
    signMask.resize(rows * K);
    special.resize(rows * ((K + kStep - 1) / kStep));
    zero.resize(special.size());
    if (const CodeTable *table = codeTable(f))
      fill(codes.data(), rows, K, kStep,
           [table, mask = table->mask](uint32_t code) { return table->planes[code & mask]; });
    else
      fill(codes.data(), rows, K, kStep, [&f](uint32_t code) { return planesOf(code, f); });
  }

private:
  // Through raw pointers and a chunk at a time: the byte planes' stores
  // could otherwise alias the format's fields and the vectors' own.
  template <typename Decode>
  void fill(const uint32_t *codes, int64_t rows, int64_t K, int64_t kStep, Decode decode) {
    const int64_t chunks = (K + kStep - 1) / kStep;
    uint32_t *sig = significand.data();
    int32_t *exp = exponent.data(), *neg = signMask.data();
    uint8_t *spec = special.data(), *zer = zero.data();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t q = 0; q < chunks; ++q) {
        uint8_t anySpecial = 0, anyNonZero = 0;
        for (int64_t k = q * kStep, end = std::min(K, k + kStep); k < end; ++k) {
          const int64_t i = r * K + k;
          const CodePlanes p = decode(codes[i]);
          sig[i] = p.significand;
          exp[i] = p.exponent;
          neg[i] = p.signMask;
          anySpecial |= p.special;
          anyNonZero |= p.nonZero;
        }
        spec[r * chunks + q] = anySpecial;
        zer[r * chunks + q] = uint8_t(!anyNonZero);
      }
  }
};

// Whether every one of `n` codes is a zero (no finite term, no NaN, no
// infinity).
bool allZeros(const uint32_t *codes, int64_t n, const numerics::FloatFormat &f) {
  uint8_t nonZero = 0;
  if (const CodeTable *table = codeTable(f))
    for (int64_t k = 0; k < n; ++k)
      nonZero |= table->planes[codes[k] & table->mask].nonZero;
  else
    for (int64_t k = 0; k < n; ++k)
      nonZero |= planesOf(codes[k], f).nonZero;
  return nonZero == 0;
}

// B's decoded planes transposed (K x N): for each k the N outputs' operands
// side by side (rowChunkAcross).
struct TransposedTile {
  std::vector<uint32_t> significand;
  std::vector<int32_t> exponent;
  std::vector<int32_t> signMask;

  // B's planes transposed; the storage is kept from one call to the next.
  void assign(const DecodedTile &t, int64_t rows, int64_t K) {
    significand.resize(rows * K);
    exponent.resize(rows * K);
    signMask.resize(rows * K);
    transpose(t.significand.data(), significand.data(), rows, K);
    transpose(t.exponent.data(), exponent.data(), rows, K);
    transpose(t.signMask.data(), signMask.data(), rows, K);
  }

private:
  template <typename E>
  static void transpose(const E *__restrict from, E *__restrict to, int64_t rows, int64_t K) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < K; ++k)
        to[k * rows + r] = from[r * K + k];
  }
};

// One K chunk of one row of A against every row of Bt, into that row of C.
struct RowChunk {
  const MmaInstructionRow *row;
  const numerics::FloatFormat *fa, *fb;
  const uint32_t *aCodes;  // A's codes of the chunk
  const uint32_t *btCodes; // Bt's codes, row 0 of the chunk (rows K apart)
  const uint32_t *sa;      // A's lifted significands of the chunk
  const int32_t *ea, *na;  // ... exponents and sign masks
  bool specialA;           // a NaN or infinity in A's chunk
  const DecodedTile *B;
  const TransposedTile *T; // B transposed: for the narrow sums
  int64_t K, len, chunks, q;
  int64_t N;   // the rows of B decoded (T's row stride)
  int64_t end; // outputs 0 .. end - 1 are computed; the rest stay +0 (fusedSumTile)
  uint32_t *c;
};

// A chunk through the per-element model.
[[gnu::noinline]] uint32_t generalChunk(const RowChunk &r, int64_t j, uint32_t acc) {
  // What fusedSum gives when the accumulator is a zero and every product
  // has a zero operand and no NaN or infinity (the zero rows a TMA copy
  // fills past a tensor's edge): a zero, negative only when the accumulator
  // and every product are.
  const int64_t bj = j * r.K + r.q * r.row->k;
  // A +0 accumulator and only zero products (B's chunk all zeros): +0, as
  // the loop below finds.
  if (acc == 0 && !r.specialA && r.B->zero[j * r.chunks + r.q])
    return 0;
  if ((acc & 0x7FFFFFFFu) == 0 && !r.specialA && !r.B->special[j * r.chunks + r.q]) {
    bool zeros = true, negative = (acc >> 31) != 0;
    for (int64_t k = 0; k < r.len && zeros; ++k) {
      zeros = r.ea[k] == kNoTerm || r.B->exponent[bj + k] == kNoTerm;
      negative = negative && (r.na[k] ^ r.B->signMask[bj + k]) != 0;
    }
    if (zeros)
      return negative ? 0x80000000u : 0u;
  }
  std::vector<ProductTerm> terms(r.len);
  for (int64_t k = 0; k < r.len; ++k)
    terms[k] = {numerics::decompose(r.aCodes[k], *r.fa),
                numerics::decompose(r.btCodes[j * r.K + k], *r.fb),
                r.fa->manBits,
                r.fb->manBits,
                0,
                false};
  return fusedSum(acc, terms, r.row->params);
}

// The accumulator's term joins the sum of the chunk's products (its exponent
// took part in `largest`), and the model packs the result.
[[gnu::always_inline]] inline uint32_t finishSum(uint32_t acc, int64_t products, int32_t largest,
                                                 int align, int mantissa) {
  const uint32_t biased = (acc >> 23) & 0xFF, fraction = acc & 0x7FFFFF;
  const int quantum = largest - align;
  int64_t sum = products;
  if (biased != 0 || fraction != 0) {
    const uint32_t cSig = biased ? fraction | 0x800000u : fraction;
    const int32_t cExp = biased ? int32_t(biased) - 127 : -126;
    int shift = cExp - 23 - quantum;
    uint64_t m = shift >= 0 ? uint64_t(cSig) << shift : shift > -64 ? uint64_t(cSig) >> -shift : 0;
    const int64_t negative = -static_cast<int64_t>(acc >> 31); // 0 or -1, without a branch
    sum += (static_cast<int64_t>(m) ^ negative) - negative;
  }
  return packSum64(sum, quantum, mantissa);
}

// The products of a chunk for one output: the largest of their exponents and
// `largest` (into `largest`), then their signed sum, each lifted product
// truncated toward zero to the quantum by a right shift of its distance to
// the largest exponent. Len 0: any length. Narrow: every lifted product and
// the chunk's sum fit in 32 bits (twice the lanes per vector).
template <int Len, bool Narrow>
[[gnu::always_inline]] inline int64_t
chunkProducts(int64_t len, const uint32_t *__restrict sa, const int32_t *__restrict ea,
              const int32_t *__restrict na, const uint32_t *__restrict sb,
              const int32_t *__restrict eb, const int32_t *__restrict nb, int32_t &largest) {
  constexpr int kMax = Len > 0 ? Len : 64;
  const int64_t n = Len > 0 ? Len : len;
  int32_t exps[kMax];
  for (int64_t k = 0; k < n; ++k)
    exps[k] = ea[k] + eb[k];
  // A reduction of its own, which the compiler turns into vector maxima.
  int32_t top = kNoTerm;
  for (int64_t k = 0; k < n; ++k)
    top = std::max(top, exps[k]);
  top = std::max(top, largest);
  largest = top;
  if (top <= kNoTerm)
    return 0;
  if constexpr (Narrow) {
    uint32_t sum = 0; // wraps only in between: the exact sum fits in 32 bits
    for (int64_t k = 0; k < n; ++k) {
      uint32_t m = (sa[k] * sb[k]) >> std::min(top - exps[k], 31);
      uint32_t s = static_cast<uint32_t>(na[k] ^ nb[k]); // 0 or all ones
      sum += (m ^ s) - s;
    }
    return static_cast<int32_t>(sum);
  } else {
    int64_t sum = 0;
    for (int64_t k = 0; k < n; ++k) {
      uint64_t m = (uint64_t(sa[k]) * sb[k]) >> std::min(top - exps[k], 63);
      int64_t s = na[k] ^ nb[k];
      sum += (int64_t(m) ^ s) - s;
    }
    return sum;
  }
}

// Outputs j0 .. N - 1 of the row, one after the other.
template <int Len, bool Narrow>
[[gnu::always_inline]] inline void rowChunkOf(const RowChunk &r, int64_t j0) {
  const int align = r.row->params.alignBits;
  const int mantissa = r.row->params.outputMantissaBits;
  const DecodedTile &B = *r.B;
  for (int64_t j = j0; j < r.end; ++j) {
    uint32_t &acc = r.c[j];
    const int64_t bj = j * r.K + r.q * r.row->k;
    // The accumulator's exponent (an f32's) starts the largest one.
    const uint32_t biased = (acc >> 23) & 0xFF;
    bool general = r.specialA || B.special[j * r.chunks + r.q] || biased == 0xFF;
    const bool cTerm = (acc & 0x7FFFFFFFu) != 0;
    int32_t largest = cTerm ? (biased ? int32_t(biased) - 127 : -126) : kNoTerm;
    int64_t products = 0;
    if (!general) {
      products = chunkProducts<Len, Narrow>(r.len, r.sa, r.ea, r.na, &B.significand[bj],
                                            &B.exponent[bj], &B.signMask[bj], largest);
      general = largest <= kNoTerm; // only zeros: their signs decide
    }
    if (general) {
      acc = generalChunk(r, j, acc);
      continue;
    }
    acc = finishSum(acc, products, largest, align, mantissa);
  }
}

// W outputs of the row at a time, from `from` on as far as whole groups of W
// reach (returned), with B's planes transposed (K x N) so that the W are side
// by side: the same sums as rowChunkOf, computed across the outputs instead
// of across the products (no horizontal maxima or sums), the W lanes of one
// vector each.
template <int Len, int W>
[[gnu::always_inline]] inline int64_t rowChunkAcross(const RowChunk &r, int64_t from) {
  const int align = r.row->params.alignBits;
  const int mantissa = r.row->params.outputMantissaBits;
  const TransposedTile &T = *r.T;
  const int64_t N = r.N, k0 = r.q * r.row->k, whole = from + (r.end - from) / W * W;
  for (int64_t j0 = from; j0 < whole; j0 += W) {
    int32_t top[W];
    uint32_t sum[W];
    for (int jj = 0; jj < W; ++jj) {
      const uint32_t acc = r.c[j0 + jj];
      const uint32_t biased = (acc >> 23) & 0xFF;
      const bool cTerm = (acc & 0x7FFFFFFFu) != 0;
      top[jj] = cTerm ? (biased ? int32_t(biased) - 127 : -126) : kNoTerm;
      sum[jj] = 0;
    }
    for (int k = 0; k < Len; ++k) {
      const int32_t ea = r.ea[k];
      const int32_t *__restrict eb = &T.exponent[(k0 + k) * N + j0];
      for (int jj = 0; jj < W; ++jj)
        top[jj] = std::max(top[jj], ea + eb[jj]);
    }
    for (int k = 0; k < Len; ++k) {
      const uint32_t sa = r.sa[k];
      const int32_t ea = r.ea[k], na = r.na[k];
      const uint32_t *__restrict sb = &T.significand[(k0 + k) * N + j0];
      const int32_t *__restrict eb = &T.exponent[(k0 + k) * N + j0];
      const int32_t *__restrict nb = &T.signMask[(k0 + k) * N + j0];
      for (int jj = 0; jj < W; ++jj) {
        uint32_t m = (sa * sb[jj]) >> std::min(top[jj] - (ea + eb[jj]), 31);
        uint32_t s = static_cast<uint32_t>(na ^ nb[jj]); // 0 or all ones
        sum[jj] += (m ^ s) - s; // wraps only in between: the exact sum fits in 32 bits
      }
    }
    for (int jj = 0; jj < W; ++jj) {
      const int64_t j = j0 + jj;
      uint32_t &acc = r.c[j];
      const bool general = r.specialA || r.B->special[j * r.chunks + r.q] ||
                           ((acc >> 23) & 0xFF) == 0xFF || top[jj] <= kNoTerm;
      acc = general ? generalChunk(r, j, acc)
                    : finishSum(acc, static_cast<int32_t>(sum[jj]), top[jj], align, mantissa);
    }
  }
  return whole;
}

// Sixteen outputs at a time (one 512-bit vector of lanes where the processor
// has them), then eight, then one at a time: the same sums in any grouping.
template <int Len> [[gnu::always_inline]] inline void rowChunkAcross(const RowChunk &r) {
  int64_t j = rowChunkAcross<Len, 16>(r, 0);
  j = rowChunkAcross<Len, 8>(r, j);
  rowChunkOf<Len, true>(r, j);
}

// The row loop with the chunk's usual length known (16 for f16 / bf16, 32 for fp8), cloned
// for AVX-512 and AVX2 (integer operations only: every clone gives the same sums); nvcc (the
// hardware test) gets the plain function.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__CUDACC__)
#define TILESCOPE_MMA_CLONES                                                                      \
  __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define TILESCOPE_MMA_CLONES
#endif

TILESCOPE_MMA_CLONES
void rowChunk(const RowChunk &r) {
  if (r.T && r.len == 16)
    return rowChunkAcross<16>(r);
  if (r.T && r.len == 32)
    return rowChunkAcross<32>(r);
  return rowChunkOf<0, false>(r, 0);
}

// A chunk of A that is all zeros (no NaN or infinity): every product is a
// zero, so an output whose accumulator is +0 and whose B chunk holds no NaN
// or infinity stays +0 on either path of rowChunkOf (the general path's
// zeros, or a sum of 0 that packs to +0). Only the other outputs are
// computed, one at a time, by rowChunkOf.
void zeroRowChunk(const RowChunk &r) {
  for (int64_t j = 0; j < r.end; ++j) {
    if (r.c[j] == 0 && !r.B->special[j * r.chunks + r.q])
      continue;
    RowChunk one = r;
    one.end = j + 1;
    rowChunkOf<0, false>(one, j);
  }
}
} // namespace

int64_t fusedSumTile(const MmaInstructionRow &row, int64_t M, int64_t N, int64_t K,
                     std::span<const uint32_t> a, std::span<const uint32_t> bt,
                     std::span<uint32_t> c) {
  const numerics::FloatFormat &fa = *numerics::floatFormat(row.a);
  const numerics::FloatFormat &fb = *numerics::floatFormat(row.b);
  const int64_t kStep = row.k, chunks = (K + kStep - 1) / kStep;
  const int align = row.params.alignBits;
  // A product's unit bit is productBits below its exponent, so its shift to
  // the quantum (maxExponent - align) is lift - (maxExponent - exponent):
  // lifting A's significands by `lift` once leaves one right shift per term,
  // which truncates toward zero exactly as the model does. Every lifted
  // product stays below 2^(align + 2); kStep + 1 terms must add up in 63 bits
  // (and kStep products in 31 bits for the narrow sums).
  const int lift = align - fa.manBits - fb.manBits;
  const bool integerPath = lift >= 0 && kStep <= 64 &&
                           align + 2 + std::bit_width(static_cast<uint64_t>(kStep + 1)) <= 62;
  const bool narrow = align + 2 + std::bit_width(static_cast<uint64_t>(kStep - 1)) <= 31;
  // Per thread, reused: a k-loop calls this thousands of times.
  thread_local DecodedTile A, B;
  thread_local TransposedTile transposed;
  A.decode(a, M, K, kStep, fa);
  if (integerPath)
    for (uint32_t &sig : A.significand)
      sig <<= lift;
  // Outputs whose B rows are zeros in every chunk (the rows a TMA copy fills
  // past a tensor's edge) and whose accumulator is +0 stay +0 through every
  // chunk when A's row holds no NaN or infinity (each chunk maps +0 to +0 on
  // every path: generalChunk's zeros, a sum of 0 that packs to +0, fusedSum's
  // zeros): only the outputs before the last run of those are computed, and
  // only B's rows before the last of those ends are decoded (no path reads
  // B's row j for an output j at or past its row's end).
  int64_t zerosFrom = N; // B's rows from here on are zeros in every chunk
  while (zerosFrom > 0 && allZeros(&bt[(zerosFrom - 1) * K], K, fb))
    --zerosFrom;
  std::vector<int64_t> ends(M);
  int64_t rowsB = 0;
  for (int64_t i = 0; i < M; ++i) {
    int64_t end = N;
    if (std::none_of(&A.special[i * chunks], &A.special[(i + 1) * chunks],
                     [](uint8_t x) { return x != 0; }))
      while (end > zerosFrom && c[i * N + end - 1] == 0)
        --end;
    ends[i] = end;
    rowsB = std::max(rowsB, end);
  }
  B.decode(bt.first(rowsB * K), rowsB, K, kStep, fb);
  const TransposedTile *T = nullptr;
  if (integerPath && narrow) {
    transposed.assign(B, rowsB, K);
    T = &transposed;
  }
  std::vector<ProductTerm> terms(kStep);
  for (int64_t i = 0; i < M; ++i) {
    const int64_t end = ends[i];
    for (int64_t q = 0; q < chunks && end > 0; ++q) {
      const int64_t k0 = q * kStep, len = std::min(kStep, K - k0);
      if (!integerPath) {
        for (int64_t j = 0; j < end; ++j) {
          for (int64_t k = 0; k < len; ++k)
            terms[k] = {numerics::decompose(a[i * K + k0 + k], fa),
                        numerics::decompose(bt[j * K + k0 + k], fb),
                        fa.manBits,
                        fb.manBits,
                        0,
                        false};
          c[i * N + j] = fusedSum(c[i * N + j], std::span(terms.data(), len), row.params);
        }
        continue;
      }
      RowChunk r{&row,
                 &fa,
                 &fb,
                 &a[i * K + k0],
                 &bt[k0],
                 &A.significand[i * K + k0],
                 &A.exponent[i * K + k0],
                 &A.signMask[i * K + k0],
                 A.special[i * chunks + q] != 0,
                 &B,
                 T,
                 K,
                 len,
                 chunks,
                 q,
                 rowsB,
                 end,
                 &c[i * N]};
      if (A.zero[i * chunks + q])
        zeroRowChunk(r);
      else
        rowChunk(r);
    }
  }
  return M * N * chunks;
}

// How many instructions of `row`'s kind cover an M x N x K product: the
// widest M of the kind (tcgen05 has m64 and m128 rows with the same numerics)
// that the product fills, N as wide as the row allows, the row's K.
int64_t instructionsCovering(const MmaInstructionRow &row, int64_t M, int64_t N, int64_t K) {
  int64_t m = row.m;
  for (const MmaInstructionRow &r : instructionTable())
    if (r.target == row.target && r.family == row.family && r.d == row.d && r.a == row.a &&
        r.b == row.b && r.m > m && r.m <= M)
      m = r.m;
  int64_t n = std::min<int64_t>(N, row.nMax);
  return (M + m - 1) / m * ((N + n - 1) / n) * ((K + row.k - 1) / row.k);
}

MmaResult evaluate(const MmaInstruction &inst, const MmaOperands &operands) {
  MmaResult result;
  const MmaInstructionRow &row = *inst.row;
  std::string name = instructionName(row, inst.n);
  if (row.status == ModelStatus::Unknown) {
    result.error = "the numerics of " + name + " on " + std::string(targetInfo(row.target).name) +
                   " are unknown (" + std::string(row.note) + ")";
    return result;
  }
  const size_t M = inst.m, N = inst.n, K = inst.k;
  auto sizeError = [&](std::string_view what, size_t got, size_t want) {
    result.error = std::string(what) + " has " + std::to_string(got) + " elements, " + name +
                   " needs " + std::to_string(want);
    return result;
  };
  if (operands.a.size() != M * K)
    return sizeError("A", operands.a.size(), M * K);
  if (operands.b.size() != K * N)
    return sizeError("B", operands.b.size(), K * N);
  if (operands.c.size() != M * N)
    return sizeError("C", operands.c.size(), M * N);
  const size_t blocks = row.scaleBlock ? K / row.scaleBlock : 0;
  if (row.scale) {
    if (operands.scaleA.size() != M * blocks)
      return sizeError("the scale of A", operands.scaleA.size(), M * blocks);
    if (operands.scaleB.size() != blocks * N)
      return sizeError("the scale of B", operands.scaleB.size(), blocks * N);
  }

  if (!row.scale) {
    std::vector<uint32_t> bt(N * K);
    for (size_t k = 0; k < K; ++k)
      for (size_t j = 0; j < N; ++j)
        bt[j * K + k] = operands.b[k * N + j];
    result.d.assign(operands.c.begin(), operands.c.end());
    fusedSumTile(row, M, N, K, operands.a, bt, result.d);
    result.ok = true;
    return result;
  }
  const auto &fa = *numerics::floatFormat(row.a);
  const auto &fb = *numerics::floatFormat(row.b);
  std::vector<Decoded> a(M * K), b(K * N);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = numerics::decompose(operands.a[i], fa);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = numerics::decompose(operands.b[i], fb);
  const numerics::FloatFormat *fs = row.scale ? numerics::floatFormat(*row.scale) : nullptr;
  // The factors decoded once (not once per product term).
  std::vector<Decoded> sa(M * blocks), sb(blocks * N);
  for (size_t i = 0; fs && i < sa.size(); ++i)
    sa[i] = numerics::decompose(operands.scaleA[i], *fs);
  for (size_t i = 0; fs && i < sb.size(); ++i)
    sb[i] = numerics::decompose(operands.scaleB[i], *fs);

  result.d.resize(M * N);
  std::vector<ProductTerm> terms(K);
  for (size_t i = 0; i < M; ++i)
    for (size_t j = 0; j < N; ++j) {
      for (size_t kk = 0; kk < K; ++kk) {
        ProductTerm &t = terms[kk];
        t = {a[i * K + kk], b[kk * N + j], fa.manBits, fb.manBits, 0, false};
        if (fs) {
          const Decoded &da = sa[i * blocks + kk / row.scaleBlock];
          const Decoded &db = sb[(kk / row.scaleBlock) * N + j];
          t.scaleIsNaN = da.cls == Decoded::NaN || db.cls == Decoded::NaN;
          t.scaleExponent = da.exponent + db.exponent;
        }
      }
      result.d[i * N + j] = fusedSum(operands.c[i * N + j], terms, row.params);
    }
  result.ok = true;
  return result;
}

} // namespace tilescope::mma
