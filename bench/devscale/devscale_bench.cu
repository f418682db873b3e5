// The device-scale benchmark: one process per rank (forked here before any
// CUDA call), the collectives of codegen/runtime/ts_devices.cuh timed and
// checked against float64 on every rank, and a tensor-parallel GEMM: cuBLAS
// followed by, or overlapped with, the library's allreduce, and (--fused) the
// library's TP GEMM with the allreduce fused per output tile.
//
//   devscale_bench --ranks N [--lowered] [--fused] [--sim-compare DIR]
//                  [--sim-tp DIR] [--sizes-mib 1,4,...] [--tp MxNxK,...]
//                  [--ag MxNxK,...] [--iters I] [--seed S]
//
// --ag: the all-gather GEMM (allgather_gemm.cuh), M gathered rows, N columns
// per rank.
//
// Rank r runs on GPU r % (visible GPUs), so `--ranks 2` on one GPU runs two
// processes on it through CUDA IPC. Rank 0 prints one JSON object per line;
// every rank checks its own outputs and a failed check makes the exit status 1.
#include "ts_devices.cuh" // codegen/runtime/

#include <cublas_v2.h>

// The library's collectives as `tilescope lower kernels/allreduce_bf16.tile`
// emits them (run.sh lowers them, or uses the pre-lowered copy beside it).
#ifdef TS_LOWERED
#include TS_LOWERED
#endif
// The TP GEMMs with the allreduce fused per output tile, as `tilescope lower
// kernels/tp_gemm_bf16_sm90.tile` emits them, and with TS_LOWERED_AG defined
// the all-gather GEMM of kernels/allgather_gemm_bf16_sm90.tile in the same
// lowered module (prepare.sh lowers both files as one: one copy of the
// emitter's prelude).
#ifdef TS_LOWERED_TP
#include TS_LOWERED_TP
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace {

// Inputs: 8 significant bits times 2^[-11, -1] with a sign, so that a sum of
// up to 8 of them is exact in fp32 and in float64; an allreduce output must
// then be the bf16 rounding of the float64 sum, bit for bit.
__host__ __device__ inline uint32_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

__host__ __device__ inline float inputValue(uint32_t seed, int rank, uint64_t i) {
  uint32_t h = mix((uint64_t(seed) << 40) ^ (uint64_t(rank) << 37) ^ i);
  int e = int((h >> 8) & 7) - 11;
  float v = ldexpf(float(128 + (h & 127)), e);
  return ((h >> 11) & 1) ? -v : v;
}

// GEMM operands: k / 128 for k in [-128, 128), exact in bf16.
__host__ __device__ inline float gemmValue(uint32_t seed, int rank, uint64_t i) {
  uint32_t h = mix((uint64_t(seed) << 40) ^ (uint64_t(rank) << 37) ^ i);
  return float(int(h & 255) - 128) / 128.0f;
}

__global__ void fillInputs(__nv_bfloat16 *x, size_t n, uint32_t seed, int rank) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    x[i] = __float2bfloat16_rn(inputValue(seed, rank, i));
}

__global__ void fillGemm(__nv_bfloat16 *x, size_t n, uint32_t seed, int rank) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    x[i] = __float2bfloat16_rn(gemmValue(seed, rank, i));
}

// B^T of the fused kernel (B: global bf16[N, Kr]): Bt[j * Kr + k] is the
// cuBLAS variant's B[k, j].
__global__ void fillGemmT(__nv_bfloat16 *bt, long N, long Kr, uint32_t seed, int rank) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < size_t(N) * Kr;
       i += size_t(gridDim.x) * blockDim.x)
    bt[i] = __float2bfloat16_rn(gemmValue(seed, rank, uint64_t(i % Kr) * N + i / Kr));
}

// Every output C[i, j] of a TP GEMM against its float64 value, the sum over
// ranks p of A_p[i, :] . B_p[:, j] (operands regenerated from their seeds):
// counts those off by more than the rounding of each partial to bf16, of
// their fp32 sum to bf16 and of the fp32 sums of the GEMM.
__global__ void checkTp(const __nv_bfloat16 *C, long M, long N, long Kr, int ndev, uint32_t seed,
                        unsigned long long *bad, unsigned long long *firstBad) {
  for (size_t e = blockIdx.x * size_t(blockDim.x) + threadIdx.x; e < size_t(M) * N;
       e += size_t(gridDim.x) * blockDim.x) {
    long i = long(e / N), j = long(e % N);
    double want = 0, parts = 0, scale = 0;
    for (int p = 0; p < ndev; ++p) {
      double part = 0;
      for (long k = 0; k < Kr; ++k) {
        double t = double(gemmValue(seed, p, uint64_t(i) * Kr + k)) *
                   double(gemmValue(seed + 1, p, uint64_t(k) * N + j));
        part += t;
        scale += fabs(t);
      }
      want += part;
      parts += fabs(part);
    }
    double got = double(__bfloat162float(C[e]));
    double tol = ldexp(parts + fabs(want), -8) + ldexp(scale, -18);
    if (!(fabs(got - want) <= tol)) {
      atomicAdd(bad, 1ull);
      atomicMin(firstBad, static_cast<unsigned long long>(e));
    }
  }
}

// The lowered fused TP GEMMs (kernels/tp_gemm_bf16_sm90.tile): name, launcher
// (communicator, byte offsets of A, B, P, C, then M, KD, N, stream), and the
// shapes it takes (the 64x128 kernel: one CTA per tile, at most 512).
using TpLauncher = int (*)(ts_dev::Communicator *, size_t, size_t, size_t, size_t, long long,
                           long long, long long, cudaStream_t);
struct FusedTp {
  const char *name;
  TpLauncher launch;
  bool (*takes)(long M, long N);
};
std::vector<FusedTp> fusedTpKernels() {
#ifdef TS_LOWERED_TP
  return {{"tilescope.lowered.fused", tilescope_launch_tp_gemm_allreduce_bf16_sm90,
           [](long M, long N) { return M % 128 == 0 && N % 256 == 0; }},
          {"tilescope.lowered.fused_64x128", tilescope_launch_tp_gemm_allreduce_bf16_sm90_64x128,
           [](long M, long N) { return M % 64 == 0 && N % 128 == 0 && M / 64 * (N / 128) <= 512; }}};
#else
  return {};
#endif
}

// Counts outputs that differ from the bf16 rounding of the float64 sum of
// the ranks' inputs at element `i + inBase` (out[i] holds it).
__global__ void checkSum(const __nv_bfloat16 *out, size_t n, uint64_t inBase, uint32_t seed,
                         int ndev, unsigned long long *bad, unsigned long long *firstBad) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    double s = 0;
    for (int p = 0; p < ndev; ++p)
      s += double(inputValue(seed, p, inBase + i));
    __nv_bfloat16 want = __float2bfloat16_rn(float(s));
    if (__bfloat16_as_ushort(want) != __bfloat16_as_ushort(out[i])) {
      atomicAdd(bad, 1ull);
      atomicMin(firstBad, static_cast<unsigned long long>(i));
    }
  }
}

// All-gather: out[p * n + i] must be rank p's input i.
__global__ void checkGather(const __nv_bfloat16 *out, size_t n, uint32_t seed, int ndev,
                            unsigned long long *bad, unsigned long long *firstBad) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n * ndev;
       i += size_t(gridDim.x) * blockDim.x) {
    __nv_bfloat16 want = __float2bfloat16_rn(inputValue(seed, int(i / n), i % n));
    if (__bfloat16_as_ushort(want) != __bfloat16_as_ushort(out[i])) {
      atomicAdd(bad, 1ull);
      atomicMin(firstBad, static_cast<unsigned long long>(i));
    }
  }
}

struct Options {
  std::string simDir;   // --sim-compare: the simulator's dump (devD_X.npy, devD_Y.npy)
  std::string simTpDir; // --sim-tp: the TP GEMM's dump (tp_devD_A.npy, _B.npy, _C.npy)
  bool lowered = false; // time the lowered library kernels (else the runtime's own)
  bool fused = false;   // --fused: time the lowered fused TP GEMM too
  int ranks = 1;
  std::vector<double> sizesMiB = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  std::vector<std::array<long, 3>> tp;
  std::vector<std::array<long, 3>> ag; // --ag: all-gather GEMMs
  int iters = 0; // 0: by size
  int seed = 1;
};

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos)
      comma = s.size();
    if (comma > start)
      out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

bool parseArgs(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--ranks")
      o.ranks = std::atoi(value().c_str());
    else if (a == "--lowered")
      o.lowered = true;
    else if (a == "--sim-compare")
      o.simDir = value();
    else if (a == "--sim-tp")
      o.simTpDir = value();
    else if (a == "--fused")
      o.fused = true;
    else if (a == "--iters")
      o.iters = std::atoi(value().c_str());
    else if (a == "--seed")
      o.seed = std::atoi(value().c_str());
    else if (a == "--sizes-mib") {
      o.sizesMiB.clear();
      for (auto &s : split(value()))
        o.sizesMiB.push_back(std::atof(s.c_str()));
    } else if (a == "--tp" || a == "--ag") {
      for (auto &s : split(value())) {
        long m, n, k;
        if (std::sscanf(s.c_str(), "%ldx%ldx%ld", &m, &n, &k) != 3)
          return false;
        (a == "--tp" ? o.tp : o.ag).push_back({m, n, k});
      }
    } else
      return false;
  }
  return o.ranks >= 1 && o.ranks <= ts_dev::kMaxDevices;
}

struct Rank {
  ts_dev::Communicator comm;
  cudaStream_t stream = nullptr, side = nullptr;
  unsigned long long *bad = nullptr; // [0] count, [1] first index
  bool ok = true;
  int device = 0;
  std::string gpu;
};

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "rank %d: %s:%d: %s: %s\n", rank, __FILE__, __LINE__, #call,            \
                   cudaGetErrorString(e_));                                                        \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

#define COMM(call)                                                                                 \
  do {                                                                                             \
    if (!(call)) {                                                                                 \
      std::fprintf(stderr, "rank %d: %s\n", rank, r.comm.error.c_str());                           \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

// One collective call: the lowered library kernel's launcher (--lowered) or
// the runtime's persistent kernel.
bool collective(Rank &r, const Options &o, ts_dev::Collective c, size_t inOff, size_t outOff,
                size_t bytes, cudaStream_t stream, int maxBlocks = 0) {
  if (!o.lowered)
    return ts_dev::launch(r.comm, c, inOff, outOff, bytes, stream, maxBlocks);
#ifdef TS_LOWERED
  int saved = r.comm.maxBlocks;
  if (maxBlocks > 0)
    r.comm.maxBlocks = maxBlocks;
  long long e = (long long)(bytes / 2), n = r.comm.ndev;
  int rc = 2;
  switch (c) {
  case ts_dev::Collective::AllreduceOneShot:
    rc = tilescope_launch_allreduce_one_shot_bf16(&r.comm, inOff, outOff, e, stream);
    break;
  case ts_dev::Collective::AllreduceTwoShot:
    rc = tilescope_launch_allreduce_two_shot_bf16(&r.comm, inOff, outOff, e, stream);
    break;
  case ts_dev::Collective::ReduceScatter:
    rc = tilescope_launch_reduce_scatter_bf16(&r.comm, inOff, outOff, e, e / n, stream);
    break;
  case ts_dev::Collective::AllGather:
    rc = tilescope_launch_all_gather_bf16(&r.comm, inOff, outOff, e / 1024, e / 1024 * n, stream);
    break;
  case ts_dev::Collective::AllreduceAuto:
    rc = tilescope_launch_allreduce_bf16(&r.comm, inOff, outOff, e, stream);
    break;
  }
  r.comm.maxBlocks = saved;
  if (rc != 0)
    r.comm.error = std::string("lowered ") + ts_dev::collectiveName(c) + " refused or failed (" +
                   std::to_string(rc) + ")";
  return rc == 0;
#else
  r.comm.error = "built without TS_LOWERED";
  return false;
#endif
}

unsigned long long mismatches(Rank &r, int rank, unsigned long long *first) {
  unsigned long long host[2];
  CHECK(cudaMemcpy(host, r.bad, sizeof host, cudaMemcpyDeviceToHost));
  *first = host[1];
  return host[0];
}

void resetBad(Rank &r, int rank) {
  unsigned long long init[2] = {0, ~0ull};
  CHECK(cudaMemcpy(r.bad, init, sizeof init, cudaMemcpyHostToDevice));
}

int itersFor(const Options &o, size_t bytes) {
  if (o.iters > 0)
    return o.iters;
  double n = 20.0 * (256.0 * 1024 * 1024) / double(bytes);
  return n < 10 ? 10 : (n > 200 ? 200 : int(n));
}

// The calls a GEMM benchmark times: --iters, else 10 for large problems and
// 50 for the others.
int gemmIters(const Options &o, long M, long N, long K) {
  return o.iters > 0 ? o.iters : (M * N * K >= (1L << 36) ? 10 : 50);
}

// Microseconds per call of `step` on the rank's stream: `warmup` untimed
// calls, a device barrier (every rank starts the timed calls together), then
// `iters` calls between two CUDA events.
template <class Step> double usPerCall(Rank &r, int rank, int warmup, int iters, Step step) {
  for (int i = 0; i < warmup; ++i)
    step();
  COMM(ts_dev::barrier(r.comm, r.stream));
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  CHECK(cudaEventRecord(t0, r.stream));
  for (int i = 0; i < iters; ++i)
    step();
  CHECK(cudaEventRecord(t1, r.stream));
  CHECK(cudaEventSynchronize(t1));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, t0, t1));
  cudaEventDestroy(t0);
  cudaEventDestroy(t1);
  return 1000.0 * ms / iters;
}

// One collective at one size: fresh inputs, poisoned output, one checked call,
// timed calls, the last call checked again.
void runCollective(Rank &r, int rank, const Options &o, ts_dev::Collective c, size_t bytes,
                   uint32_t seed) {
  int n = r.comm.ndev;
  size_t elems = bytes / 2;
  size_t inOff = 0, outOff = r.comm.dataBytes / 2;
  char *data = ts_dev::localData(r.comm);
  fillInputs<<<1024, 256, 0, r.stream>>>(reinterpret_cast<__nv_bfloat16 *>(data), elems, seed,
                                         rank);
  size_t outBytes = c == ts_dev::Collective::AllGather ? bytes * n : bytes;
  CHECK(cudaMemsetAsync(data + outOff, 0xff, outBytes, r.stream)); // bf16 NaN
  CHECK(cudaStreamSynchronize(r.stream));
  auto check = [&]() {
    resetBad(r, rank);
    const __nv_bfloat16 *out = reinterpret_cast<const __nv_bfloat16 *>(data + outOff);
    if (c == ts_dev::Collective::AllGather)
      checkGather<<<1024, 256, 0, r.stream>>>(out, elems, seed, n, r.bad, r.bad + 1);
    else if (c == ts_dev::Collective::ReduceScatter)
      checkSum<<<1024, 256, 0, r.stream>>>(out, elems / n, uint64_t(rank) * (elems / n), seed, n,
                                           r.bad, r.bad + 1);
    else
      checkSum<<<1024, 256, 0, r.stream>>>(out, elems, 0, seed, n, r.bad, r.bad + 1);
    CHECK(cudaStreamSynchronize(r.stream));
    unsigned long long first;
    unsigned long long bad = mismatches(r, rank, &first);
    if (bad) {
      std::fprintf(stderr, "rank %d: %s %zu bytes: %llu wrong outputs, first at %llu\n", rank,
                   ts_dev::collectiveName(c), bytes, bad, first);
      r.ok = false;
    }
    return bad;
  };
  COMM(collective(r, o, c, inOff, outOff, bytes, r.stream));
  unsigned long long bad = check();
  int iters = itersFor(o, bytes);
  double us = usPerCall(r, rank, 3, iters,
                        [&] { COMM(collective(r, o, c, inOff, outOff, bytes, r.stream)); });
  bad += check();
  bool allreduce = c == ts_dev::Collective::AllreduceOneShot ||
                   c == ts_dev::Collective::AllreduceTwoShot ||
                   c == ts_dev::Collective::AllreduceAuto;
  double busFactor = allreduce ? 2.0 * (n - 1) / n : double(n - 1) / n;
  // the implementation the launcher of the allreduce without impl picked
  std::string picked = c == ts_dev::Collective::AllreduceAuto ? r.comm.lastImpl : "";
  double algBytes = c == ts_dev::Collective::AllGather ? double(bytes) * n : double(bytes);
  if (rank == 0)
    std::printf("{\"bench\":\"collective\",\"impl\":\"tilescope.%s%s\",\"picked\":\"%s\","
                "\"ranks\":%d,\"gpu\":\"%s\",\"bytes_per_rank\":%zu,\"iters\":%d,\"time_us\":%.2f,\"algbw_GBps\":%.2f,"
                "\"busbw_GBps\":%.2f,\"input_seed\":%u,\"inputs\":\"fresh per rank and size\","
                "\"outputs_poisoned\":true,\"checked_on_every_rank\":true,\"mismatches\":%llu,"
                "\"correct\":%s}\n",
                o.lowered ? "lowered." : "", ts_dev::collectiveName(c), picked.c_str(), n,
                r.gpu.c_str(), bytes,
                iters, us, algBytes / us / 1e3, algBytes * busFactor / us / 1e3, seed, bad,
                bad == 0 ? "true" : "false");
  std::fflush(stdout);
}

#define CUBLAS(call)                                                                               \
  do {                                                                                             \
    cublasStatus_t s_ = (call);                                                                    \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                             \
      std::fprintf(stderr, "rank %d: %s failed: %d\n", rank, #call, int(s_));                      \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

// C[rows, N] = A[rows, Kr] * B[Kr, N], row-major, bf16 in and out, fp32 sums.
void gemm(cublasHandle_t h, int rank, const __nv_bfloat16 *A, const __nv_bfloat16 *B,
          __nv_bfloat16 *C, long rows, long N, long Kr) {
  float one = 1, zero = 0;
  CUBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, int(N), int(rows), int(Kr), &one, B, CUDA_R_16BF,
                      int(N), A, CUDA_R_16BF, int(Kr), &zero, C, CUDA_R_16BF, int(N),
                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// TP GEMM: rank r holds A[:, r*Kr : +Kr] and B[r*Kr : +Kr, :]; the output is
// the allreduce of the ranks' partial products.
void runTp(Rank &r, int rank, const Options &o, long M, long N, long K, uint32_t seed) {
  int n = r.comm.ndev;
  long Kr = K / n;
  size_t cBytes = size_t(M) * N * 2;
  if (K % n != 0 || cBytes * 2 > r.comm.dataBytes) {
    if (rank == 0)
      std::fprintf(stderr, "tp %ldx%ldx%ld does not fit; skipped\n", M, N, K);
    return;
  }
  __nv_bfloat16 *A, *B;
  CHECK(cudaMalloc(&A, size_t(M) * Kr * 2));
  CHECK(cudaMalloc(&B, size_t(Kr) * N * 2));
  fillGemm<<<1024, 256, 0, r.stream>>>(A, size_t(M) * Kr, seed, rank);
  fillGemm<<<1024, 256, 0, r.stream>>>(B, size_t(Kr) * N, seed + 1, rank);
  char *data = ts_dev::localData(r.comm);
  size_t outOff = r.comm.dataBytes / 2;
  auto *C = reinterpret_cast<__nv_bfloat16 *>(data);
  cublasHandle_t h;
  CUBLAS(cublasCreate(&h));
  CUBLAS(cublasSetStream(h, r.stream));
  ts_dev::Collective impl = cBytes <= (4u << 20) ? ts_dev::Collective::AllreduceOneShot
                                                 : ts_dev::Collective::AllreduceTwoShot;
  int chunks = M >= 512 ? 4 : 1;
  long rowsPer = M / chunks;
  std::vector<cudaEvent_t> done(chunks);
  for (auto &e : done)
    CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  // variant 0: cuBLAS only; 1: cuBLAS then allreduce; 2: overlapped by chunks
  auto step = [&](int variant) {
    if (variant < 2) {
      gemm(h, rank, A, B, C, M, N, Kr);
      if (variant == 1)
        COMM(collective(r, o, impl, 0, outOff, cBytes, r.stream));
      return;
    }
    for (int c = 0; c < chunks; ++c) {
      gemm(h, rank, A + size_t(c) * rowsPer * Kr, B, C + size_t(c) * rowsPer * N, rowsPer, N, Kr);
      CHECK(cudaEventRecord(done[c], r.stream));
      CHECK(cudaStreamWaitEvent(r.side, done[c]));
      size_t off = size_t(c) * rowsPer * N * 2;
      COMM(collective(r, o, impl, off, outOff + off, size_t(rowsPer) * N * 2, r.side, 32));
    }
    CHECK(cudaEventRecord(done[0], r.side));
    CHECK(cudaStreamWaitEvent(r.stream, done[0]));
  };
  // variants 3..: the lowered fused TP GEMMs (--fused): P at 0, C at outOff, A
  // and B^T after P, all in the symmetric region.
  size_t aOff = (cBytes + 4095) / 4096 * 4096, bOff = aOff + size_t(M) * Kr * 2;
  bool fused = o.fused && bOff + size_t(N) * Kr * 2 <= outOff;
#ifdef TS_LOWERED_TP
  if (fused) {
    fillGemm<<<1024, 256, 0, r.stream>>>(reinterpret_cast<__nv_bfloat16 *>(data + aOff),
                                         size_t(M) * Kr, seed, rank);
    fillGemmT<<<1024, 256, 0, r.stream>>>(reinterpret_cast<__nv_bfloat16 *>(data + bOff), N, Kr,
                                          seed + 1, rank);
  }
#else
  fused = false;
#endif
  if (o.fused && !fused) {
    std::fprintf(stderr, "rank %d: the fused TP GEMM was not run at %ldx%ldx%ld\n", rank, M, N, K);
    r.ok = false;
  }
  std::vector<FusedTp> fusedKernels;
  for (const FusedTp &f : fusedTpKernels())
    if (fused && f.takes(M, N))
      fusedKernels.push_back(f);
  const FusedTp *current = nullptr;
  auto stepFused = [&]() {
    int rc = current->launch(&r.comm, aOff, bOff, 0, outOff, M, Kr, N, r.stream);
    if (rc != 0) {
      std::fprintf(stderr, "rank %d: %s's launcher returned %d\n", rank, current->name, rc);
      std::exit(1);
    }
  };
  // Every output of the fused kernel against float64 (on the GPU).
  auto checkFused = [&]() {
    resetBad(r, rank);
    checkTp<<<1024, 256, 0, r.stream>>>(reinterpret_cast<const __nv_bfloat16 *>(data + outOff), M,
                                        N, Kr, n, seed, r.bad, r.bad + 1);
    CHECK(cudaStreamSynchronize(r.stream));
    unsigned long long first, bad = mismatches(r, rank, &first);
    if (bad) {
      std::fprintf(stderr, "rank %d: fused tp %ldx%ldx%ld: %llu of %ld outputs off float64, first "
                           "at %llu\n",
                   rank, M, N, K, bad, M * N, first);
      r.ok = false;
    }
    return int(bad > 0x7fffffff ? 0x7fffffff : bad);
  };
  std::string names[3] = {
      "cublas", o.lowered ? "cublas+tilescope.lowered.seq" : "cublas+tilescope.seq",
      o.lowered ? "cublas+tilescope.lowered.overlap" : "cublas+tilescope.overlap"};
  for (int variant = 0; variant < 3 + int(fusedKernels.size()); ++variant) {
    if (variant >= 3) {
      current = &fusedKernels[size_t(variant - 3)];
      CHECK(cudaMemsetAsync(data + outOff, 0xff, cBytes, r.stream)); // bf16 NaN
      CHECK(cudaMemsetAsync(data, 0xff, cBytes, r.stream));          // P too
      COMM(ts_dev::barrier(r.comm, r.stream));
      stepFused();
      int bad = checkFused();
      int iters = gemmIters(o, M, N, K);
      double us = usPerCall(r, rank, 2, iters, stepFused);
      bad += checkFused(); // after repeated calls (the flags' epochs)
      if (rank == 0)
        std::printf("{\"bench\":\"tp_gemm_allreduce\",\"impl\":\"%s\",\"allreduce\":"
                    "\"warp_allreduce.two_shot\",\"ranks\":%d,\"gpu\":\"%s\",\"M\":%ld,\"N\":%ld,"
                    "\"K\":%ld,\"iters\":%d,\"time_us\":%.2f,\"tflops\":%.1f,\"checked\":"
                    "\"every output, twice\",\"mismatches\":%d,\"correct\":%s}\n",
                    current->name, n, r.gpu.c_str(), M, N, K, iters, us,
                    2.0 * M * N * K / n / us / 1e6, bad, bad == 0 ? "true" : "false");
      std::fflush(stdout);
      continue;
    }
    CHECK(cudaMemsetAsync(data + outOff, 0xff, cBytes, r.stream));
    step(variant);
    CHECK(cudaStreamSynchronize(r.stream));
    // float64 reference on a sample of outputs
    std::vector<__nv_bfloat16> out(size_t(M) * N);
    const __nv_bfloat16 *src = variant == 0 ? C : reinterpret_cast<__nv_bfloat16 *>(data + outOff);
    CHECK(cudaMemcpy(out.data(), src, cBytes, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int s = 0; s < 48; ++s) {
      long i = long(mix(uint64_t(seed) * 977 + s) % uint64_t(M));
      long j = long(mix(uint64_t(seed) * 991 + s + 7) % uint64_t(N));
      double want = 0, parts = 0, scale = 0;
      for (int p = 0; p < (variant == 0 ? 1 : n); ++p) {
        int who = variant == 0 ? rank : p;
        double part = 0;
        for (long k = 0; k < Kr; ++k) {
          double t = double(gemmValue(seed, who, uint64_t(i) * Kr + k)) *
                     double(gemmValue(seed + 1, who, uint64_t(k) * N + j));
          part += t;
          scale += std::fabs(t);
        }
        want += part;
        parts += std::fabs(part);
      }
      double got = double(__bfloat162float(out[size_t(i) * N + j]));
      // each partial rounded to bf16, their fp32 sum rounded to bf16, and
      // the fp32 sums of the GEMM
      double tol = std::ldexp(parts + std::fabs(want), -8) + std::ldexp(scale, -18);
      if (!(std::fabs(got - want) <= tol)) {
        if (bad < 3)
          std::fprintf(stderr, "rank %d: tp %s C[%ld,%ld] = %g, float64 %g\n", rank,
                       names[variant].c_str(),
                       i, j, got, want);
        ++bad;
      }
    }
    if (bad)
      r.ok = false;
    int iters = gemmIters(o, M, N, K);
    double us = usPerCall(r, rank, 2, iters, [&] { step(variant); });
    if (rank == 0)
      std::printf("{\"bench\":\"tp_gemm_allreduce\",\"impl\":\"%s\",\"allreduce\":\"%s\","
                  "\"ranks\":%d,\"gpu\":\"%s\",\"M\":%ld,\"N\":%ld,\"K\":%ld,\"iters\":%d,"
                  "\"time_us\":%.2f,\"tflops\":%.1f,\"sample_mismatches\":%d,\"correct\":%s}\n",
                  names[variant].c_str(), variant == 0 ? "none" : ts_dev::collectiveName(impl), n,
                  r.gpu.c_str(), M, N, K, iters, us, 2.0 * M * N * K / n / us / 1e6, bad,
                  bad == 0 ? "true" : "false");
    std::fflush(stdout);
  }
  for (auto &e : done)
    cudaEventDestroy(e);
  cublasDestroy(h);
  cudaFree(A);
  cudaFree(B);
}

// The codes of a .npy array of 2-byte elements ('<u2': the simulator's bf16
// dump); empty when the file is not one.
std::vector<uint16_t> readNpyU16(const std::string &path, std::vector<long> *shape = nullptr) {
  std::vector<uint16_t> out;
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return out;
  std::vector<unsigned char> bytes;
  unsigned char buf[65536];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0)
    bytes.insert(bytes.end(), buf, buf + got);
  std::fclose(f);
  if (bytes.size() < 12 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    return out;
  size_t header = bytes[6] == 1 ? 10 + (bytes[8] | bytes[9] << 8)
                                : 12 + (bytes[8] | bytes[9] << 8 | bytes[10] << 16);
  std::string text(bytes.begin(), bytes.begin() + std::min(header, bytes.size()));
  if (text.find("<u2") == std::string::npos || (bytes.size() - header) % 2)
    return out;
  if (shape) {
    shape->clear();
    size_t at = text.find("'shape': (");
    for (at = at == std::string::npos ? text.size() : at + 10; at < text.size();) {
      char *end = nullptr;
      long v = std::strtol(text.c_str() + at, &end, 10);
      if (end == text.c_str() + at)
        break;
      shape->push_back(v);
      at = size_t(end - text.c_str());
      while (at < text.size() && (text[at] == ',' || text[at] == ' '))
        ++at;
    }
  }
  out.resize((bytes.size() - header) / 2);
  std::memcpy(out.data(), bytes.data() + header, out.size() * 2);
  return out;
}

// Simulator = hardware: the lowered allreduces on the simulator's inputs of
// this rank (dumped by `tilescope sim --dump`) give the simulator's output
// bits.
// Whether the simulator dumped `file` (DIR/n<N>_<prefix><rank>_<file>) for
// every rank: all ranks decide alike, so none launches a collective that a
// peer without its dump would never join.
bool dumpsForEveryRank(const Rank &r, const std::string &dir, const std::string &prefix,
                       const std::string &file) {
  for (int p = 0; p < r.comm.ndev; ++p) {
    std::string path = dir + "/n" + std::to_string(r.comm.ndev) + "_" + prefix +
                       std::to_string(p) + "_" + file;
    if (FILE *f = std::fopen(path.c_str(), "rb"))
      std::fclose(f);
    else
      return false;
  }
  return true;
}

void compareWithSimulator(Rank &r, int rank, const Options &o) {
  if (!dumpsForEveryRank(r, o.simDir, "dev", "X.npy")) {
    if (rank == 0)
      std::printf("{\"bench\":\"sim_vs_hw\",\"impl\":\"allreduce\",\"ranks\":%d,\"skipped\":"
                  "\"no simulator dump for every rank\"}\n",
                  r.comm.ndev);
    return;
  }
  std::string base =
      o.simDir + "/n" + std::to_string(r.comm.ndev) + "_dev" + std::to_string(rank) + "_";
  std::vector<uint16_t> x = readNpyU16(base + "X.npy"), y = readNpyU16(base + "Y.npy");
  if (x.empty() || x.size() != y.size()) {
    std::fprintf(stderr, "rank %d: no simulator dump at %sX.npy / Y.npy\n", rank, base.c_str());
    r.ok = false;
    return;
  }
  char *data = ts_dev::localData(r.comm);
  size_t bytes = x.size() * 2, outOff = r.comm.dataBytes / 2;
  for (ts_dev::Collective c :
       {ts_dev::Collective::AllreduceOneShot, ts_dev::Collective::AllreduceTwoShot}) {
    CHECK(cudaMemcpy(data, x.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(data + outOff, 0xff, bytes));
    COMM(ts_dev::barrier(r.comm, r.stream));
    COMM(collective(r, o, c, 0, outOff, bytes, r.stream));
    CHECK(cudaStreamSynchronize(r.stream));
    std::vector<uint16_t> got(x.size());
    CHECK(cudaMemcpy(got.data(), data + outOff, bytes, cudaMemcpyDeviceToHost));
    size_t same = 0;
    for (size_t i = 0; i < got.size(); ++i)
      same += got[i] == y[i];
    if (same != got.size())
      r.ok = false;
    std::printf("{\"bench\":\"sim_vs_hw\",\"impl\":\"tilescope.%s%s\",\"rank\":%d,\"ranks\":%d,"
                "\"gpu\":\"%s\",\"elements\":%zu,\"bit_identical\":%zu,\"correct\":%s}\n",
                o.lowered ? "lowered." : "", ts_dev::collectiveName(c), rank, r.comm.ndev,
                r.gpu.c_str(), got.size(), same, same == got.size() ? "true" : "false");
    std::fflush(stdout);
  }
}

// Simulator = hardware for the fused TP GEMM: the lowered kernel on the
// simulator's inputs of this rank (tp_devD_A.npy [M, KD], tp_devD_B.npy
// [N, KD]) gives the simulator's C (tp_devD_C.npy) bit for bit.
void compareTpWithSimulator(Rank &r, int rank, const Options &o, const char *prefix,
                            const FusedTp &kernel) {
  if (!dumpsForEveryRank(r, o.simTpDir, prefix, "A.npy")) {
    if (rank == 0)
      std::printf("{\"bench\":\"sim_vs_hw\",\"impl\":\"%s\",\"ranks\":%d,\"skipped\":"
                  "\"no simulator dump for every rank\"}\n",
                  kernel.name, r.comm.ndev);
    return;
  }
  std::string base = o.simTpDir + "/n" + std::to_string(r.comm.ndev) + "_" + prefix +
                     std::to_string(rank) + "_";
  std::vector<long> sa, sb, sc;
  std::vector<uint16_t> a = readNpyU16(base + "A.npy", &sa), b = readNpyU16(base + "B.npy", &sb),
                        c = readNpyU16(base + "C.npy", &sc);
  if (a.empty() || b.empty() || c.empty() || sa.size() != 2 || sb.size() != 2 || sc.size() != 2 ||
      sa[1] != sb[1] || sc[0] != sa[0] || sc[1] != sb[0]) {
    std::fprintf(stderr, "rank %d: no TP GEMM dump at %sA.npy, B.npy, C.npy\n", rank,
                 base.c_str());
    r.ok = false;
    return;
  }
  long M = sa[0], KD = sa[1], N = sb[0];
  size_t cBytes = c.size() * 2, aOff = (cBytes + 4095) / 4096 * 4096, bOff = aOff + a.size() * 2;
  size_t outOff = r.comm.dataBytes / 2;
  char *data = ts_dev::localData(r.comm);
  CHECK(cudaMemcpy(data + aOff, a.data(), a.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(data + bOff, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(data, 0xff, cBytes));
  CHECK(cudaMemset(data + outOff, 0xff, cBytes));
  COMM(ts_dev::barrier(r.comm, r.stream));
  int rc = kernel.launch(&r.comm, aOff, bOff, 0, outOff, M, KD, N, r.stream);
  CHECK(cudaStreamSynchronize(r.stream));
  std::vector<uint16_t> got(c.size());
  CHECK(cudaMemcpy(got.data(), data + outOff, cBytes, cudaMemcpyDeviceToHost));
  size_t same = 0;
  for (size_t i = 0; i < got.size(); ++i)
    same += got[i] == c[i];
  if (rc != 0 || same != got.size())
    r.ok = false;
  std::printf("{\"bench\":\"sim_vs_hw\",\"impl\":\"%s\",\"rank\":%d,"
              "\"ranks\":%d,\"gpu\":\"%s\",\"M\":%ld,\"N\":%ld,\"KD\":%ld,\"launch\":%d,"
              "\"elements\":%zu,\"bit_identical\":%zu,\"correct\":%s}\n",
              kernel.name, rank, r.comm.ndev, r.gpu.c_str(), M, N, KD, rc, got.size(), same,
              rc == 0 && same == got.size() ? "true" : "false");
  std::fflush(stdout);
}

} // namespace

#include "allgather_gemm.cuh"

namespace {

int rankMain(int rank, const Options &o, const std::string &dir) {
  Rank r;
  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  r.device = rank % count;
  CHECK(cudaSetDevice(r.device));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, r.device));
  r.gpu = prop.name;
  CHECK(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&r.side, cudaStreamNonBlocking));
  CHECK(cudaMalloc(&r.bad, 2 * sizeof(unsigned long long)));
  double maxMiB = 0;
  for (double s : o.sizesMiB)
    maxMiB = std::max(maxMiB, s);
  size_t half = size_t(maxMiB * 1024 * 1024);
  // a TP GEMM's partial product (and, fused, A and B^T after it) in one half
  for (auto &t : o.tp)
    half = std::max(half, size_t(t[0]) * size_t(t[1]) * 2 + 4096 +
                              size_t(t[0] + t[1]) * size_t(t[2] / o.ranks) * 2);
  // the all-gather output is ranks times its input
  half = std::max(half, size_t(std::min(maxMiB, 64.0) * 1024 * 1024) * size_t(o.ranks));
  for (auto &t : o.ag) // A, B, AG and C of an all-gather GEMM in the whole region
    half = std::max(half, AgLayout(t[0], t[1], t[2], t[0] / o.ranks).end / 2 + 4096);
  half = std::max(half, size_t(1) << 20); // the simulator comparison's small case
  half = (half + 4095) / 4096 * 4096;
  COMM(ts_dev::init(r.comm, rank, o.ranks, 2 * half, dir));
  uint32_t seed = uint32_t(o.seed) * 1000;
  if (!o.simDir.empty())
    compareWithSimulator(r, rank, o);
  // tp_devR_*: the 128x256 kernel's dump, tp64_devR_*: the 64x128 kernel's
  if (!o.simTpDir.empty()) {
    std::vector<FusedTp> k = fusedTpKernels();
    if (k.size() < 2) {
      std::fprintf(stderr, "rank %d: --sim-tp needs the lowered TP GEMMs (TS_LOWERED_TP)\n", rank);
      r.ok = false;
    } else {
      compareTpWithSimulator(r, rank, o, "tp_dev", k[0]);
      compareTpWithSimulator(r, rank, o, "tp64_dev", k[1]);
    }
    compareAgWithSimulator(r, rank, o.simTpDir);
  }
  for (double mib : o.sizesMiB) {
    size_t bytes = size_t(mib * 1024 * 1024) / (16 * o.ranks) * (16 * o.ranks);
    runCollective(r, rank, o, ts_dev::Collective::AllreduceOneShot, bytes, ++seed);
    runCollective(r, rank, o, ts_dev::Collective::AllreduceTwoShot, bytes, ++seed);
#ifdef TS_LOWERED
    if (o.lowered && bytes % (16384 * 2) == 0)
      runCollective(r, rank, o, ts_dev::Collective::AllreduceAuto, bytes, ++seed);
#endif
    if (mib == 1 || mib == 64) {
      runCollective(r, rank, o, ts_dev::Collective::ReduceScatter, bytes, ++seed);
      runCollective(r, rank, o, ts_dev::Collective::AllGather, bytes / o.ranks / 16 * 16, ++seed);
    }
  }
  for (auto &t : o.tp)
    runTp(r, rank, o, t[0], t[1], t[2], ++seed);
  for (auto &t : o.ag)
    runAg(r, rank, o, t[0], t[1], t[2], ++seed);
  COMM(ts_dev::barrier(r.comm, r.stream));
  CHECK(cudaStreamSynchronize(r.stream));
  COMM(ts_dev::finalize(r.comm));
  return r.ok ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (!parseArgs(argc, argv, o)) {
    std::fprintf(stderr, "usage: devscale_bench --ranks N [--lowered] [--fused] [--sim-compare DIR] "
                         "[--sim-tp DIR] [--sizes-mib 1,2,..] [--tp MxNxK,..] [--ag MxNxK,..] "
                         "[--iters I] "
                         "[--seed S]\n");
    return 2;
  }
  char tmpl[] = "/tmp/ts_devices.XXXXXX";
  if (!mkdtemp(tmpl)) {
    std::perror("mkdtemp");
    return 2;
  }
  std::fflush(stdout);
  std::vector<pid_t> children;
  for (int rank = 0; rank < o.ranks; ++rank) {
    pid_t pid = fork();
    if (pid == 0) {
      int rc = rankMain(rank, o, tmpl);
      std::fflush(stdout);
      std::fflush(stderr);
      std::_Exit(rc);
    }
    children.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      ++failed;
  }
  std::string rm = std::string("rm -rf ") + tmpl;
  if (std::system(rm.c_str()) != 0)
    std::fprintf(stderr, "could not remove %s\n", tmpl);
  if (failed)
    std::fprintf(stderr, "%d of %d ranks failed\n", failed, o.ranks);
  return failed ? 1 : 0;
}
