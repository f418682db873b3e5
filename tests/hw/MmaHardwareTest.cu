// Hardware test of the tensor-core MMA model: runs mma.sync m16n8k16 bf16 and
// wgmma m64n8k16 bf16/f16 and m64n8k32 e4m3 on random operands on the GPU and
// compares every output bit for bit with simulator/Mma.h.
//
// Exit status: 0 every compared output agrees, 1 some disagree (or a layout
// probe failed), 77 skipped (no GPU, or not an sm_90 GPU for wgmma), 2 usage.
//
// Built with nvcc alone (with the numerics sources, which depend on nothing
// but the standard library), so it also builds on a GPU machine that has none
// of the project's other dependencies.
#include "simulator/Mma.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace tilescope;

namespace {

#define CUDA_CHECK(call)                                                                           \
  do {                                                                                             \
    cudaError_t err_ = (call);                                                                     \
    if (err_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(err_), __FILE__,       \
                   __LINE__, cudaGetErrorString(err_));                                            \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

// ---------------------------------------------------------------------------
// Device side. Operands per trial, row-major: A is M x K codes, B is K x N
// codes, C and D are M x N f32. Codes of 16-bit types are uint16, of 8-bit
// types uint8.

// mma.sync.m16n8k16 bf16: one warp per trial; fragments as in the PTX ISA.
template <bool isF16>
__global__ void mmaSync(const uint16_t *A, const uint16_t *B, const float *C, float *D) {
  const int trial = blockIdx.x, lane = threadIdx.x, g = lane >> 2, t = lane & 3;
  const uint16_t *a = A + trial * 16 * 16;
  const uint16_t *b = B + trial * 16 * 8;
  const float *c = C + trial * 16 * 8;
  float *d = D + trial * 16 * 8;
  auto pack = [](uint16_t lo, uint16_t hi) { return uint32_t(lo) | (uint32_t(hi) << 16); };
  uint32_t a0 = pack(a[g * 16 + 2 * t], a[g * 16 + 2 * t + 1]);
  uint32_t a1 = pack(a[(g + 8) * 16 + 2 * t], a[(g + 8) * 16 + 2 * t + 1]);
  uint32_t a2 = pack(a[g * 16 + 2 * t + 8], a[g * 16 + 2 * t + 9]);
  uint32_t a3 = pack(a[(g + 8) * 16 + 2 * t + 8], a[(g + 8) * 16 + 2 * t + 9]);
  uint32_t b0 = pack(b[(2 * t) * 8 + g], b[(2 * t + 1) * 8 + g]);
  uint32_t b1 = pack(b[(2 * t + 8) * 8 + g], b[(2 * t + 9) * 8 + g]);
  float d0 = c[g * 8 + 2 * t], d1 = c[g * 8 + 2 * t + 1];
  float d2 = c[(g + 8) * 8 + 2 * t], d3 = c[(g + 8) * 8 + 2 * t + 1];
  if constexpr (isF16)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  d[g * 8 + 2 * t] = d0;
  d[g * 8 + 2 * t + 1] = d1;
  d[(g + 8) * 8 + 2 * t] = d2;
  d[(g + 8) * 8 + 2 * t + 1] = d3;
}

enum class WgmmaKind : int { Bf16, F16, E4m3E4m3, E4m3E5m2, E5m2E4m3, E5m2E5m2 };

// A shared-memory matrix descriptor without swizzling: start address,
// leading-dimension byte offset, stride-dimension byte offset (all >> 4).
__device__ uint64_t descriptor(const void *smem, uint32_t lbo, uint32_t sbo) {
  uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  return uint64_t((addr & 0x3FFFF) >> 4) | (uint64_t(lbo >> 4) << 16) | (uint64_t(sbo >> 4) << 32);
}

// wgmma m64n8 with A and B in shared memory, K-major, no swizzle: each row of
// A (64 rows) and of B^T (8 rows) is 32 bytes (16 x 16-bit or 32 x 8-bit);
// 8 rows x 16 bytes form a core matrix; core matrix (rowGroup, kHalf) sits at
// (rowGroup * 2 + kHalf) * 128 bytes. `lbo` and `sbo` are the two strides
// (K direction and row direction) as the descriptor is told them.
template <WgmmaKind kind>
__global__ void wgmmaM64N8(const uint8_t *A, const uint8_t *B, const float *C, float *D,
                           uint32_t lbo, uint32_t sbo) {
  __shared__ __align__(1024) uint8_t smemA[64 * 32];
  __shared__ __align__(1024) uint8_t smemB[8 * 32];
  constexpr int elemBytes = kind == WgmmaKind::Bf16 || kind == WgmmaKind::F16 ? 2 : 1;
  constexpr int K = 32 / elemBytes;
  const int trial = blockIdx.x, tid = threadIdx.x;
  const uint8_t *a = A + size_t(trial) * 64 * 32;
  const uint8_t *b = B + size_t(trial) * K * 8 * elemBytes;
  auto place = [](int row, int byte) {
    return ((row / 8) * 2 + byte / 16) * 128 + (row % 8) * 16 + byte % 16;
  };
  for (int i = tid; i < 64 * 32; i += blockDim.x) // A row-major: (m, byte of k)
    smemA[place(i / 32, i % 32)] = a[i];
  for (int i = tid; i < 8 * 32; i += blockDim.x) { // B^T: row n, byte of k
    int n = i / 32, byte = i % 32, k = byte / elemBytes, part = byte % elemBytes;
    smemB[place(n, byte)] = b[(k * 8 + n) * elemBytes + part];
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();

  const int warp = tid / 32, lane = tid % 32, g = lane >> 2, t = lane & 3;
  const int row0 = 16 * warp + g, row1 = row0 + 8;
  const float *c = C + size_t(trial) * 64 * 8;
  float d0 = c[row0 * 8 + 2 * t], d1 = c[row0 * 8 + 2 * t + 1];
  float d2 = c[row1 * 8 + 2 * t], d3 = c[row1 * 8 + 2 * t + 1];
  uint64_t descA = descriptor(smemA, lbo, sbo), descB = descriptor(smemB, lbo, sbo);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  if constexpr (kind == WgmmaKind::Bf16)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0,%1,%2,%3}, %4, %5, p, "
                 "1, 1, 0, 0;\n}\n"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "l"(descA), "l"(descB), "r"(1));
  else if constexpr (kind == WgmmaKind::F16)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0,%1,%2,%3}, %4, %5, p, "
                 "1, 1, 0, 0;\n}\n"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "l"(descA), "l"(descB), "r"(1));
  else if constexpr (kind == WgmmaKind::E4m3E4m3)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {%0,%1,%2,%3}, %4, %5, p, "
                 "1, 1;\n}\n"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "l"(descA), "l"(descB), "r"(1));
  else if constexpr (kind == WgmmaKind::E4m3E5m2)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e5m2 {%0,%1,%2,%3}, %4, %5, p, "
                 "1, 1;\n}\n"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "l"(descA), "l"(descB), "r"(1));
  else if constexpr (kind == WgmmaKind::E5m2E4m3)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k32.f32.e5m2.e4m3 {%0,%1,%2,%3}, %4, %5, p, "
                 "1, 1;\n}\n"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "l"(descA), "l"(descB), "r"(1));
  else if constexpr (kind == WgmmaKind::E5m2E5m2)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k32.f32.e5m2.e5m2 {%0,%1,%2,%3}, %4, %5, p, "
                 "1, 1;\n}\n"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "l"(descA), "l"(descB), "r"(1));
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  float *d = D + size_t(trial) * 64 * 8;
  d[row0 * 8 + 2 * t] = d0;
  d[row0 * 8 + 2 * t + 1] = d1;
  d[row1 * 8 + 2 * t] = d2;
  d[row1 * 8 + 2 * t + 1] = d3;
}

// ---------------------------------------------------------------------------
// Host side.

// What kinds of operands a trial draws.
enum Category { Typical, Wide, Cancelling, Tiny, Specials, kCategories };
const char *categoryName(int c) {
  static const char *names[] = {"typical", "wide", "cancelling", "tiny", "specials"};
  return names[c];
}

struct Config {
  const char *inst;
  Dtype typeA, typeB;
  int m, n, k;
  bool wgmma;
  WgmmaKind kind;
};

const Config kConfigs[] = {
    {"mma.sync.m16n8k16.f32.bf16.bf16", Dtype::bf16, Dtype::bf16, 16, 8, 16, false,
     WgmmaKind::Bf16},
    {"mma.sync.m16n8k16.f32.f16.f16", Dtype::f16, Dtype::f16, 16, 8, 16, false, WgmmaKind::F16},
    {"wgmma.m64n8k16.f32.bf16.bf16", Dtype::bf16, Dtype::bf16, 64, 8, 16, true, WgmmaKind::Bf16},
    {"wgmma.m64n8k16.f32.f16.f16", Dtype::f16, Dtype::f16, 64, 8, 16, true, WgmmaKind::F16},
    {"wgmma.m64n8k32.f32.e4m3.e4m3", Dtype::f8e4m3, Dtype::f8e4m3, 64, 8, 32, true,
     WgmmaKind::E4m3E4m3},
    {"wgmma.m64n8k32.f32.e4m3.e5m2", Dtype::f8e4m3, Dtype::f8e5m2, 64, 8, 32, true,
     WgmmaKind::E4m3E5m2},
    {"wgmma.m64n8k32.f32.e5m2.e4m3", Dtype::f8e5m2, Dtype::f8e4m3, 64, 8, 32, true,
     WgmmaKind::E5m2E4m3},
    {"wgmma.m64n8k32.f32.e5m2.e5m2", Dtype::f8e5m2, Dtype::f8e5m2, 64, 8, 32, true,
     WgmmaKind::E5m2E5m2},
};

struct Operands {
  std::vector<uint32_t> a, b, c; // codes and f32 bits, per trial concatenated
};

uint32_t randomCode(std::mt19937 &rng, const numerics::FloatFormat &f, int minBiased,
                    int maxBiased) {
  uint32_t sign = rng() & 1, mantissa = rng() & ((1u << f.manBits) - 1);
  uint32_t biased = minBiased + rng() % uint32_t(maxBiased - minBiased + 1);
  uint32_t code = (sign << (f.expBits + f.manBits)) | (biased << f.manBits) | mantissa;
  if (f.specials == numerics::Specials::NanOnly && (code & 0x7F) == 0x7F)
    code &= ~1u; // keep e4m3 finite
  return code;
}

uint32_t randomF32(std::mt19937 &rng, int minExp, int maxExp) {
  uint32_t exp = uint32_t(127 + minExp) + rng() % uint32_t(maxExp - minExp + 1);
  return ((rng() & 1) << 31) | (exp << 23) | (rng() & 0x7FFFFF);
}

// Fills one trial's operands for a category.
void drawTrial(std::mt19937 &rng, const Config &cfg, Category cat, uint32_t *a, uint32_t *b,
               uint32_t *c) {
  const auto &fa = *numerics::floatFormat(cfg.typeA), &fb = *numerics::floatFormat(cfg.typeB);
  const int M = cfg.m, N = cfg.n, K = cfg.k;
  for (int i = 0; i < M * K + K * N; ++i) {
    uint32_t &x = i < M * K ? a[i] : b[i - M * K];
    bool isA = i < M * K;
    const auto &f = isA ? fa : fb;
    const Dtype type = isA ? cfg.typeA : cfg.typeB;
    const int bias = f.bias,
              top = (1 << f.expBits) - (f.specials == numerics::Specials::Ieee ? 2 : 1);
    auto clampB = [&](int v) { return v < 0 ? 0 : (v > top ? top : v); };
    switch (cat) {
    case Typical:
    case Cancelling:
    case Specials:
      x = randomCode(rng, f, clampB(bias - 4), clampB(bias + 4));
      break;
    case Wide:
      x = rng() % 16 == 0 ? (rng() & 1) << (f.expBits + f.manBits)
                          : randomCode(rng, f, 0, type == Dtype::bf16 ? 127 + 40 : top);
      if (type == Dtype::bf16 && (x >> 7 & 0xFF) > 0 && (x >> 7 & 0xFF) < 127 - 40)
        x = (x & 0x807F) | uint32_t(127 - 40 + rng() % 80) << 7;
      break;
    case Tiny: // subnormal-heavy A against large-ish B
      x = isA ? randomCode(rng, f, 0, clampB(2))
              : randomCode(rng, f, clampB(bias), clampB(bias + 6));
      break;
    default:
      break;
    }
  }
  for (int i = 0; i < M * N; ++i) {
    switch (cat) {
    case Typical:
      c[i] = randomF32(rng, -6, 6);
      break;
    case Wide:
      c[i] = rng() % 8 == 0 ? 0 : randomF32(rng, -40, 40);
      break;
    case Tiny:
      c[i] = rng() % 2 ? 0 : randomF32(rng, -30, -10);
      break;
    case Specials:
      c[i] = randomF32(rng, -6, 6);
      break;
    case Cancelling: {
      int row = i / N, col = i % N;
      double exact = 0;
      for (int k = 0; k < K; ++k)
        exact += double(numerics::decode(a[row * K + k], fa)) *
                 double(numerics::decode(b[k * N + col], fb));
      float negated = float(-exact);
      uint32_t bits = numerics::bitsOf(negated);
      if (rng() % 2 && bits & 0x7F800000u)
        bits ^= rng() % 64; // a few ulps off
      c[i] = bits;
      break;
    }
    default:
      break;
    }
  }
  if (cat == Specials) {
    // One or two special operands per trial, and sometimes a special C.
    auto special = [&](const numerics::FloatFormat &f) {
      uint32_t nan = f.canonicalNan, inf = f.specials == numerics::Specials::Ieee
                                               ? ((1u << f.expBits) - 1) << f.manBits
                                               : f.canonicalNan;
      return rng() % 3 == 0 ? nan : (inf | ((rng() & 1) << (f.expBits + f.manBits)));
    };
    int count = 1 + rng() % 2;
    for (int s = 0; s < count; ++s) {
      if (rng() & 1)
        a[rng() % (M * K)] = special(fa);
      else
        b[rng() % (K * N)] = special(fb);
    }
    if (rng() % 4 == 0)
      c[rng() % (M * N)] = rng() & 1 ? 0x7F800000u : 0xFF800000u;
    if (rng() % 8 == 0)
      a[rng() % (M * K)] = 0; // may meet an inf: inf * 0
  }
}

struct Tally {
  uint64_t compared = 0, equal = 0;
};

// Runs `trials` trials of a config with a descriptor variant; fills gpu results.
std::vector<uint32_t> runOnGpu(const Config &cfg, const Operands &ops, int trials, uint32_t lbo,
                               uint32_t sbo) {
  const int elemBytes = dtypeBits(cfg.typeA) / 8;
  const size_t aCount = size_t(trials) * cfg.m * cfg.k, bCount = size_t(trials) * cfg.k * cfg.n,
               cCount = size_t(trials) * cfg.m * cfg.n;
  std::vector<uint8_t> aBytes(aCount * elemBytes), bBytes(bCount * elemBytes);
  for (size_t i = 0; i < aCount; ++i)
    for (int p = 0; p < elemBytes; ++p)
      aBytes[i * elemBytes + p] = uint8_t(ops.a[i] >> (8 * p));
  for (size_t i = 0; i < bCount; ++i)
    for (int p = 0; p < elemBytes; ++p)
      bBytes[i * elemBytes + p] = uint8_t(ops.b[i] >> (8 * p));
  uint8_t *dA, *dB;
  float *dC, *dD;
  CUDA_CHECK(cudaMalloc(&dA, aBytes.size()));
  CUDA_CHECK(cudaMalloc(&dB, bBytes.size()));
  CUDA_CHECK(cudaMalloc(&dC, cCount * 4));
  CUDA_CHECK(cudaMalloc(&dD, cCount * 4));
  CUDA_CHECK(cudaMemcpy(dA, aBytes.data(), aBytes.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dB, bBytes.data(), bBytes.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dC, ops.c.data(), cCount * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dD, 0xFF, cCount * 4));
  if (!cfg.wgmma) {
    auto *a16 = reinterpret_cast<uint16_t *>(dA), *b16 = reinterpret_cast<uint16_t *>(dB);
    if (cfg.kind == WgmmaKind::F16)
      mmaSync<true><<<trials, 32>>>(a16, b16, dC, dD);
    else
      mmaSync<false><<<trials, 32>>>(a16, b16, dC, dD);
  } else if (cfg.kind == WgmmaKind::Bf16) {
    wgmmaM64N8<WgmmaKind::Bf16><<<trials, 128>>>(dA, dB, dC, dD, lbo, sbo);
  } else if (cfg.kind == WgmmaKind::F16) {
    wgmmaM64N8<WgmmaKind::F16><<<trials, 128>>>(dA, dB, dC, dD, lbo, sbo);
  } else if (cfg.kind == WgmmaKind::E4m3E4m3) {
    wgmmaM64N8<WgmmaKind::E4m3E4m3><<<trials, 128>>>(dA, dB, dC, dD, lbo, sbo);
  } else if (cfg.kind == WgmmaKind::E4m3E5m2) {
    wgmmaM64N8<WgmmaKind::E4m3E5m2><<<trials, 128>>>(dA, dB, dC, dD, lbo, sbo);
  } else if (cfg.kind == WgmmaKind::E5m2E4m3) {
    wgmmaM64N8<WgmmaKind::E5m2E4m3><<<trials, 128>>>(dA, dB, dC, dD, lbo, sbo);
  } else {
    wgmmaM64N8<WgmmaKind::E5m2E5m2><<<trials, 128>>>(dA, dB, dC, dD, lbo, sbo);
  }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> d(cCount);
  CUDA_CHECK(cudaMemcpy(d.data(), dD, cCount * 4, cudaMemcpyDeviceToHost));
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
  cudaFree(dD);
  return d;
}

std::vector<uint32_t> runModel(const mma::MmaInstruction &inst, const Config &cfg,
                               const Operands &ops, int trials) {
  const size_t aN = size_t(cfg.m) * cfg.k, bN = size_t(cfg.k) * cfg.n, cN = size_t(cfg.m) * cfg.n;
  std::vector<uint32_t> d(trials * cN);
  for (int t = 0; t < trials; ++t) {
    mma::MmaResult r = mma::evaluate(inst, {std::span(ops.a).subspan(t * aN, aN),
                                            std::span(ops.b).subspan(t * bN, bN),
                                            std::span(ops.c).subspan(t * cN, cN),
                                            {},
                                            {}});
    if (!r.ok) {
      std::fprintf(stderr, "model refused %s: %s\n", cfg.inst, r.error.c_str());
      std::exit(1);
    }
    std::copy(r.d.begin(), r.d.end(), d.begin() + t * cN);
  }
  return d;
}

Operands draw(const Config &cfg, int trials, std::mt19937 &rng, Category forced = kCategories) {
  Operands ops;
  const size_t aN = size_t(cfg.m) * cfg.k, bN = size_t(cfg.k) * cfg.n, cN = size_t(cfg.m) * cfg.n;
  ops.a.resize(trials * aN);
  ops.b.resize(trials * bN);
  ops.c.resize(trials * cN);
  for (int t = 0; t < trials; ++t)
    drawTrial(rng, cfg, forced == kCategories ? Category(t % kCategories) : forced, &ops.a[t * aN],
              &ops.b[t * bN], &ops.c[t * cN]);
  return ops;
}

// Small integers: the exact sum is the only right answer, so a mismatch here
// means the operand layout (fragments or descriptors) is wrong, not numerics.
Operands probeOperands(const Config &cfg) {
  Operands ops;
  const auto &fa = *numerics::floatFormat(cfg.typeA), &fb = *numerics::floatFormat(cfg.typeB);
  for (int i = 0; i < cfg.m * cfg.k; ++i)
    ops.a.push_back(numerics::encode(float((i * 7) % 9 - 4), fa));
  for (int i = 0; i < cfg.k * cfg.n; ++i)
    ops.b.push_back(numerics::encode(float((i * 5) % 7 - 3), fb));
  for (int i = 0; i < cfg.m * cfg.n; ++i)
    ops.c.push_back(numerics::bitsOf(float(i % 13)));
  return ops;
}

// How many outputs other plausible models would get wrong on the same
// operands: n one bit smaller or larger, and an fp32 FMA chain (CUDA cores).
// Where the hardware equals this model everywhere, these are the outputs on
// which the test tells the models apart.
void printVariants(const mma::MmaInstruction &inst, const Config &cfg, const Operands &ops,
                   int trials, const std::vector<uint32_t> &model) {
  const auto &row = *inst.row;
  const auto &fa = *numerics::floatFormat(cfg.typeA), &fb = *numerics::floatFormat(cfg.typeB);
  const size_t aN = size_t(cfg.m) * cfg.k, bN = size_t(cfg.k) * cfg.n, cN = size_t(cfg.m) * cfg.n;
  const mma::FusedSumParams variants[] = {
      {row.params.alignBits - 1, row.params.outputMantissaBits},
      {row.params.alignBits + 1, row.params.outputMantissaBits},
      {row.params.alignBits, row.params.outputMantissaBits + (row.params.outputMantissaBits < 23)}};
  uint64_t differ[4] = {0, 0, 0, 0};
  std::vector<mma::ProductTerm> terms(cfg.k);
  auto canonical = [](uint32_t bits) {
    return std::isnan(numerics::floatOf(bits)) ? numerics::kCanonicalNanF32 : bits;
  };
  for (int t = 0; t < trials; ++t)
    for (int i = 0; i < cfg.m; ++i)
      for (int j = 0; j < cfg.n; ++j) {
        const uint32_t *a = &ops.a[t * aN + i * cfg.k];
        const uint32_t *b = &ops.b[t * bN + j];
        uint32_t c = ops.c[t * cN + i * cfg.n + j];
        uint32_t want = model[t * cN + i * cfg.n + j];
        float chain = numerics::floatOf(c);
        for (int k = 0; k < cfg.k; ++k) {
          terms[k] = {numerics::decompose(a[k], fa),
                      numerics::decompose(b[k * cfg.n], fb),
                      fa.manBits,
                      fb.manBits,
                      0,
                      false};
          chain = std::fma(numerics::decode(a[k], fa), numerics::decode(b[k * cfg.n], fb), chain);
        }
        for (int v = 0; v < 3; ++v)
          differ[v] += mma::fusedSum(c, terms, variants[v]) != want;
        differ[3] += canonical(numerics::bitsOf(chain)) != want;
      }
  std::string mantissa = "";
  if (variants[2].outputMantissaBits != row.params.outputMantissaBits)
    mantissa = ", output mantissa " + std::to_string(variants[2].outputMantissaBits) + ": " +
               std::to_string(differ[2]);
  std::printf("%-34s %-11s n-1: %llu, n+1: %llu%s, fp32 FMA chain: %llu (of %zu)\n", cfg.inst,
              "variants", (unsigned long long)differ[0], (unsigned long long)differ[1],
              mantissa.c_str(), (unsigned long long)differ[3], model.size());
}

} // namespace

int main(int argc, char **argv) {
  int trials = 4000;
  unsigned seed = 2026;
  bool modelOnly = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--trials") && i + 1 < argc)
      trials = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc)
      seed = unsigned(std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--variants-only"))
      modelOnly = true;
    else {
      std::fprintf(stderr, "usage: %s [--trials N] [--seed S] [--variants-only]\n", argv[0]);
      return 2;
    }
  }
  if (trials < kCategories)
    trials = kCategories;

  if (modelOnly) {
    // No GPU needed: how far other models are from this one on the inputs the
    // GPU run draws (same seed, same order).
    std::mt19937 rng(seed);
    for (const Config &cfg : kConfigs) {
      auto inst = mma::findInstruction(TargetKind::sm_90a, cfg.inst, nullptr);
      Operands ops = draw(cfg, trials, rng);
      printVariants(*inst, cfg, ops, trials, runModel(*inst, cfg, ops, trials));
    }
    return 0;
  }

  int devices = 0;
  cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA GPU present (%s)\n",
                err != cudaSuccess ? cudaGetErrorString(err) : "no devices");
    return 77;
  }
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("GPU: %s (sm_%d%d), trials per instruction: %d, seed %u\n", prop.name, prop.major,
              prop.minor, trials, seed);
  if (prop.major != 9) {
    std::printf("SKIPPED: this test is built for sm_90a; the GPU is sm_%d%d\n", prop.major,
                prop.minor);
    return 77;
  }

  bool allAgree = true;
  std::mt19937 rng(seed);
  std::printf("%-34s %-11s %10s %10s %10s\n", "instruction", "operands", "outputs", "equal",
              "mismatches");
  for (const Config &cfg : kConfigs) {
    std::string error;
    auto inst = mma::findInstruction(TargetKind::sm_90a, cfg.inst, &error);
    if (!inst) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 1;
    }
    // Find the descriptor strides that make the exact probe come out exact.
    uint32_t lbo = 128, sbo = 256;
    Operands probe = probeOperands(cfg);
    std::vector<uint32_t> want = runModel(*inst, cfg, probe, 1);
    bool layoutOk = runOnGpu(cfg, probe, 1, lbo, sbo) == want;
    if (!layoutOk && cfg.wgmma) {
      std::swap(lbo, sbo);
      layoutOk = runOnGpu(cfg, probe, 1, lbo, sbo) == want;
    }
    if (!layoutOk) {
      std::printf("%-34s LAYOUT PROBE FAILED (small integers not exact): harness bug\n", cfg.inst);
      allAgree = false;
      continue;
    }
    Operands ops = draw(cfg, trials, rng);
    std::vector<uint32_t> gpu = runOnGpu(cfg, ops, trials, lbo, sbo);
    std::vector<uint32_t> model = runModel(*inst, cfg, ops, trials);
    const size_t perTrial = size_t(cfg.m) * cfg.n;
    Tally tally[kCategories];
    int shown = 0;
    for (size_t i = 0; i < gpu.size(); ++i) {
      int cat = int((i / perTrial) % kCategories);
      ++tally[cat].compared;
      if (gpu[i] == model[i]) {
        ++tally[cat].equal;
      } else if (shown < 6) {
        ++shown;
        std::printf("  mismatch %s trial %zu (%s) element (%zu,%zu): gpu %08x model %08x\n",
                    cfg.inst, i / perTrial, categoryName(cat), (i % perTrial) / cfg.n, i % cfg.n,
                    gpu[i], model[i]);
      }
    }
    Tally total;
    for (int cat = 0; cat < kCategories; ++cat) {
      std::printf("%-34s %-11s %10llu %10llu %10llu\n", cfg.inst, categoryName(cat),
                  (unsigned long long)tally[cat].compared, (unsigned long long)tally[cat].equal,
                  (unsigned long long)(tally[cat].compared - tally[cat].equal));
      total.compared += tally[cat].compared;
      total.equal += tally[cat].equal;
    }
    std::printf("%-34s %-11s %10llu %10llu %10llu  (descriptor lbo=%u sbo=%u)\n", cfg.inst, "all",
                (unsigned long long)total.compared, (unsigned long long)total.equal,
                (unsigned long long)(total.compared - total.equal), lbo, sbo);
    if (total.equal != total.compared)
      allAgree = false;
  }
  std::printf(allAgree ? "RESULT: every output agrees bit for bit\n"
                       : "RESULT: some outputs disagree\n");
  return allAgree ? 0 : 1;
}
