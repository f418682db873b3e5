// tilescope device-scale runtime: what the `device.*` primitives of a kernel
// launched with `devices(N)` lower to (docs/scales.md).
//
// One process per GPU. Every rank allocates one *symmetric region* of the same
// size; the regions are exchanged as CUDA IPC handles through a directory of
// small files (bootstrap below), so that rank r holds a pointer into every
// peer's region. A region starts with the flag area and continues with data:
//
//   [ flags: u32[2][kMaxBlocks][kMaxDevices] | data ... ]
//
// flags[phase][b][src] of rank r is written only by block b of rank src (a
// signal), and read only by block b of rank r (a wait). Flags are never reset:
// a signal stores the call's *epoch*, which grows by one for every collective
// call on the communicator, in the same order on every rank, and a wait lasts
// until the flag has reached the epoch (wrap-aware). This is the epoch
// discipline that tests/lit/devices proves, and whose absence is the planted
// bug `flag-without-epoch`.
//
// Memory model (PTX ISA, "Memory Consistency Model"): a signal is
// `fence.acq_rel.sys` followed by `st.relaxed.sys` of the epoch into the
// peer's flag; a wait spins on `ld.acquire.sys` of the own flag. The block's
// other threads are ordered with the signalling / waiting thread by
// `bar.sync`, so everything a block wrote before its signal (pushes into a
// peer's memory) is visible to the peer's block after its wait.
//
// This header must not depend on anything of tilescope's C++ libraries: it is
// compiled by nvcc into user programs and into the benchmark.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace ts_dev {

constexpr int kMaxDevices = 8;
constexpr int kMaxBlocks = 512;
// Flags of the warp collectives (device.warp_allreduce): one slot per block,
// warp and source rank, after the two phases of the block barriers.
constexpr int kWarpSlots = 32;
// Then one slot per block and source rank for the device.barrier calls of
// lowered kernels (kernelBarrier).
constexpr size_t kFlagBytes =
    sizeof(uint32_t) * (2 + kWarpSlots + 1) * size_t(kMaxBlocks) * kMaxDevices;
constexpr size_t kDataOffset = (kFlagBytes + 4095) / 4096 * 4096;
// A wait that lasts longer than this (ns) is a deadlock: the kernel traps
// instead of hanging the machine.
constexpr unsigned long long kWaitTimeoutNs = 20ull * 1000 * 1000 * 1000;

// ---------------------------------------------------------------------------
// Device side: the scoped flag operations.

__device__ inline unsigned long long globalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// device.signal(flag, dev = peer, value = v): a relaxed store at system
// scope; after device.fence (fence.acq_rel.sys) it is a release.
__device__ inline void storeRelaxedSys(uint32_t *peerFlag, uint32_t value) {
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(peerFlag), "r"(value) : "memory");
}

// The runtime's own signals: release at system scope.
__device__ inline void signalSys(uint32_t *peerFlag, uint32_t value) {
  asm volatile("fence.acq_rel.sys;" ::: "memory");
  storeRelaxedSys(peerFlag, value);
}

__device__ inline uint32_t loadAcquireSys(const uint32_t *flag) {
  uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
  return v;
}

// device.wait(flag, value = v): until the flag has reached v (wrap-aware).
// A wait past kWaitTimeoutNs is a deadlock: the kernel traps (an illegal-
// instruction error on the host) without a message, since a printf in a
// kernel costs a stack frame and makes ptxas serialize a wgmma pipeline
// (C7510).
__device__ inline void waitSys(const uint32_t *flag, uint32_t value) {
  unsigned long long start = globalTimer();
  while (static_cast<int32_t>(loadAcquireSys(flag) - value) < 0)
    if (globalTimer() - start > kWaitTimeoutNs)
      __trap();
}

// What a collective kernel receives: the peer pointer table and the call.
struct CallArgs {
  char *region[kMaxDevices]; // every rank's symmetric region, mapped here
  int rank = 0;
  int ndev = 1;
  uint32_t epoch = 0;
  size_t inOffset = 0;  // byte offset of the input in every region
  size_t outOffset = 0; // byte offset of the output in every region
  size_t nvec = 0;      // 16-byte vectors (8 bf16) per rank
};

// a.region[p] for a p known at run time only, by selects: indexing the
// kernel parameter's table with it would copy the table to local memory.
__device__ inline char *regionOf(const CallArgs &a, int p) {
  char *r = a.region[0];
#pragma unroll
  for (int q = 1; q < kMaxDevices; ++q)
    r = p == q ? a.region[q] : r;
  return r;
}

// The element of device p that `mine` (a pointer into this rank's region)
// is in this rank's: the regions are symmetric.
template <class T> __device__ inline T *peerPtr(const CallArgs &a, int p, T *mine) {
  return reinterpret_cast<T *>(regionOf(a, p) +
                               (reinterpret_cast<const char *>(mine) - regionOf(a, a.rank)));
}

__device__ inline uint32_t *flagSlot(char *region, int phase, int block, int src) {
  return reinterpret_cast<uint32_t *>(region) + (phase * kMaxBlocks + block) * kMaxDevices + src;
}

// device.barrier() between block b of every rank, in `phase` (0: start of a
// call, 1: end of a call); b is the block's linear index in the grid.
__device__ inline void blockBarrier(const CallArgs &a, int phase) {
  __syncthreads();
  int t = threadIdx.x;
  int b = int(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z));
  if (t < a.ndev)
    signalSys(flagSlot(regionOf(a, t), phase, b, a.rank), a.epoch);
  if (t < a.ndev)
    waitSys(flagSlot(regionOf(a, a.rank), phase, b, t), a.epoch);
  __syncthreads();
}

__device__ inline void addBf16x8(float (&acc)[8], uint4 v) {
  const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 f = __bfloat1622float2(h[i]);
    acc[2 * i] += f.x;
    acc[2 * i + 1] += f.y;
  }
}

__device__ inline uint4 packBf16x8(const float (&acc)[8]) {
  uint4 out;
  __nv_bfloat162 *h = reinterpret_cast<__nv_bfloat162 *>(&out);
#pragma unroll
  for (int i = 0; i < 4; ++i)
    h[i] = __floats2bfloat162_rn(acc[2 * i], acc[2 * i + 1]);
  return out;
}


// --- tile collectives: what `tilescope lower` emits a devices(N) kernel's
// device.allreduce / all_gather / reduce_scatter as (codegen/DeviceEmitter.h).
// `dst` and `src` are byte offsets in every rank's region, `nvec` the tile's
// 16-byte vectors (per rank, of src); the tile's vectors are split into
// `parts` ranges, of which this CTA moves range `part`. The caller brackets
// its tiles with blockBarrier(a, 0) and blockBarrier(a, 1).

__device__ inline void partRange(size_t n, int part, int parts, size_t &begin, size_t &end) {
  size_t per = (n + parts - 1) / parts;
  begin = per * part < n ? per * part : n;
  end = begin + per < n ? begin + per : n;
}

// The sum of vector i of the tensor at byte offset `src` over all ranks, in
// rank order 0..N-1 (fp32), so that every rank computes the same bits.
__device__ inline uint4 sumAt(const CallArgs &a, size_t src, size_t i) {
  uint4 v[kMaxDevices];
#pragma unroll
  for (int p = 0; p < kMaxDevices; ++p)
    if (p < a.ndev)
      v[p] = __ldcg(reinterpret_cast<const uint4 *>(a.region[p] + src) + i);
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
  for (int p = 0; p < kMaxDevices; ++p)
    if (p < a.ndev)
      addBf16x8(acc, v[p]);
  return packBf16x8(acc);
}

__device__ inline void allreduceOneShotTile(const CallArgs &a, size_t dst, size_t src, size_t nvec,
                                            int part, int parts) {
  size_t begin, end;
  partRange(nvec, part, parts, begin, end);
  uint4 *out = reinterpret_cast<uint4 *>(regionOf(a, a.rank) + dst);
  for (size_t i = begin + threadIdx.x; i < end; i += blockDim.x)
    out[i] = sumAt(a, src, i);
}

__device__ inline void allreduceTwoShotTile(const CallArgs &a, size_t dst, size_t src, size_t nvec,
                                            int part, int parts) {
  size_t chunk = nvec / a.ndev, base = a.rank * chunk, begin, end;
  partRange(chunk, part, parts, begin, end);
  for (size_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    uint4 s = sumAt(a, src, base + i);
#pragma unroll
    for (int p = 0; p < kMaxDevices; ++p)
      if (p < a.ndev)
        reinterpret_cast<uint4 *>(a.region[p] + dst)[base + i] = s;
  }
}

__device__ inline void reduceScatterTile(const CallArgs &a, size_t dst, size_t src, size_t nvec,
                                         int part, int parts) {
  size_t chunk = nvec / a.ndev, base = a.rank * chunk, begin, end;
  partRange(chunk, part, parts, begin, end);
  uint4 *out = reinterpret_cast<uint4 *>(regionOf(a, a.rank) + dst);
  for (size_t i = begin + threadIdx.x; i < end; i += blockDim.x)
    out[i] = sumAt(a, src, base + i);
}

__device__ inline void allGatherTile(const CallArgs &a, size_t dst, size_t src, size_t nvec,
                                     int part, int parts) {
  size_t begin, end;
  partRange(nvec, part, parts, begin, end);
  const uint4 *in = reinterpret_cast<const uint4 *>(regionOf(a, a.rank) + src);
  for (size_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    uint4 v = in[i];
#pragma unroll
    for (int p = 0; p < kMaxDevices; ++p)
      if (p < a.ndev)
        reinterpret_cast<uint4 *>(a.region[p] + dst)[a.rank * nvec + i] = v;
  }
}

// device.allreduce(X, impl = "one_shot"): every rank reads all N inputs.
__global__ void allreduceOneShotBf16(CallArgs a) {
  blockBarrier(a, 0);
  uint4 *out = reinterpret_cast<uint4 *>(regionOf(a, a.rank) + a.outOffset);
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < a.nvec;
       i += size_t(gridDim.x) * blockDim.x)
    out[i] = sumAt(a, a.inOffset, i);
  blockBarrier(a, 1); // nobody reuses an input another rank still reads
}

// device.allreduce(X, impl = "two_shot"): rank r reduces chunk r (a
// reduce-scatter) and pushes it into every rank's output (an all-gather).
__global__ void allreduceTwoShotBf16(CallArgs a) {
  blockBarrier(a, 0);
  size_t chunk = a.nvec / a.ndev, base = a.rank * chunk;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < chunk;
       i += size_t(gridDim.x) * blockDim.x) {
    uint4 s = sumAt(a, a.inOffset, base + i);
#pragma unroll
    for (int p = 0; p < kMaxDevices; ++p)
      if (p < a.ndev)
        reinterpret_cast<uint4 *>(a.region[p] + a.outOffset)[base + i] = s;
  }
  blockBarrier(a, 1); // the pushes into my output have arrived
}

// device.reduce_scatter(Y, X): rank r's output chunk r is the sum of chunk r.
__global__ void reduceScatterBf16(CallArgs a) {
  blockBarrier(a, 0);
  size_t chunk = a.nvec / a.ndev, base = a.rank * chunk;
  uint4 *out = reinterpret_cast<uint4 *>(regionOf(a, a.rank) + a.outOffset);
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < chunk;
       i += size_t(gridDim.x) * blockDim.x)
    out[i] = sumAt(a, a.inOffset, base + i);
  blockBarrier(a, 1);
}

// device.all_gather(Y, X): rank r's input (nvec vectors) lands at chunk r of
// every rank's output (N * nvec vectors).
__global__ void allGatherBf16(CallArgs a) {
  blockBarrier(a, 0);
  const uint4 *in = reinterpret_cast<const uint4 *>(regionOf(a, a.rank) + a.inOffset);
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < a.nvec;
       i += size_t(gridDim.x) * blockDim.x) {
    uint4 v = in[i];
#pragma unroll
    for (int p = 0; p < kMaxDevices; ++p)
      if (p < a.ndev)
        reinterpret_cast<uint4 *>(a.region[p] + a.outOffset)[a.rank * a.nvec + i] = v;
  }
  blockBarrier(a, 1);
}

// device.get(dst, src, dev = p) of a whole CTA (codegen/CudaEmitter.h): the
// Rows x Cols bf16 tile at src's byte offset in device p's region (Cols a
// multiple of 8, rows 16-byte aligned, `ld` elements apart) into dst in this
// rank's memory; U vectors a thread in flight. Peer data is read through L2
// (ld.global.cg); the kernel's device barrier before its body makes the
// peer's input complete.
__device__ inline void ctaGetTile(const CallArgs &a, int p, __nv_bfloat16 *dst,
                                  const __nv_bfloat16 *src, long long rows, long long cols,
                                  long long ldDst, long long ldSrc) {
  constexpr int U = 4;
  const char *from = regionOf(a, p) + (reinterpret_cast<const char *>(src) - regionOf(a, a.rank));
  const long long rowVecs = cols / 8, total = rows * rowVecs;
  const bool flat = ldDst == cols && ldSrc == cols; // whole rows: one contiguous range
  auto at = [&](long long v, long long ld) {
    return flat ? size_t(v) * 16 : size_t(v / rowVecs) * size_t(ld) * 2 + size_t(v % rowVecs) * 16;
  };
  for (long long v0 = threadIdx.x; v0 < total; v0 += (long long)blockDim.x * U) {
    uint4 x[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (v0 + (long long)blockDim.x * u < total)
        x[u] = __ldcg(reinterpret_cast<const uint4 *>(from + at(v0 + (long long)blockDim.x * u, ldSrc)));
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (v0 + (long long)blockDim.x * u < total)
        *reinterpret_cast<uint4 *>(reinterpret_cast<char *>(dst) +
                                   at(v0 + (long long)blockDim.x * u, ldDst)) = x[u];
  }
}

// device.barrier() of a lowered kernel: block b of every rank, on slots of
// its own with the value epoch * 2^16 + the block's count of device.barrier
// calls in this kernel call (`seq`, the same in every thread), so values grow
// across the calls of a kernel and across kernel calls; a block traps past
// 65535 barriers in one call.
__device__ inline void kernelBarrier(const CallArgs &a, uint32_t &seq) {
  __syncthreads();
  if (++seq > 0xffffu)
    __trap();
  int t = threadIdx.x;
  int b = int(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z));
  uint32_t value = (a.epoch << 16) + seq;
  auto slot = [&](char *region, int src) {
    return reinterpret_cast<uint32_t *>(region) +
           (size_t(2 + kWarpSlots) * kMaxBlocks + b) * kMaxDevices + src;
  };
  if (t < a.ndev) {
    signalSys(slot(regionOf(a, t), a.rank), value);
    waitSys(slot(regionOf(a, a.rank), t), value);
  }
  __syncthreads();
}

// --- warp collectives: device.warp_allreduce, made by one warp of a block
// (a warp-specialized kernel's communication warp) and paired with the same
// warp of the same block on every device. Its flags hold the call's epoch
// times 2^16 plus the warp's count of barriers in this kernel call (two per
// collective), so they grow across the calls of a kernel and across kernel
// calls; `seq` is the warp's count of collectives so far (every lane keeps
// the same).

__device__ inline uint32_t *warpFlagSlot(char *region, int block, int warp, int src) {
  return reinterpret_cast<uint32_t *>(region) + 2 * kMaxBlocks * kMaxDevices +
         (size_t(block) * kWarpSlots + warp) * kMaxDevices + src;
}

// A device barrier of this warp with the same warp of this block on every
// device: lane p signals device p and waits for device p's signal.
// The block's slot is its linear index in the grid (the launcher keeps grids
// of warp-collective kernels within kMaxBlocks).
__device__ inline void warpBarrier(const CallArgs &a, uint32_t value) {
  __syncwarp();
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int block = int(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z));
  if (lane < a.ndev) {
    signalSys(warpFlagSlot(regionOf(a, lane), block, warp, a.rank), value);
    waitSys(warpFlagSlot(regionOf(a, a.rank), block, warp, lane), value);
  }
  __syncwarp();
}

// The byte offset of a pointer into this rank's region: the same offset
// reaches the tensor's element on every rank (the regions are symmetric).
__device__ inline size_t regionOffset(const CallArgs &a, const void *p) {
  return size_t(static_cast<const char *>(p) - regionOf(a, a.rank));
}

// dst (on every device) = the sum over devices of src, a Rows x Cols bf16
// tile (Cols a multiple of 8; rows `ld` elements apart and 16-byte aligned),
// by one warp. two_shot: device r sums its chunk r of the tile's 16-byte
// vectors and stores it into every device's dst; one_shot: every device sums
// the whole tile into its own dst. Sums in fp32 in rank order 0..N-1 (the
// simulator's bits). U vectors per lane of every rank are loaded before any
// is summed (on two devices U = 4: 4 KiB of loads in flight per rank and
// warp). Peers are indexed by constants only (a dynamic index into the
// kernel parameter's table would copy it to local memory).
template <bool TwoShot, int Rows, int Cols>
__device__ inline void warpAllreduceTile(const CallArgs &a, uint32_t &seq, __nv_bfloat16 *dst,
                                         const __nv_bfloat16 *src, long long ldDst,
                                         long long ldSrc) {
  static_assert(Cols % 8 == 0, "a tile row is whole 16-byte vectors");
  constexpr int RowVecs = Cols / 8, Total = Rows * RowVecs;
  if (seq >= 0x7fff) // over 32767 warp collectives in one kernel call: flags would wrap
    __trap();
  uint32_t base = a.epoch << 16;
  warpBarrier(a, base + 2 * seq + 1); // every device's src is complete
  const size_t dOff = regionOffset(a, dst), sOff = regionOffset(a, src);
  const size_t dRow = size_t(ldDst) * 2, sRow = size_t(ldSrc) * 2;
  const int lane = threadIdx.x & 31;
  int begin = 0, end = Total;
  if (TwoShot) {
    int per = (Total + a.ndev - 1) / a.ndev;
    begin = per * a.rank < Total ? per * a.rank : Total;
    end = begin + per < Total ? begin + per : Total;
  }
  auto load = [&](int p, int v) {
    return __ldcg(reinterpret_cast<const uint4 *>(a.region[p] + sOff + size_t(v / RowVecs) * sRow +
                                                  size_t(v % RowVecs) * 16));
  };
  auto store = [&](int v, uint4 out) {
    size_t at = dOff + size_t(v / RowVecs) * dRow + size_t(v % RowVecs) * 16;
    if (TwoShot) {
#pragma unroll
      for (int p = 0; p < kMaxDevices; ++p)
        if (p < a.ndev)
          *reinterpret_cast<uint4 *>(a.region[p] + at) = out;
    } else {
      *reinterpret_cast<uint4 *>(regionOf(a, a.rank) + at) = out;
    }
  };
  if (a.ndev == 2) {
    constexpr int U = 4;
    for (int v0 = begin + lane; v0 < end; v0 += 32 * U) {
      uint4 x[U], y[U];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (v0 + 32 * u < end) {
          x[u] = load(0, v0 + 32 * u);
          y[u] = load(1, v0 + 32 * u);
        }
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (v0 + 32 * u < end) {
          float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
          addBf16x8(acc, x[u]);
          addBf16x8(acc, y[u]);
          store(v0 + 32 * u, packBf16x8(acc));
        }
    }
  } else {
    // More devices: one vector per lane and device in flight. Two per lane
    // and device on 4 devices (8 loads in flight, as on 2) made ptxas spill
    // the fused TP GEMM under its communication warp's setmaxnreg.dec(72)
    // (and still under 80), so the 4-device reduction waits on NVLink
    // latency: the fused kernel's limit on 4 GPUs (docs/perf.md).
    for (int v = begin + lane; v < end; v += 32) {
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
      for (int p = 0; p < kMaxDevices; ++p)
        if (p < a.ndev)
          addBf16x8(acc, load(p, v));
      store(v, packBf16x8(acc));
    }
  }
  warpBarrier(a, base + 2 * seq + 2); // every device's pushes into dst have landed
  ++seq;
}

// ---------------------------------------------------------------------------
// Host side: the communicator and its bootstrap.

// AllreduceAuto: a lowered allreduce without `impl =`, whose launcher picks
// one_shot or two_shot (codegen/DeviceEmitter.h); launch() refuses it.
enum class Collective { AllreduceOneShot, AllreduceTwoShot, ReduceScatter, AllGather, AllreduceAuto };

inline const char *collectiveName(Collective c) {
  switch (c) {
  case Collective::AllreduceOneShot:
    return "allreduce.one_shot";
  case Collective::AllreduceTwoShot:
    return "allreduce.two_shot";
  case Collective::ReduceScatter:
    return "reduce_scatter";
  case Collective::AllGather:
    return "all_gather";
  case Collective::AllreduceAuto:
    return "allreduce";
  }
  return "?";
}

struct Communicator {
  int rank = 0;
  int ndev = 1;
  size_t dataBytes = 0;      // usable bytes after the flag area
  char *region[kMaxDevices]; // [rank] is the own allocation
  uint32_t epoch = 0;
  int maxBlocks = 256; // the same on every rank: the chunking must agree
  int threads = 512;
  // The implementation the last lowered launcher picked for an allreduce
  // without `impl =` ("one_shot" / "two_shot", codegen/DeviceEmitter.h).
  const char *lastImpl = "";
  std::string dir; // the bootstrap directory
  std::string error;
};

#define TS_DEV_CUDA(call)                                                                          \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      comm.error = std::string(#call) + ": " + cudaGetErrorString(e_);                             \
      return false;                                                                                \
    }                                                                                              \
  } while (0)

// Bootstrap through a directory that every rank can see (a file per rank).
// A file is written under a temporary name and renamed, so a reader sees a
// whole handle or nothing. Chosen over NCCL (no NCCL in user programs) and
// over a UNIX socket (no rank has to be a server; any launcher works).
inline bool exchangeFiles(const std::string &prefix, int rank, int ndev, const void *mine,
                          size_t bytes, void *all, std::string &error) {
  std::string path = prefix + "." + std::to_string(rank);
  std::string tmp = path + ".tmp";
  FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f || std::fwrite(mine, 1, bytes, f) != bytes || std::fclose(f) != 0 ||
      std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = "cannot write " + path + ": " + std::strerror(errno);
    return false;
  }
  for (int p = 0; p < ndev; ++p) {
    std::string peer = prefix + "." + std::to_string(p);
    for (int tries = 0;; ++tries) {
      FILE *g = std::fopen(peer.c_str(), "rb");
      if (g) {
        size_t got = std::fread(static_cast<char *>(all) + p * bytes, 1, bytes, g);
        std::fclose(g);
        if (got == bytes)
          break;
      }
      if (tries > 120000) {
        error = "rank " + std::to_string(p) + " never published " + peer;
        return false;
      }
      usleep(500);
    }
  }
  return true;
}

// Allocates the symmetric region, zeroes the flags and maps every peer.
// `dir` must be fresh for each communicator (and each use of `tag`).
inline bool init(Communicator &comm, int rank, int ndev, size_t dataBytes, const std::string &dir) {
  if (ndev < 1 || ndev > kMaxDevices || rank < 0 || rank >= ndev) {
    comm.error = "device count must be in [1, 8]";
    return false;
  }
  comm.rank = rank;
  comm.ndev = ndev;
  comm.dataBytes = dataBytes;
  comm.dir = dir;
  for (char *&r : comm.region)
    r = nullptr;
  char *mine = nullptr;
  TS_DEV_CUDA(cudaMalloc(&mine, kDataOffset + dataBytes));
  TS_DEV_CUDA(cudaMemset(mine, 0, kDataOffset));
  TS_DEV_CUDA(cudaDeviceSynchronize());
  comm.region[rank] = mine;
  cudaIpcMemHandle_t handle;
  TS_DEV_CUDA(cudaIpcGetMemHandle(&handle, mine));
  cudaIpcMemHandle_t all[kMaxDevices];
  if (!exchangeFiles(dir + "/handle", rank, ndev, &handle, sizeof handle, all, comm.error))
    return false;
  for (int p = 0; p < ndev; ++p) {
    if (p == rank)
      continue;
    void *peer = nullptr;
    TS_DEV_CUDA(cudaIpcOpenMemHandle(&peer, all[p], cudaIpcMemLazyEnablePeerAccess));
    comm.region[p] = static_cast<char *>(peer);
  }
  return true;
}

inline char *localData(const Communicator &comm) {
  return comm.region[comm.rank] + kDataOffset;
}

// The peer table of the next collective call (a new epoch), for lowered
// kernels' launchers.
inline CallArgs nextCall(Communicator &comm) {
  CallArgs a;
  for (int p = 0; p < kMaxDevices; ++p)
    a.region[p] = comm.region[p];
  a.rank = comm.rank;
  a.ndev = comm.ndev;
  a.epoch = ++comm.epoch;
  return a;
}

// The grid of a lowered collectives kernel over `tiles` tiles (its IR grid):
// at most comm.maxBlocks CTAs, the same on every rank (the chunking must
// agree); with fewer tiles than that, each tile split over `split` CTAs.
inline int persistentGrid(const Communicator &comm, long long tiles, int &split) {
  int cap = comm.maxBlocks < kMaxBlocks ? comm.maxBlocks : kMaxBlocks;
  split = 1;
  if (tiles < cap)
    split = int(cap / (tiles > 0 ? tiles : 1));
  long long grid = tiles * split;
  if (grid > cap)
    grid = cap / split * split;
  return grid < 1 ? 1 : int(grid);
}

// One collective call: `bytes` per rank of bf16 (a multiple of 16 * ndev for
// the chunked ones), input and output as byte offsets into the data area.
inline bool launch(Communicator &comm, Collective c, size_t inOffset, size_t outOffset,
                   size_t bytes, cudaStream_t stream, int maxBlocks = 0) {
  if (c == Collective::AllreduceAuto) {
    comm.error = "the allreduce without impl is a lowered kernel's (its launcher picks one)";
    return false;
  }
  CallArgs a;
  for (int p = 0; p < kMaxDevices; ++p)
    a.region[p] = comm.region[p];
  a.rank = comm.rank;
  a.ndev = comm.ndev;
  a.epoch = ++comm.epoch;
  a.inOffset = kDataOffset + inOffset;
  a.outOffset = kDataOffset + outOffset;
  a.nvec = bytes / 16;
  bool chunked = c != Collective::AllreduceOneShot && c != Collective::AllGather;
  if (bytes % 16 != 0 || (chunked && a.nvec % comm.ndev != 0)) {
    comm.error = std::string(collectiveName(c)) + ": " + std::to_string(bytes) +
                 " bytes is not a multiple of 16 bytes per rank chunk";
    return false;
  }
  size_t work = chunked ? a.nvec / comm.ndev : a.nvec;
  int cap = maxBlocks > 0 ? maxBlocks : comm.maxBlocks;
  if (cap > kMaxBlocks)
    cap = kMaxBlocks;
  size_t blocks = (work + comm.threads - 1) / comm.threads;
  int grid = blocks < 1 ? 1 : (blocks > size_t(cap) ? cap : int(blocks));
  switch (c) {
  case Collective::AllreduceOneShot:
    allreduceOneShotBf16<<<grid, comm.threads, 0, stream>>>(a);
    break;
  case Collective::AllreduceTwoShot:
    allreduceTwoShotBf16<<<grid, comm.threads, 0, stream>>>(a);
    break;
  case Collective::ReduceScatter:
    reduceScatterBf16<<<grid, comm.threads, 0, stream>>>(a);
    break;
  case Collective::AllGather:
    allGatherBf16<<<grid, comm.threads, 0, stream>>>(a);
    break;
  case Collective::AllreduceAuto:
    break;
  }
  TS_DEV_CUDA(cudaGetLastError());
  return true;
}

// A device barrier of all ranks (an empty one-shot call).
inline bool barrier(Communicator &comm, cudaStream_t stream) {
  return launch(comm, Collective::AllreduceOneShot, 0, 0, 0, stream, 1);
}

// Unmaps the peers, waits until every rank has unmapped this one, frees it.
// The caller has synchronised its streams after a last barrier().
inline bool finalize(Communicator &comm) {
  for (int p = 0; p < comm.ndev; ++p)
    if (p != comm.rank && comm.region[p]) {
      cudaIpcCloseMemHandle(comm.region[p]);
      comm.region[p] = nullptr;
    }
  char done = 1;
  char all[kMaxDevices];
  bool ok = exchangeFiles(comm.dir + "/done", comm.rank, comm.ndev, &done, 1, all, comm.error);
  cudaFree(comm.region[comm.rank]);
  comm.region[comm.rank] = nullptr;
  return ok;
}

#undef TS_DEV_CUDA

} // namespace ts_dev
