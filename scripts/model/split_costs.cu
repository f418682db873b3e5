// Microbenchmark of the two machine numbers the performance model charges
// split K over a cluster with (docs/model.md, model/machines/h100_sxm.json):
//   cluster_barrier_cycles      one barrier.cluster.arrive + wait
//   dsmem_bytes_per_clk_per_sm  bytes an SM pulls from peers' shared memory
// Every SM runs one CTA of 128 threads (one consumer warpgroup, as the
// family's split-K points); clusters of 2 and 4. The DSMEM pull repeats the
// lowered family's reduction: each thread loads 16 bytes of a peer's fp32
// partial tile (row tid / 2, columns (tid % 2) * BN / 2 + j * 4) with
// ld.shared::cluster, then stores them into its own shared memory, j = 0 ..
// BN / 8, one load in flight (the lowering's volatile asm keeps the order),
// then bar.sync ("halfrow": the family before 2026-11-26 06:00 UTC, whose
// warps put their 16-byte chunks on 4 banks); "rows" is the family's pattern
// since (consecutive threads on consecutive 16 bytes of whole rows, one load
// in flight a thread); "bulk" the same bytes with 8 loads in flight a thread.
// Also cudaOccupancyMaxActiveClusters of the split-K points' shapes (clusters
// of 2 and 4 CTAs of 256 threads, one or two CTAs an SM by shared memory).
// Cycles are SM cycles (clock64); the SM clock during the run is measured
// against %globaltimer.
// Build: nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a split_costs.cu -o split_costs
// Prints one `name value` line a figure.
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      std::printf("error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__);              \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

__device__ __forceinline__ uint32_t smemAddr(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ uint32_t peerAddr(uint32_t addr, uint32_t rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}
__device__ __forceinline__ uint32_t clusterRank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t clusterSize() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ void clusterSync() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ uint64_t globalNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// out[block] = cycles of `iters` cluster barriers; ns/cycles of the CTA's run.
__global__ void barrierKernel(int iters, unsigned long long *cycles, unsigned long long *ns) {
  clusterSync();
  uint64_t g0 = globalNs();
  long long t0 = clock64();
  for (int i = 0; i < iters; ++i)
    clusterSync();
  long long t1 = clock64();
  uint64_t g1 = globalNs();
  if (threadIdx.x == 0) {
    cycles[blockIdx.x] = static_cast<unsigned long long>(t1 - t0);
    ns[blockIdx.x] = g1 - g0;
  }
}

// BN columns of fp32, 64 rows: the partial tile of one consumer warpgroup.
enum Pattern { HalfRow, Rows, Bulk };
template <int BN, Pattern PAT>
__global__ void pullKernel(int reps, unsigned long long *cycles, float *sink) {
  extern __shared__ __align__(128) float smem[];
  float *give = smem;
  float *take = smem + 64 * BN;
  const int tid = threadIdx.x;
  for (int i = tid; i < 64 * BN; i += blockDim.x)
    give[i] = static_cast<float>(i + blockIdx.x);
  clusterSync();
  const uint32_t rank = clusterRank(), size = clusterSize();
  long long t0 = clock64();
  for (int r = 0; r < reps; ++r) {
    for (uint32_t p = 1; p < size; ++p) {
      uint32_t peer = (rank + p) % size;
      if constexpr (PAT != Bulk) {
        for (int j = 0; j < BN / 8; ++j) {
          int row = PAT == HalfRow ? tid / 2 : j * (512 / BN) + tid / (BN / 4);
          int col = PAT == HalfRow ? tid % 2 * (BN / 2) + j * 4 : tid % (BN / 4) * 4;
          uint32_t src = peerAddr(smemAddr(give + row * BN + col), peer);
          uint32_t a, b, c, d;
          asm volatile("ld.shared::cluster.v4.b32 {%0, %1, %2, %3}, [%4];"
                       : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
                       : "r"(src)
                       : "memory");
          asm volatile(
              "st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(smemAddr(take + row * BN + col)),
              "r"(a), "r"(b), "r"(c), "r"(d)
              : "memory");
        }
      } else {
        constexpr int chunks = 64 * BN / 4 / 128; // 16-byte chunks a thread
        uint32_t base = peerAddr(smemAddr(give), peer);
        for (int j0 = 0; j0 < chunks; j0 += 8) {
          uint4 v[8];
#pragma unroll
          for (int u = 0; u < 8; ++u) {
            uint32_t off = ((j0 + u) * 128 + tid) * 16;
            asm volatile("ld.shared::cluster.v4.b32 {%0, %1, %2, %3}, [%4];"
                         : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w)
                         : "r"(base + off));
          }
#pragma unroll
          for (int u = 0; u < 8; ++u)
            reinterpret_cast<uint4 *>(take)[(j0 + u) * 128 + tid] = v[u];
        }
      }
      __syncthreads();
    }
  }
  long long t1 = clock64();
  if (tid == 0)
    cycles[blockIdx.x] = static_cast<unsigned long long>(t1 - t0);
  if (take[tid] == -1.0f)
    sink[blockIdx.x] = take[tid];
  clusterSync(); // no CTA leaves while a peer reads its `give`
}

template <typename K>
cudaError_t launch(K kernel, int grid, int cluster, size_t smem, void **args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(128);
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = cluster;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelExC(&cfg, reinterpret_cast<const void *>(kernel), args);
}

static double mean(const unsigned long long *v, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i)
    s += static_cast<double>(v[i]);
  return s / n;
}

template <int BN, Pattern PAT>
int pull(int grid, int cluster, unsigned long long *dCycles, unsigned long long *hCycles,
         float *sink) {
  size_t smem = 2 * 64 * BN * sizeof(float);
  CHECK(cudaFuncSetAttribute(pullKernel<BN, PAT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(smem)));
  int reps = 50;
  void *args[] = {&reps, &dCycles, &sink};
  for (int warm = 0; warm < 2; ++warm) {
    CHECK(launch(pullKernel<BN, PAT>, grid, cluster, smem, args));
    CHECK(cudaDeviceSynchronize());
  }
  CHECK(cudaMemcpy(hCycles, dCycles, grid * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  double bytes = static_cast<double>(reps) * (cluster - 1) * 64 * BN * 4;
  double cyc = mean(hCycles, grid);
  std::printf("dsmem_%s_bn%d_cluster%d bytes_per_clk_per_sm %.3f cycles_per_peer_tile %.0f\n",
              PAT == Bulk   ? "bulk"
              : PAT == Rows ? "rows"
                            : "halfrow",
              BN, cluster, bytes / cyc, cyc / (static_cast<double>(reps) * (cluster - 1)));
  return 0;
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s sms %d\n", prop.name, prop.multiProcessorCount);
  const int sms = prop.multiProcessorCount;
  unsigned long long *dCycles, *dNs;
  float *sink;
  CHECK(cudaMalloc(&dCycles, 4096 * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&dNs, 4096 * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&sink, 4096 * sizeof(float)));
  unsigned long long hCycles[4096], hNs[4096];
  for (int cluster : {2, 4}) {
    int grid = sms / cluster * cluster;
    int iters = 2000;
    void *args[] = {&iters, &dCycles, &dNs};
    for (int warm = 0; warm < 2; ++warm) {
      CHECK(launch(barrierKernel, grid, cluster, 0, args));
      CHECK(cudaDeviceSynchronize());
    }
    CHECK(cudaMemcpy(hCycles, dCycles, grid * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hNs, dNs, grid * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    double cyc = mean(hCycles, grid), ns = mean(hNs, grid);
    std::printf("cluster_barrier_cluster%d cycles %.1f ns %.1f sm_clock_ghz %.3f\n", cluster,
                cyc / iters, ns / iters, cyc / ns);
  }
  for (int cluster : {2, 4}) {
    int grid = sms / cluster * cluster;
    if (pull<64, HalfRow>(grid, cluster, dCycles, hCycles, sink) ||
        pull<128, HalfRow>(grid, cluster, dCycles, hCycles, sink) ||
        pull<64, Rows>(grid, cluster, dCycles, hCycles, sink) ||
        pull<128, Rows>(grid, cluster, dCycles, hCycles, sink) ||
        pull<64, Bulk>(grid, cluster, dCycles, hCycles, sink) ||
        pull<128, Bulk>(grid, cluster, dCycles, hCycles, sink))
      return 1;
  }
  // How many clusters run at once: the GPCs' SM counts, not the SM total,
  // bound clusters of 4.
  for (int cluster : {2, 4})
    for (int smem : {107584, 232448 - 1024}) {
      CHECK(cudaFuncSetAttribute(pullKernel<64, Rows>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 smem));
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = dim3(4096);
      cfg.blockDim = dim3(256);
      cfg.dynamicSmemBytes = static_cast<size_t>(smem);
      cudaLaunchAttribute attr[1];
      attr[0].id = cudaLaunchAttributeClusterDimension;
      attr[0].val.clusterDim.x = cluster;
      attr[0].val.clusterDim.y = 1;
      attr[0].val.clusterDim.z = 1;
      cfg.attrs = attr;
      cfg.numAttrs = 1;
      int n = 0;
      CHECK(cudaOccupancyMaxActiveClusters(&n, pullKernel<64, Rows>, &cfg));
      std::printf("max_active_clusters cluster%d smem %d clusters %d ctas %d\n", cluster, smem, n,
                  n * cluster);
    }
  return 0;
}
