// The tile evaluation of the MMA model (integer planes, one decode per
// operand) against the per-element model, `fusedSum`, on random tiles of every
// table row that has numerics: ordinary values, zeros of both signs,
// subnormals, wide exponent spreads, NaN and infinities, with several chunks
// per output so the accumulator carries from one chunk into the next.
#include "simulator/Mma.h"

#include <doctest/doctest.h>

#include <random>

using namespace tilescope;
using namespace tilescope::mma;
using namespace tilescope::numerics;

namespace {

// A code of `f` drawn so that every kind of value turns up.
uint32_t drawCode(std::mt19937_64 &rng, const FloatFormat &f, int flavour) {
  // codeMask, not (1 << codeBits) - 1: f32's 32 bits would shift past the
  // type (undefined; on x86 it shifted by 0, so the f32 accumulators' random
  // bits were all 0: no sign, no mantissa, no specials).
  uint32_t bits = static_cast<uint32_t>(rng()) & codeMask(f);
  uint32_t man = bits & ((uint32_t(1) << f.manBits) - 1);
  uint32_t sign = f.hasSign ? (bits >> (f.codeBits() - 1)) << (f.codeBits() - 1) : 0;
  uint32_t expMask = (uint32_t(1) << f.expBits) - 1;
  uint32_t code = bits;
  switch (flavour) {
  case 0: // zero of either sign
    code = sign;
    break;
  case 1: // subnormal
    code = sign | man;
    break;
  case 2: // an exponent near the middle: terms that overlap
    code = sign | ((expMask / 2 + static_cast<uint32_t>(rng() % 5)) << f.manBits) | man;
    break;
  default: // any code, specials included
    break;
  }
  return code << f.storageShift;
}

std::vector<uint32_t> drawTile(std::mt19937_64 &rng, const FloatFormat &f, size_t n, int mode) {
  std::vector<uint32_t> out(n);
  for (uint32_t &x : out) {
    int flavour = mode == 0 ? 2 : static_cast<int>(rng() % 8);
    x = drawCode(rng, f, flavour);
  }
  return out;
}

} // namespace

TEST_CASE("the tile evaluation equals fusedSum on every chunk of every modelled row") {
  std::mt19937_64 rng(2026);
  const FloatFormat &f32 = *floatFormat(Dtype::f32);
  int rowsTried = 0;
  for (const MmaInstructionRow &row : instructionTable()) {
    if (row.status == ModelStatus::Unknown || row.scale)
      continue;
    ++rowsTried;
    const FloatFormat &fa = *floatFormat(row.a);
    const FloatFormat &fb = *floatFormat(row.b);
    // A partial last chunk; N = 19 gives two blocks of eight outputs for the
    // vector path (rowChunkAcross) and three for the per-output one.
    const int64_t M = 4, N = 19, K = 3 * row.k + row.k / 2;
    for (int trial = 0; trial < 60; ++trial) {
      int mode = trial % 3; // overlapping terms, mixed values, mixed with wild accumulators
      std::vector<uint32_t> a = drawTile(rng, fa, M * K, mode);
      std::vector<uint32_t> bt = drawTile(rng, fb, N * K, mode);
      std::vector<uint32_t> c = drawTile(rng, f32, M * N, mode == 2 ? 1 : 0);
      std::vector<uint32_t> want = c;
      std::vector<ProductTerm> terms;
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j)
          for (int64_t k0 = 0; k0 < K; k0 += row.k) {
            terms.clear();
            for (int64_t k = k0; k < std::min<int64_t>(K, k0 + row.k); ++k)
              terms.push_back({decompose(a[i * K + k], fa), decompose(bt[j * K + k], fb),
                               fa.manBits, fb.manBits, 0, false});
            want[i * N + j] = fusedSum(want[i * N + j], terms, row.params);
          }
      int64_t sums = fusedSumTile(row, M, N, K, a, bt, c);
      CHECK(sums == M * N * 4);
      for (int64_t i = 0; i < M * N; ++i) {
        INFO(instructionPattern(row), " trial ", trial, " element ", i);
        REQUIRE(c[i] == want[i]);
      }
    }
  }
  CHECK(rowsTried >= 10);
}

TEST_CASE("the tile evaluation keeps the sign of an all-zero sum and NaN from inf * 0") {
  const MmaInstructionRow &row = instructionTable()[0]; // wgmma f32 += bf16 * bf16
  const FloatFormat &bf = *floatFormat(Dtype::bf16);
  const int64_t K = row.k;
  std::vector<uint32_t> a(K, encode(-0.0f, bf)), bt(K, encode(1.0f, bf));
  std::vector<uint32_t> c = {bitsOf(-0.0f)};
  fusedSumTile(row, 1, 1, K, a, bt, c);
  CHECK(c[0] == bitsOf(-0.0f));
  a[3] = encode(INFINITY, bf);
  bt[3] = encode(0.0f, bf);
  c = {bitsOf(1.0f)};
  fusedSumTile(row, 1, 1, K, a, bt, c);
  CHECK(c[0] == kCanonicalNanF32);
}

TEST_CASE("the tile evaluation equals fusedSum on zero rows against zero accumulators") {
  // What a TMA copy past a tensor's edge gives: whole rows of zeros (of
  // either sign here), against accumulators that are zeros of either sign,
  // next to rows of ordinary values and a few specials.
  std::mt19937_64 rng(77);
  const FloatFormat &f32 = *floatFormat(Dtype::f32);
  for (const MmaInstructionRow &row : instructionTable()) {
    if (row.status == ModelStatus::Unknown || row.scale)
      continue;
    const FloatFormat &fa = *floatFormat(row.a);
    const FloatFormat &fb = *floatFormat(row.b);
    const int64_t M = 6, N = 17, K = 2 * row.k + row.k / 2;
    for (int trial = 0; trial < 20; ++trial) {
      auto rows = [&](const FloatFormat &f, int64_t n) {
        std::vector<uint32_t> t = drawTile(rng, f, n * K, trial % 2 == 0 ? 0 : 1);
        for (int64_t r = 0; r < n; ++r)
          if (rng() % 3 != 0)
            for (int64_t k = 0; k < K; ++k)
              t[r * K + k] = drawCode(rng, f, 0);
        return t;
      };
      std::vector<uint32_t> a = rows(fa, M), bt = rows(fb, N);
      std::vector<uint32_t> c(M * N);
      for (uint32_t &x : c)
        x = rng() % 4 == 0 ? drawCode(rng, f32, 2) : drawCode(rng, f32, 0);
      std::vector<uint32_t> want = c;
      std::vector<ProductTerm> terms;
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j)
          for (int64_t k0 = 0; k0 < K; k0 += row.k) {
            terms.clear();
            for (int64_t k = k0; k < std::min<int64_t>(K, k0 + row.k); ++k)
              terms.push_back({decompose(a[i * K + k], fa), decompose(bt[j * K + k], fb),
                               fa.manBits, fb.manBits, 0, false});
            want[i * N + j] = fusedSum(want[i * N + j], terms, row.params);
          }
      fusedSumTile(row, M, N, K, a, bt, c);
      for (int64_t i = 0; i < M * N; ++i) {
        INFO(instructionPattern(row), " trial ", trial, " element ", i);
        REQUIRE(c[i] == want[i]);
      }
    }
  }
}

TEST_CASE("a zero chunk of A or B leaves +0 accumulators alone and no other output") {
  // The shortcuts for chunks of zeros (fusedSumTile's zero rows of A, the
  // general path's zero chunks of B): a +0 accumulator stays +0; -0 and
  // nonzero accumulators, and a NaN or infinity in the other operand's
  // chunk, still go through the model. A has zero rows 0 and 2 and a zero
  // first chunk in row 1; B has zero rows 1 and 4 and a NaN in row 3's
  // first chunk and an infinity in row 5's second.
  const MmaInstructionRow &row = instructionTable()[0]; // wgmma f32 += bf16 * bf16
  const FloatFormat &bf = *floatFormat(Dtype::bf16);
  const int64_t M = 3, N = 9, K = 2 * row.k;
  std::mt19937_64 rng(5);
  auto ordinary = [&] { return encode(float(int(rng() % 200) - 100) / 64.0f, bf); };
  std::vector<uint32_t> a(M * K), bt(N * K);
  for (int64_t k = 0; k < K; ++k) {
    a[0 * K + k] = encode(k % 2 ? -0.0f : 0.0f, bf);
    a[1 * K + k] = k < row.k ? encode(0.0f, bf) : ordinary();
    a[2 * K + k] = encode(-0.0f, bf);
  }
  for (int64_t j = 0; j < N; ++j)
    for (int64_t k = 0; k < K; ++k)
      bt[j * K + k] = j == 1 || j == 4 ? encode(0.0f, bf) : ordinary();
  bt[3 * K + 2] = encode(NAN, bf);
  bt[5 * K + row.k + 1] = encode(INFINITY, bf);
  for (int trial = 0; trial < 4; ++trial) {
    std::vector<uint32_t> c(M * N);
    for (size_t i = 0; i < c.size(); ++i) {
      float v = trial == 0 ? 0.0f : trial == 1 ? -0.0f : (i % 3 == 0 ? 0.0f : 1.5f);
      c[i] = bitsOf(trial == 3 && i % 2 ? -v : v);
    }
    std::vector<uint32_t> want = c;
    std::vector<ProductTerm> terms;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        for (int64_t k0 = 0; k0 < K; k0 += row.k) {
          terms.clear();
          for (int64_t k = k0; k < k0 + row.k; ++k)
            terms.push_back({decompose(a[i * K + k], bf), decompose(bt[j * K + k], bf), bf.manBits,
                             bf.manBits, 0, false});
          want[i * N + j] = fusedSum(want[i * N + j], terms, row.params);
        }
    fusedSumTile(row, M, N, K, a, bt, c);
    for (int64_t i = 0; i < M * N; ++i) {
      INFO("trial ", trial, " element ", i);
      REQUIRE(c[i] == want[i]);
    }
    // What the model gives here, so that the shortcut cannot be vacuous:
    // NaN where a NaN meets a zero row, +0 where a +0 meets only zeros.
    CHECK(want[0 * N + 3] == kCanonicalNanF32);
    if (trial == 0)
      CHECK(want[2 * N + 1] == 0u);
  }
}
