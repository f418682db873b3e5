// ex2dump DIR: measures ex2.approx.ftz.f32 and ex2.approx.f32 (issue 18: the
// simulator's model, simulator/Ex2Approx.h). Build on a GPU machine:
// nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a scripts/ex2dump.cu -o ex2dump
// The grid files of its first run (2026-11-26, H200) are the simulator's table
// (packed by scripts/ex2_table.cpp); the sample of its second (H100) is
// tests/unit/simulator/data/ex2_approx_sm90_sample.txt.
// Writes into DIR:
//   grid_neg.d8, grid_pos.d8    ex2.approx.ftz.f32(-j * 2^-24), (j * 2^-24), j = 0 .. 2^24
//   sub_full.d8                 ex2.approx.f32 (not ftz) of every f32 x in [-150, -126)
//                               (bit patterns 0xC2FC0000 up to 0xC3160000, exclusive);
//                               the ftz results there are counted (0 or not) instead
// (.d8: the first result's bits as a little-endian word, then the int8
// differences of consecutive results' bits)
//   sample.txt                  "x ftz noftz" (hex bits) for 16384 pseudo-random x
// and prints one JSON line: the counts of x (all f32 in [-1, 1]) where
// ex2(x) != ex2(q_k(x)), q_k rounding x to a multiple of 2^-k (toward zero,
// toward -inf, to nearest even), k = 16 .. 26; the count of f32 x in
// [-126, -1] and [1, 127) where ex2(x) != 2^floor(x) * ex2(x - floor(x)) (bit
// exact), and
// the count of f32 x in [-126, 128) where the ftz and non-ftz results differ.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

__device__ __forceinline__ float ex2ftz(float x) {
  float y;
  asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float ex2full(float x) {
  float y;
  asm volatile("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

constexpr int KMIN = 16, KMAX = 26, NK = KMAX - KMIN + 1;

// q_k(x) in double (exact: x has 24 significant bits, the result fewer),
// mode 0 toward zero, 1 toward -inf, 2 nearest even; -1.0f if not an f32.
__device__ float quant(float x, int k, int mode) {
  double s = __longlong_as_double((long long)(1023 + k) << 52);
  double inv = __longlong_as_double((long long)(1023 - k) << 52);
  double v = (double)x * s;
  double q = mode == 0 ? trunc(v) : mode == 1 ? floor(v) : rint(v);
  double r = q * inv;
  float f = (float)r;
  return (double)f == r ? f : -2.0f;
}

__global__ void quantProbe(unsigned long long *mism, unsigned long long *tested) {
  // every f32 in [-1, 1]: magnitudes 0 .. 0x3F800000, both signs; one
  // (k, mode) pair per blockIdx.y
  const uint32_t n = 0x3F800001u;
  const int k = KMIN + blockIdx.y / 3, mode = blockIdx.y % 3;
  unsigned int lm = 0, lt = 0;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    for (int sgn = 0; sgn < 2; ++sgn) {
      float x = __uint_as_float(i | (sgn ? 0x80000000u : 0u));
      float q = quant(x, k, mode);
      if (q == -2.0f)
        continue;
      ++lt;
      if (__float_as_uint(ex2ftz(q)) != __float_as_uint(ex2ftz(x)))
        ++lm;
    }
  }
  atomicAdd(&mism[blockIdx.y], (unsigned long long)lm);
  atomicAdd(&tested[blockIdx.y], (unsigned long long)lt);
}

// x in [-126, -1] and [1, 127): ex2(x) against 2^floor(x) * ex2(x - floor(x)); and the
// ftz / non-ftz variants against each other on [-126, 128).
__global__ void scaleProbe(unsigned long long *out) {
  unsigned long long fail = 0, tested = 0, ftzDiff = 0, ftzTested = 0;
  // negative: bit patterns 0x80000000 .. 0xC2FC0000 (-126); positive 0 .. 0x43000000 (128)
  const uint32_t nNeg = 0xC2FC0000u - 0x80000000u + 1, nPos = 0x43000000u;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < nNeg + nPos;
       i += gridDim.x * blockDim.x) {
    uint32_t bits = i < nNeg ? 0x80000000u + i : i - nNeg;
    float x = __uint_as_float(bits);
    float a = ex2ftz(x);
    ++ftzTested;
    if (__float_as_uint(a) != __float_as_uint(ex2full(x)))
      ++ftzDiff;
    // x - floor(x) is exact for |x| >= 1 (not below: -0.3 + 1 rounds)
    if (x >= 127.0f || fabsf(x) < 1.0f)
      continue;
    float fl = floorf(x);
    float fr = x - fl; // exact
    float b = ldexpf(ex2ftz(fr), (int)fl);
    ++tested;
    if (__float_as_uint(a) != __float_as_uint(b))
      ++fail;
  }
  atomicAdd(&out[0], fail);
  atomicAdd(&out[1], tested);
  atomicAdd(&out[2], ftzDiff);
  atomicAdd(&out[3], ftzTested);
}

__global__ void gridDump(uint32_t *neg, uint32_t *pos, uint32_t n) {
  for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x) {
    float x = (float)j * 0x1p-24f; // exact
    neg[j] = __float_as_uint(ex2ftz(-x));
    pos[j] = __float_as_uint(ex2ftz(x));
  }
}

__global__ void subDump(uint32_t *full, uint32_t *ftz, uint32_t n) {
  for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x) {
    float x = __uint_as_float(0xC2FC0000u + j);
    full[j] = __float_as_uint(ex2full(x));
    ftz[j] = __float_as_uint(ex2ftz(x));
  }
}

__global__ void sampleDump(const uint32_t *xs, uint32_t *out, uint32_t n) {
  uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n) {
    float x = __uint_as_float(xs[j]);
    out[2 * j] = __float_as_uint(ex2ftz(x));
    out[2 * j + 1] = __float_as_uint(ex2full(x));
  }
}

// First word, then the int8 differences of consecutive words (exits if one
// does not fit), so the file compresses well and decodes exactly.
static void writeDelta(const char *dir, const char *name, const uint32_t *w, size_t n) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(w, 4, 1, f) != 1) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(1);
  }
  int8_t *d = (int8_t *)malloc(n);
  for (size_t i = 1; i < n; ++i) {
    long long x = (long long)w[i] - (long long)w[i - 1];
    if (x < -128 || x > 127) {
      fprintf(stderr, "%s: difference %lld at %zu outside int8\n", name, x, i);
      exit(1);
    }
    d[i - 1] = (int8_t)x;
  }
  if (fwrite(d, 1, n - 1, f) != n - 1) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(1);
  }
  free(d);
  fclose(f);
}

#define CK(x)                                                                                     \
  do {                                                                                            \
    cudaError_t e_ = (x);                                                                         \
    if (e_ != cudaSuccess) {                                                                      \
      fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                                    \
      return 1;                                                                                   \
    }                                                                                             \
  } while (0)

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: ex2dump DIR\n");
    return 2;
  }
  const char *dir = argv[1];
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  CK(cudaEventRecord(t0));
  unsigned long long *cnt;
  CK(cudaMalloc(&cnt, 128 * sizeof(unsigned long long)));
  CK(cudaMemset(cnt, 0, 128 * sizeof(unsigned long long)));
  quantProbe<<<dim3(132 * 2, NK * 3), 256>>>(cnt, cnt + NK * 3);
  CK(cudaGetLastError());
  scaleProbe<<<132 * 8, 256>>>(cnt + 100);
  CK(cudaGetLastError());
  const uint32_t n = (1u << 24) + 1;
  uint32_t *dn, *dp;
  CK(cudaMalloc(&dn, n * 4ull));
  CK(cudaMalloc(&dp, n * 4ull));
  gridDump<<<132 * 8, 256>>>(dn, dp, n);
  CK(cudaGetLastError());
  const uint32_t ns = 0xC3160000u - 0xC2FC0000u;
  uint32_t *sf, *sz;
  CK(cudaMalloc(&sf, ns * 4ull));
  CK(cudaMalloc(&sz, ns * 4ull));
  subDump<<<132 * 8, 256>>>(sf, sz, ns);
  CK(cudaGetLastError());
  // the sample: a fixed xorshift sequence; half uniform over bit patterns of
  // [-150, 128] (sign, exponent, mantissa), half uniform in value on [-30, 2]
  const uint32_t nsamp = 16384;
  uint32_t *hx = (uint32_t *)malloc(nsamp * 4), *hs = (uint32_t *)malloc(nsamp * 8);
  uint64_t st = 0x9E3779B97F4A7C15ull;
  auto rnd = [&]() {
    st ^= st << 13;
    st ^= st >> 7;
    st ^= st << 17;
    return st;
  };
  for (uint32_t i = 0; i < nsamp; ++i) {
    float x;
    do {
      if (i % 2 == 0) {
        uint32_t b = (uint32_t)rnd();
        memcpy(&x, &b, 4);
      } else {
        x = -30.0f + 32.0f * (float)((rnd() >> 40) * 0x1p-24);
      }
    } while (!(x >= -150.0f && x <= 128.0f));
    memcpy(&hx[i], &x, 4);
  }
  // special inputs first: +-0, +-inf, a NaN, the range ends and their neighbours
  const uint32_t special[16] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u,
                                0x7FC00000u, 0x43000000u, 0x42FFFFFFu, 0xC2FC0000u,
                                0xC2FC0001u, 0xC2FE0000u, 0xC3000000u, 0x00000001u,
                                0x80000001u, 0x33FFFFFFu, 0xB3FFFFFFu, 0xBF800000u};
  for (int i = 0; i < 16; ++i)
    hx[i] = special[i];
  uint32_t *dx, *ds;
  CK(cudaMalloc(&dx, nsamp * 4));
  CK(cudaMalloc(&ds, nsamp * 8));
  CK(cudaMemcpy(dx, hx, nsamp * 4, cudaMemcpyHostToDevice));
  sampleDump<<<nsamp / 256, 256>>>(dx, ds, nsamp);
  CK(cudaGetLastError());
  CK(cudaEventRecord(t1));
  CK(cudaDeviceSynchronize());
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, t0, t1));
  unsigned long long h[128];
  CK(cudaMemcpy(h, cnt, sizeof h, cudaMemcpyDeviceToHost));
  uint32_t *buf = (uint32_t *)malloc(n * 4ull);
  CK(cudaMemcpy(buf, dn, n * 4ull, cudaMemcpyDeviceToHost));
  writeDelta(dir, "grid_neg.d8", buf, n);
  CK(cudaMemcpy(buf, dp, n * 4ull, cudaMemcpyDeviceToHost));
  writeDelta(dir, "grid_pos.d8", buf, n);
  CK(cudaMemcpy(buf, sf, ns * 4ull, cudaMemcpyDeviceToHost));
  writeDelta(dir, "sub_full.d8", buf, ns);
  CK(cudaMemcpy(buf, sz, ns * 4ull, cudaMemcpyDeviceToHost));
  // ftz on [-150, -126): expected 2^-126 at -126 and 0 below; counted, not stored
  unsigned long long ftzZero = 0, ftzOther = 0;
  for (uint32_t j = 0; j < ns; ++j) {
    if (buf[j] == 0)
      ++ftzZero;
    else if (!(j == 0 && buf[j] == 0x00800000u))
      ++ftzOther;
  }
  CK(cudaMemcpy(hs, ds, nsamp * 8, cudaMemcpyDeviceToHost));
  char path[512];
  snprintf(path, sizeof path, "%s/sample.txt", dir);
  FILE *f = fopen(path, "w");
  if (!f)
    return 1;
  for (uint32_t i = 0; i < nsamp; ++i)
    fprintf(f, "%08x %08x %08x\n", hx[i], hs[2 * i], hs[2 * i + 1]);
  fclose(f);
  printf("{\"probe\": \"ex2dump\", \"ms\": %.2f, \"k_from\": %d, \"modes\": [\"rz\", \"rd\", \"rn\"], "
         "\"quant_mismatch\": [",
         ms, KMIN);
  for (int i = 0; i < NK * 3; ++i)
    printf("%s%llu", i ? ", " : "", h[i]);
  printf("], \"quant_tested\": [");
  for (int i = 0; i < NK * 3; ++i)
    printf("%s%llu", i ? ", " : "", h[NK * 3 + i]);
  printf("], \"scale_fail\": %llu, \"scale_tested\": %llu, \"ftz_vs_full_differ\": %llu, "
         "\"ftz_vs_full_tested\": %llu, \"ftz_below_m126_zero\": %llu, "
         "\"ftz_below_m126_other\": %llu, \"ftz_at_m126\": \"%08x\"}\n",
         h[100], h[101], h[102], h[103], ftzZero, ftzOther, buf[0]);
  return 0;
}
