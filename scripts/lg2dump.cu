// lg2dump DIR: measures lg2.approx.ftz.f32 (MUFU.LG2), the instruction behind
// CUDA's __logf (times ln 2), which the lowering emits for the IR's `log`: the
// attention kernels' L = m * scale + log(l) (docs/attention.md, "Numerics").
// Build on a GPU machine:
// nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a scripts/lg2dump.cu -o lg2dump
// Writes into DIR:
//   mant.v8    lg2.approx.ftz.f32(1 + j * 2^-23), j = 0 .. 2^23 - 1 (every
//              mantissa): the first result's bits, then the differences of
//              consecutive results' bits, each zigzag-encoded as a LEB128 varint
//   sample.txt "x lg2" (hex bits) for 4096 pseudo-random positive normal x
// and prints one JSON line: over every positive normal f32 x = m * 2^e
// (m in [1, 2)), the count of x whose result differs from
// (float)(e + lg2(m)) (one rounding of the exact sum of e and the measured
// lg2 of the mantissa; per exponent range), with the first differences; the
// count differing from correctly rounded log2 (by the device's double log2),
// and the largest difference in units of the last place, on [1, 2).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <string>
#include <vector>

__device__ __forceinline__ float lg2ftz(float x) {
  float y;
  asm volatile("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

constexpr uint32_t kMant = 1u << 23;

__global__ void mantissas(uint32_t *out, unsigned long long *notCr, int *maxUlp) {
  uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= kMant)
    return;
  float x = __uint_as_float(0x3F800000u + j);
  float y = lg2ftz(x);
  out[j] = __float_as_uint(y);
  float cr = (float)log2((double)x);
  if (y != cr) {
    atomicAdd(notCr, 1ull);
    int d = abs((int)__float_as_uint(y) - (int)__float_as_uint(cr));
    atomicMax(maxUlp, d);
  }
}

// Exponent classes: 0: e < 0, 1: e == 0 (the table itself), 2: 1 <= e <= 31,
// 3: e >= 32.
__global__ void separable(const uint32_t *table, unsigned long long *diff, uint32_t *first,
                          int *firstCount) {
  uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  // Every positive normal f32: bit patterns 0x00800000 .. 0x7F7FFFFF.
  uint64_t bits = 0x00800000ull + i;
  if (bits > 0x7F7FFFFFull)
    return;
  float x = __uint_as_float((uint32_t)bits);
  int e = (int)(bits >> 23) - 127;
  uint32_t m = (uint32_t)bits & (kMant - 1);
  float y = lg2ftz(x);
  float model = (float)((double)e + (double)__uint_as_float(table[m]));
  if (y != model) {
    int c = e < 0 ? 0 : e == 0 ? 1 : e <= 31 ? 2 : 3;
    atomicAdd(&diff[c], 1ull);
    int k = atomicAdd(firstCount, 1);
    if (k < 8) {
      first[3 * k] = (uint32_t)bits;
      first[3 * k + 1] = __float_as_uint(y);
      first[3 * k + 2] = __float_as_uint(model);
    }
  }
}

__global__ void sample(const uint32_t *xs, uint32_t *ys, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    ys[i] = __float_as_uint(lg2ftz(__uint_as_float(xs[i])));
}

static void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    exit(1);
  }
}

static void putVarint(std::vector<uint8_t> &out, int64_t v) {
  uint64_t z = (uint64_t)((v << 1) ^ (v >> 63));
  do {
    uint8_t b = z & 0x7F;
    z >>= 7;
    out.push_back(b | (z ? 0x80 : 0));
  } while (z);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: lg2dump DIR\n");
    return 2;
  }
  uint32_t *table;
  unsigned long long *counts; // [0] not correctly rounded, [1..4] separable classes
  int *ints;                  // [0] max ulp, [1] first count
  uint32_t *first;
  check(cudaMalloc(&table, kMant * 4), "malloc");
  check(cudaMalloc(&counts, 5 * 8), "malloc");
  check(cudaMalloc(&ints, 2 * 4), "malloc");
  check(cudaMalloc(&first, 24 * 4), "malloc");
  check(cudaMemset(counts, 0, 5 * 8), "memset");
  check(cudaMemset(ints, 0, 2 * 4), "memset");
  mantissas<<<kMant / 256, 256>>>(table, counts, ints);
  check(cudaGetLastError(), "mantissas");
  uint64_t normals = 0x7F7FFFFFull - 0x00800000ull + 1;
  separable<<<(unsigned)((normals + 255) / 256), 256>>>(table, counts + 1, first, ints + 1);
  check(cudaDeviceSynchronize(), "separable");

  std::vector<uint32_t> t(kMant);
  check(cudaMemcpy(t.data(), table, kMant * 4, cudaMemcpyDeviceToHost), "copy");
  unsigned long long c[5];
  int in[2];
  uint32_t f[24];
  check(cudaMemcpy(c, counts, sizeof c, cudaMemcpyDeviceToHost), "copy");
  check(cudaMemcpy(in, ints, sizeof in, cudaMemcpyDeviceToHost), "copy");
  check(cudaMemcpy(f, first, sizeof f, cudaMemcpyDeviceToHost), "copy");

  std::vector<uint8_t> enc;
  putVarint(enc, t[0]);
  for (uint32_t j = 1; j < kMant; ++j)
    putVarint(enc, (int64_t)t[j] - (int64_t)t[j - 1]);
  std::string dir = argv[1];
  FILE *out = fopen((dir + "/mant.v8").c_str(), "wb");
  if (!out || fwrite(enc.data(), 1, enc.size(), out) != enc.size()) {
    fprintf(stderr, "cannot write mant.v8\n");
    return 1;
  }
  fclose(out);

  // A sample over the positive normals (xorshift), for the simulator's test.
  const int n = 4096;
  std::vector<uint32_t> xs(n), ys(n);
  uint32_t s = 12345;
  for (int i = 0; i < n; ++i) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    xs[i] = 0x00800000u + s % 0x7F000000u;
  }
  uint32_t *dx, *dy;
  check(cudaMalloc(&dx, n * 4), "malloc");
  check(cudaMalloc(&dy, n * 4), "malloc");
  check(cudaMemcpy(dx, xs.data(), n * 4, cudaMemcpyHostToDevice), "copy");
  sample<<<n / 256, 256>>>(dx, dy, n);
  check(cudaMemcpy(ys.data(), dy, n * 4, cudaMemcpyDeviceToHost), "copy");
  FILE *sf = fopen((dir + "/sample.txt").c_str(), "w");
  if (!sf) {
    fprintf(stderr, "cannot write sample.txt\n");
    return 1;
  }
  for (int i = 0; i < n; ++i)
    fprintf(sf, "%08x %08x\n", xs[i], ys[i]);
  fclose(sf);

  cudaDeviceProp prop;
  check(cudaGetDeviceProperties(&prop, 0), "props");
  printf("{\"lg2dump\": true, \"gpu\": \"%s\", \"mant_bytes\": %zu, \"mant_not_cr\": %llu, "
         "\"mant_max_ulp\": %d, \"sep_diff_eneg\": %llu, \"sep_diff_e0\": %llu, "
         "\"sep_diff_e1_31\": %llu, \"sep_diff_e32up\": %llu, \"sep_first\": [",
         prop.name, enc.size(), c[0], in[0], c[1], c[2], c[3], c[4]);
  int k = in[1] < 8 ? in[1] : 8;
  for (int i = 0; i < k; ++i)
    printf("%s[\"%08x\", \"%08x\", \"%08x\"]", i ? ", " : "", f[3 * i], f[3 * i + 1], f[3 * i + 2]);
  printf("]}\n");
  return 0;
}
