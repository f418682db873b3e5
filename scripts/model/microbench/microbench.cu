// Microbenchmarks of the machine numbers the performance model reads
// (model/machines/*.json, docs/model.md "Machine data"), on whatever card it
// runs, printed as one JSON object on stdout:
//   device     name, SMs, L2 bytes, shared memory, memory bus and clock (CUDA
//              attributes)
//   clock      the SM clock (clock64 cycles over %globaltimer ns) of a spin
//              kernel on every SM, and during the wgmma kernels below
//   dram       a float4 copy / read / write over 1 GiB buffers (DRAM bytes
//              per second, median of the timed runs)
//   l2         ld.global.cg reads of a buffer that fits in L2, every SM
//   tma        cp.async.bulk (the TMA unit's 1-D copy into shared memory,
//              completing on an mbarrier): latency of one 16 KB load (L2 hit,
//              DRAM), and the bytes a cycle an SM streams through a ring of
//              stages, one SM alone and every SM at once
//   wgmma      m64nNk16 bf16 -> fp32, both operands from shared memory, N 64,
//              128, 192, 256, one and two warpgroups a CTA, one CTA a SM:
//              SM cycles a wgmma and the fraction of the SM's dense rate
//              (4096 flop a cycle, the datasheet's 989.4 TFLOP/s at 1.83 GHz
//              over 132 SMs)
// Build: nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a microbench.cu -o microbench
#include "wgmma.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>
#include <string>
#include <vector>

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__);     \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

namespace {

__device__ __forceinline__ uint64_t globalNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ uint32_t smemAddr(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- clock -----------------------------------------------------------------

// Every thread spins `cycles` SM cycles; thread 0 records cycles and ns.
__global__ void spinKernel(long long cycles, unsigned long long *outCycles,
                           unsigned long long *outNs) {
  uint64_t g0 = globalNs();
  long long t0 = clock64(), t1 = t0;
  while (t1 - t0 < cycles)
    t1 = clock64();
  uint64_t g1 = globalNs();
  if (threadIdx.x == 0) {
    outCycles[blockIdx.x] = static_cast<unsigned long long>(t1 - t0);
    outNs[blockIdx.x] = g1 - g0;
  }
}

// ---- DRAM and L2 -----------------------------------------------------------

__global__ void copyKernel(const float4 *__restrict__ src, float4 *__restrict__ dst, size_t n) {
  size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    dst[i] = src[i];
}
__global__ void writeKernel(float4 *__restrict__ dst, size_t n) {
  size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    dst[i] = make_float4(1.f, 2.f, 3.f, 4.f);
}
// Reads n float4 `reps` times (ld.global.cg: L2, not L1); the sum keeps the
// loads alive.
__global__ void readKernel(const float4 *__restrict__ src, size_t n, int reps, float *sink) {
  size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  float acc = 0.f;
  // Four independent loads in flight a thread (n a multiple of 4 strides).
  for (int r = 0; r < reps; ++r)
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i + 3 * stride < n; i += 4 * stride) {
      float4 v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u)
        v[u] = __ldcg(src + i + u * stride);
#pragma unroll
      for (int u = 0; u < 4; ++u)
        acc += v[u].x + v[u].y + v[u].z + v[u].w;
    }
  if (acc == 12345.f)
    sink[0] = acc;
}

// ---- TMA (cp.async.bulk) -----------------------------------------------------

__device__ __forceinline__ void mbarInit(uint32_t bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void bulkLoad(uint32_t dst, const void *src, uint32_t bytes,
                                         uint32_t bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
               "[%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
__device__ __forceinline__ void mbarWait(uint32_t bar, uint32_t phase) {
  uint32_t done = 0;
  while (!done)
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done)
                 : "r"(bar), "r"(phase)
                 : "memory");
}

constexpr int kMaxStages = 8, kMaxWarps = 4;

// One thread a CTA streams `loads` chunks of `chunk` bytes through a ring of
// `stages` buffers: chunk i of CTA b comes from src + ((b * loads + i) *
// stride) % span. outCycles[b]: cycles from the first issue to the last
// arrival (stages = 1: a load's latency times loads).
// With several warps (blockDim.x / 32), each streams its `loads` through a
// ring of its own; the CTA's cycles are warp 0's. With `share` > 1, CTAs b and
// b' with b / share = b' / share stream the same chunks in the same order (a
// GEMM's CTAs of one tile row or column read the same lines at about the same
// time).
__global__ void tmaKernel(const char *src, size_t span, uint32_t chunk, size_t stride, int stages,
                          int loads, unsigned long long *outCycles, unsigned long long *outNs,
                          int share) {
  extern __shared__ __align__(1024) unsigned char ring[];
  __shared__ __align__(8) uint64_t allBars[kMaxStages * kMaxWarps];
  const int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 != 0)
    return;
  uint64_t *bars = allBars + warp * kMaxStages;
  unsigned char *smem = ring + static_cast<size_t>(warp) * stages * chunk;
  for (int s = 0; s < stages; ++s)
    mbarInit(smemAddr(&bars[s]));
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  const int warps = blockDim.x / 32;
  auto source = [&](int i) {
    size_t off =
        (((static_cast<size_t>(blockIdx.x / share) * warps + warp) * loads + i) * stride) % span;
    return src + off;
  };
  uint64_t g0 = globalNs();
  long long t0 = clock64();
  for (int s = 0; s < stages && s < loads; ++s)
    bulkLoad(smemAddr(smem + s * chunk), source(s), chunk, smemAddr(&bars[s]));
  for (int i = 0; i < loads; ++i) {
    int s = i % stages;
    mbarWait(smemAddr(&bars[s]), (i / stages) & 1);
    if (i + stages < loads)
      bulkLoad(smemAddr(smem + s * chunk), source(i + stages), chunk, smemAddr(&bars[s]));
  }
  long long t1 = clock64();
  uint64_t g1 = globalNs();
  if (warp == 0) {
    outCycles[blockIdx.x] = static_cast<unsigned long long>(t1 - t0);
    outNs[blockIdx.x] = g1 - g0;
  }
}

// ---- wgmma -----------------------------------------------------------------

// A 64 x 64 bf16 tile a warpgroup and a N x 64 B tile (shared by the
// warpgroups), K-major with the 128-byte swizzle as the family's tiles; each
// step issues the four k16 slices, commits, and waits for the group before
// (one group in flight, as the family's one-CTA-a-tile consumers).
__device__ __forceinline__ uint64_t desc128B(uint32_t addr) {
  uint64_t d = 0;
  d |= static_cast<uint64_t>((addr & 0x3FFFF) >> 4);
  d |= static_cast<uint64_t>(1) << 16;
  d |= static_cast<uint64_t>(1024 >> 4) << 32;
  d |= static_cast<uint64_t>(1) << 62;
  return d;
}

template <int N, int NREG> struct Mma;
#define MICROBENCH_MMA(n)                                                                          \
  template <> struct Mma<n, n / 2> {                                                               \
    static __device__ __forceinline__ void run(float (&d)[n / 2], uint64_t a, uint64_t b) {        \
      wgmmaN##n(d, a, b);                                                                          \
    }                                                                                              \
  };
MICROBENCH_MMA(64)
MICROBENCH_MMA(128)
MICROBENCH_MMA(192)
MICROBENCH_MMA(256)

// With `stream` set, one more warp streams 16 KB TMA loads from an L2-resident
// buffer into a ring of 4 stages of the same shared memory while the
// warpgroups issue their MMAs (as a GEMM's producer does), until they are
// done: whether TMA's writes into shared memory slow the MMAs' operand reads.
struct Stream {
  const char *src = nullptr;
  size_t span = 0;
  unsigned long long *bytes = nullptr; // a CTA's loaded bytes
};
constexpr int kStreamStages = 4;
constexpr uint32_t kStreamChunk = 16384;

__device__ void streamLoads(const Stream &st, unsigned char *ring, uint64_t *bars,
                            volatile int *stop) {
  const int lane = threadIdx.x % 32;
  auto source = [&](uint32_t i) {
    return st.src + ((static_cast<size_t>(blockIdx.x) * 4096 + i) * kStreamChunk) % st.span;
  };
  uint32_t issued = 0, i = 0;
  if (lane == 0)
    for (; issued < kStreamStages; ++issued)
      bulkLoad(smemAddr(ring + issued * kStreamChunk), source(issued), kStreamChunk,
               smemAddr(&bars[issued]));
  issued = kStreamStages;
  for (;; ++i) {
    int s = i % kStreamStages;
    mbarWait(smemAddr(&bars[s]), (i / kStreamStages) & 1);
    if (*stop)
      break;
    if (lane == 0)
      bulkLoad(smemAddr(ring + s * kStreamChunk), source(issued), kStreamChunk,
               smemAddr(&bars[s]));
    ++issued;
    __syncwarp();
  }
  for (uint32_t j = i + 1; j < issued; ++j)
    mbarWait(smemAddr(&bars[j % kStreamStages]), (j / kStreamStages) & 1);
  if (lane == 0)
    st.bytes[blockIdx.x] = static_cast<unsigned long long>(issued) * kStreamChunk;
  __syncwarp();
}

template <int N>
__global__ void __launch_bounds__(288, 1)
    wgmmaKernel(int steps, int warpgroups, Stream st, unsigned long long *outCycles,
                unsigned long long *outNs, float *sink) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) uint64_t bars[kStreamStages];
  __shared__ volatile int stop;
  constexpr int kABytes = 64 * 64 * 2;
  const int wg = threadIdx.x / 128;
  unsigned char *b = smem + warpgroups * kABytes;
  unsigned char *ring = smem + 64 * 1024; // after 2 A tiles and B (at most 48 KB)
  if (threadIdx.x == 0) {
    stop = 0;
    for (int s = 0; s < kStreamStages; ++s)
      mbarInit(smemAddr(&bars[s]));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  // bf16 in [1, 2): sign 0, exponent 127, a varying mantissa.
  uint16_t *all = reinterpret_cast<uint16_t *>(smem);
  const int halves = (warpgroups * kABytes + N * 128) / 2;
  for (int i = threadIdx.x; i < halves; i += blockDim.x)
    all[i] = static_cast<uint16_t>(0x3F80 | (i * 37 & 0x7F));
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (wg >= warpgroups) { // the streaming warp
    if (st.src)
      streamLoads(st, ring, bars, &stop);
    __syncthreads();
    return;
  }
  float acc[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i)
    acc[i] = 0.f;
  const uint32_t a0 = smemAddr(smem + wg * kABytes), b0 = smemAddr(b);
  uint64_t g0 = globalNs();
  long long t0 = clock64();
  for (int s = 0; s < steps; ++s) {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int k = 0; k < 4; ++k)
      Mma<N, N / 2>::run(acc, desc128B(a0 + 32 * k), desc128B(b0 + 32 * k));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#pragma unroll
  for (int i = 0; i < N / 2; ++i)
    asm volatile("" : "+f"(acc[i])::"memory");
  long long t1 = clock64();
  uint64_t g1 = globalNs();
  if (threadIdx.x == 0)
    stop = 1;
  __syncthreads();
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < N / 2; ++i)
    sum += acc[i];
  if (sum == -1.f)
    sink[0] = sum;
  if (threadIdx.x == 0) {
    outCycles[blockIdx.x] = static_cast<unsigned long long>(t1 - t0);
    outNs[blockIdx.x] = g1 - g0;
  }
}

// ---- host --------------------------------------------------------------------

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct PerCta {
  unsigned long long *cycles = nullptr, *ns = nullptr;
  int n = 0;
  explicit PerCta(int count) : n(count) {
    CHECK(cudaMalloc(&cycles, n * sizeof(unsigned long long)));
    CHECK(cudaMalloc(&ns, n * sizeof(unsigned long long)));
  }
  ~PerCta() {
    cudaFree(cycles);
    cudaFree(ns);
  }
  // Median over the first `count` CTAs of cycles and of cycles / ns (GHz).
  void read(int count, double &medCycles, double &medGhz) const {
    std::vector<unsigned long long> c(count), t(count);
    CHECK(cudaMemcpy(c.data(), cycles, count * sizeof(c[0]), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(t.data(), ns, count * sizeof(t[0]), cudaMemcpyDeviceToHost));
    std::vector<double> cv, gv;
    for (int i = 0; i < count; ++i) {
      cv.push_back(static_cast<double>(c[i]));
      if (t[i] > 0)
        gv.push_back(static_cast<double>(c[i]) / static_cast<double>(t[i]));
    }
    medCycles = median(cv);
    medGhz = gv.empty() ? 0.0 : median(gv);
  }
};

// Median ms of `reps` runs of f (after one warm-up run), timed by events.
template <class F> double timeMs(int reps, F f) {
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  f();
  CHECK(cudaDeviceSynchronize());
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaEventRecord(e0));
    f();
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float m = 0;
    CHECK(cudaEventElapsedTime(&m, e0, e1));
    ms.push_back(m);
  }
  CHECK(cudaGetLastError());
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return median(ms);
}

int attr(cudaDeviceAttr a) {
  int v = 0;
  CHECK(cudaDeviceGetAttribute(&v, a, 0));
  return v;
}

std::string out = "{";
void field(const char *key, double v) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s\"%s\": %.6g", out.size() > 1 ? ", " : "", key, v);
  out += buf;
  std::fprintf(stderr, "%s %.6g\n", key, v);
}

// `src`: stream TMA loads from it (an L2-resident span) beside the MMAs.
template <int N>
void wgmmaCase(int sms, int warpgroups, float *sink, const char *src = nullptr,
               size_t span = 0) {
  const int steps = 4096;
  PerCta per(sms);
  unsigned long long *loaded = nullptr;
  CHECK(cudaMalloc(&loaded, sms * sizeof(unsigned long long)));
  Stream st{src, span, loaded};
  // Enough shared memory for one CTA a SM.
  int bytes = 160 * 1024;
  CHECK(cudaFuncSetAttribute(wgmmaKernel<N>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  int threads = 128 * warpgroups + 32;
  wgmmaKernel<N><<<sms, threads, bytes>>>(steps / 8, warpgroups, st, per.cycles, per.ns, sink);
  CHECK(cudaDeviceSynchronize());
  wgmmaKernel<N><<<sms, threads, bytes>>>(steps, warpgroups, st, per.cycles, per.ns, sink);
  CHECK(cudaDeviceSynchronize());
  double cycles = 0, ghz = 0;
  per.read(sms, cycles, ghz);
  double perMma = cycles / (4.0 * steps * warpgroups);
  double ideal = 2.0 * 64 * N * 16 / 4096.0;
  std::string key = "wgmma_n" + std::to_string(N) + "_wg" + std::to_string(warpgroups) +
                    (src ? "_tma" : "");
  if (src) {
    std::vector<unsigned long long> b(sms);
    CHECK(cudaMemcpy(b.data(), loaded, sms * sizeof(b[0]), cudaMemcpyDeviceToHost));
    std::vector<double> v;
    for (unsigned long long x : b)
      v.push_back(static_cast<double>(x));
    field((key + "_tma_bytes_per_clk").c_str(), median(v) / cycles);
  }
  CHECK(cudaFree(loaded));
  field((key + "_cycles").c_str(), perMma);
  field((key + "_efficiency").c_str(), ideal / perMma);
  field((key + "_sm_ghz").c_str(), ghz);
  field((key + "_tflops").c_str(), 2.0 * 64 * N * 16 * 4.0 * steps * warpgroups * sms /
                                        (cycles / ghz) * 1e-3);
}

void tmaCase(const char *key, const char *src, size_t span, int ctas, int stages, int loads,
             uint32_t chunk, size_t stride, int warps = 1, int share = 1) {
  PerCta per(ctas);
  int bytes = stages * chunk * warps;
  CHECK(cudaFuncSetAttribute(tmaKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  tmaKernel<<<ctas, 32 * warps, bytes>>>(src, span, chunk, stride, stages, loads, per.cycles,
                                         per.ns, share);
  CHECK(cudaDeviceSynchronize());
  double cycles = 0, ghz = 0;
  per.read(ctas, cycles, ghz);
  std::string k = key;
  if (stages == 1) {
    field((k + "_cycles").c_str(), cycles / loads);
  } else {
    double perSm = static_cast<double>(loads) * chunk * warps;
    field((k + "_bytes_per_clk_per_sm").c_str(), perSm / cycles);
    field((k + "_tb_s").c_str(), perSm * ctas / (cycles / ghz) * 1e-3);
  }
}

} // namespace

// L2 -> shared memory by how many SMs read each line at once (issue 15's
// best-point misses: the family's GEMMs reach 12.8-13.8 TB/s where every SM
// reading distinct lines reaches 7-8): every SM, four warps of 3 x 16 KB
// stages, groups of `share` CTAs streaming the same chunks; a span of 16 MB
// (L2) and of 512 MB (each chunk's first reader misses L2). An odd number of
// loads a stream makes the streams' start chunks distinct modulo the span's
// (a power of two), so no two groups read one chunk at the same time. The
// argument `l2share` runs only these cases.
void l2ShareCases(const char *src, int sms) {
  for (size_t span : {size_t(16) << 20, size_t(512) << 20})
    for (int share : {1, 2, 4, 8, 12, 33}) {
      bool dram = span > (size_t(64) << 20);
      std::string key = "tma_share" + std::to_string(share) + (dram ? "_dram" : "_l2");
      tmaCase(key.c_str(), src, span, sms, 3, dram ? 301 : 1001, 16384, 16384, 4, share);
    }
}

int main(int argc, char **argv) {
  const bool onlyShare = argc > 1 && std::string(argv[1]) == "l2share";
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("{\"name\": \"%s\", ", prop.name);
  std::fprintf(stderr, "name %s\n", prop.name);
  const int sms = attr(cudaDevAttrMultiProcessorCount);
  field("sms", sms);
  field("l2_bytes", attr(cudaDevAttrL2CacheSize));
  field("smem_bytes_per_sm", attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor));
  field("smem_bytes_per_cta_optin", attr(cudaDevAttrMaxSharedMemoryPerBlockOptin));
  field("registers_per_sm", attr(cudaDevAttrMaxRegistersPerMultiprocessor));
  field("threads_per_sm", attr(cudaDevAttrMaxThreadsPerMultiProcessor));
  field("attr_clock_khz", attr(cudaDevAttrClockRate));
  field("attr_memory_clock_khz", attr(cudaDevAttrMemoryClockRate));
  field("attr_memory_bus_bits", attr(cudaDevAttrGlobalMemoryBusWidth));
  field("global_mem_bytes", static_cast<double>(prop.totalGlobalMem));

  float *sink;
  CHECK(cudaMalloc(&sink, 16));

  // Clock: a spin of 2e7 cycles (about 10 ms) on every SM.
  {
    PerCta per(sms);
    spinKernel<<<sms, 128>>>(20000000LL, per.cycles, per.ns);
    CHECK(cudaDeviceSynchronize());
    double c = 0, g = 0;
    per.read(sms, c, g);
    field("spin_sm_ghz", g);
  }

  // DRAM: 1 GiB buffers.
  const size_t bytes = size_t(1) << 30, n4 = bytes / 16;
  float4 *a, *b;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMemset(a, 0, bytes));
  CHECK(cudaMemset(b, 0, bytes));
  const int grid = sms * 8, block = 512;
  double ms = timeMs(20, [&] { copyKernel<<<grid, block>>>(a, b, n4); });
  field("dram_copy_tb_s", 2.0 * bytes / ms * 1e-9);
  ms = timeMs(20, [&] { readKernel<<<grid, block>>>(a, n4, 1, sink); });
  field("dram_read_tb_s", 1.0 * bytes / ms * 1e-9);
  ms = timeMs(20, [&] { writeKernel<<<grid, block>>>(b, n4); });
  field("dram_write_tb_s", 1.0 * bytes / ms * 1e-9);

  // L2: 8.65 MB (one round of four loads a thread of 4 x 132 CTAs of 256
  // threads) read 50 times a run (every SM; L1 bypassed).
  {
    const int l2Grid = sms * 4, l2Block = 256;
    const size_t n = size_t(4) * l2Grid * l2Block;
    const int reps = 50;
    ms = timeMs(10, [&] { readKernel<<<l2Grid, l2Block>>>(a, n, reps, sink); });
    field("l2_read_8mb_tb_s", 16.0 * n * reps / ms * 1e-9);
  }

  if (onlyShare) {
    l2ShareCases(reinterpret_cast<const char *>(a), sms);
    std::printf("%s}\n", out.c_str() + 1);
    return 0;
  }
  // TMA: 16 KB chunks (the family's 128 x 64 bf16 box).
  {
    const uint32_t chunk = 16384;
    const char *src = reinterpret_cast<const char *>(a);
    // Latency, one SM, one load at a time: the same 16 KB again (L2 hit) and
    // chunks 1 MB apart over 1 GiB (each a DRAM miss after the copy flushed
    // L2 of them).
    tmaCase("tma_latency_l2_16kb", src, chunk, 1, 1, 200, chunk, chunk);
    tmaCase("tma_latency_dram_16kb", src + (size_t(512) << 20), size_t(512) << 20, 1, 1, 200,
            chunk, size_t(1) << 20);
    tmaCase("tma_latency_l2_1kb", src, 1024, 1, 1, 200, 1024, 1024);
    // Streaming: 8 MB (L2) through 4 and 8 stages, one SM alone and all SMs.
    for (int stages : {4, 8}) {
      std::string s = std::to_string(stages);
      tmaCase(("tma_l2_one_sm_stages" + s).c_str(), src, size_t(8) << 20, 1, stages, 2000, chunk,
              chunk);
      tmaCase(("tma_l2_all_sms_stages" + s).c_str(), src, size_t(8) << 20, sms, stages, 2000,
              chunk, chunk);
    }
    tmaCase("tma_dram_all_sms_stages8", src, bytes, sms, 8, 400, chunk, chunk);
    // Four warps, each its own ring of 3 stages of 16 KB (a stream a warp):
    // does an SM pull more than one thread's stream does?
    tmaCase("tma_l2_one_sm_4warps", src, size_t(8) << 20, 1, 3, 1000, chunk, chunk, 4);
    tmaCase("tma_l2_all_sms_4warps", src, size_t(8) << 20, sms, 3, 1000, chunk, chunk, 4);
    // 4 KB loads (a 32-row box), 8 stages, one warp.
    tmaCase("tma_l2_all_sms_4kb_stages8", src, size_t(8) << 20, sms, 8, 4000, 4096, 4096);
  }
  // wgmma issue rates.
  for (int wgs : {1, 2}) {
    wgmmaCase<64>(sms, wgs, sink);
    wgmmaCase<128>(sms, wgs, sink);
    wgmmaCase<192>(sms, wgs, sink);
    wgmmaCase<256>(sms, wgs, sink);
  }
  // The same with TMA loads streaming into the SM's shared memory (8 MB
  // span: L2 hits), two warpgroups, last (a fault here leaves the rest).
  const char *l2src = reinterpret_cast<const char *>(a);
  wgmmaCase<64>(sms, 2, sink, l2src, size_t(8) << 20);
  wgmmaCase<128>(sms, 2, sink, l2src, size_t(8) << 20);
  wgmmaCase<256>(sms, 2, sink, l2src, size_t(8) << 20);
  wgmmaCase<64>(sms, 1, sink, l2src, size_t(8) << 20);
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  std::printf("%s}\n", out.c_str() + 1);
  return 0;
}
