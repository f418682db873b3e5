// The all-gather GEMM part of the device-scale benchmark (devscale_bench.cu
// includes it after its helpers: Rank, Options, CHECK, COMM, CUBLAS, fillGemm,
// gemmValue, mismatches, resetBad, readNpyU16, dumpsForEveryRank).
//
// Rank p holds rows p * MD .. of A (A_p: [MD, K], MD = M / ranks) and its own
// B_p ([N, K], a column shard of the weight); C on rank p = (A_0; ...;
// A_{N-1}) B_p^T ([M, N]). Timed: the library's fused kernel
// (kernels/allgather_gemm_bf16_sm90.tile as `tilescope lower` emits it), the
// lowered all_gather collective followed by cuBLAS, and cuBLAS alone on the
// gathered A; NCCL's all_gather + cuBLAS is nccl_bench.py --ag.
#pragma once

// Every output C[i, j] of rank `rank` against float64: the gathered row i is
// row i % MD of rank i / MD's A. Counts those off by more than the bf16
// rounding of the output and the fp32 sums of the GEMM.
__global__ void checkAg(const __nv_bfloat16 *C, long M, long N, long K, long MD, int rank,
                        uint32_t seed, unsigned long long *bad, unsigned long long *firstBad) {
  for (size_t e = blockIdx.x * size_t(blockDim.x) + threadIdx.x; e < size_t(M) * N;
       e += size_t(gridDim.x) * blockDim.x) {
    long i = long(e / N), j = long(e % N);
    int owner = int(i / MD);
    long row = i % MD;
    double want = 0, scale = 0;
    for (long k = 0; k < K; ++k) {
      double t = double(gemmValue(seed, owner, uint64_t(row) * K + k)) *
                 double(gemmValue(seed + 1, rank, uint64_t(j) * K + k));
      want += t;
      scale += fabs(t);
    }
    double got = double(__bfloat162float(C[e]));
    double tol = ldexp(fabs(want), -8) + ldexp(scale, -18);
    if (!(fabs(got - want) <= tol)) {
      atomicAdd(bad, 1ull);
      atomicMin(firstBad, static_cast<unsigned long long>(e));
    }
  }
}

// The region's layout for one all-gather GEMM: A, B, AG, C, each 4 KiB aligned.
struct AgLayout {
  size_t a = 0, b = 0, ag = 0, c = 0, end = 0;
  AgLayout(long M, long N, long K, long MD) {
    auto up = [](size_t x) { return (x + 4095) / 4096 * 4096; };
    b = up(size_t(MD) * K * 2);
    ag = b + up(size_t(N) * K * 2);
    c = ag + up(size_t(M) * K * 2);
    end = c + up(size_t(M) * N * 2);
  }
};

#ifdef TS_LOWERED_AG
// The launcher's shape symbols come in the order the tensors name them:
// A[MD, K], B[N, K], AG[M, K].
int launchFusedAg(Rank &r, const AgLayout &l, long M, long N, long K, long MD) {
  return tilescope_launch_allgather_gemm_bf16_sm90(&r.comm, l.a, l.b, l.ag, l.c, MD, K, N, M,
                                                   r.stream);
}
#endif

// C[M, N] = AG[M, K] B[N, K]^T, row-major, by cuBLAS (column-major: C^T =
// B AG^T).
void gemmAg(cublasHandle_t h, int rank, const __nv_bfloat16 *AG, const __nv_bfloat16 *B,
            __nv_bfloat16 *C, long M, long N, long K) {
  float one = 1, zero = 0;
  CUBLAS(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, int(N), int(M), int(K), &one, B, CUDA_R_16BF,
                      int(K), AG, CUDA_R_16BF, int(K), &zero, C, CUDA_R_16BF, int(N),
                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

void runAg(Rank &r, int rank, const Options &o, long M, long N, long K, uint32_t seed) {
  int n = r.comm.ndev;
  long MD = M / n;
  AgLayout l(M, N, K, MD);
  if (M % n != 0 || MD % 64 != 0 || N % 256 != 0 || K % 1024 != 0 || l.end > r.comm.dataBytes) {
    if (rank == 0)
      std::fprintf(stderr, "allgather gemm %ldx%ldx%ld does not fit; skipped\n", M, N, K);
    r.ok = false;
    return;
  }
  char *data = ts_dev::localData(r.comm);
  auto at = [&](size_t off) { return reinterpret_cast<__nv_bfloat16 *>(data + off); };
  fillGemm<<<1024, 256, 0, r.stream>>>(at(l.a), size_t(MD) * K, seed, rank);
  fillGemm<<<1024, 256, 0, r.stream>>>(at(l.b), size_t(N) * K, seed + 1, rank);
  cublasHandle_t h;
  CUBLAS(cublasCreate(&h));
  CUBLAS(cublasSetStream(h, r.stream));
  // 0: the fused kernel; 1: the lowered all_gather, then cuBLAS; 2: cuBLAS
  // alone on the gathered A (left by variant 1).
  auto step = [&](int variant) -> bool {
#ifdef TS_LOWERED_AG
    if (variant == 0)
      return launchFusedAg(r, l, M, N, K, MD) == 0;
#endif
#ifdef TS_LOWERED
    if (variant == 1 && tilescope_launch_all_gather_bf16(&r.comm, l.a, l.ag, MD * K / 1024,
                                                         M * K / 1024, r.stream) != 0)
      return false;
#endif
    if (variant >= 1)
      gemmAg(h, rank, at(l.ag), at(l.b), at(l.c), M, N, K);
    return variant >= 1;
  };
  const char *names[3] = {"tilescope.lowered.fused_allgather_gemm",
                          "tilescope.lowered.all_gather+cublas.seq", "cublas"};
  for (int variant = 0; variant < 3; ++variant) {
    auto check = [&]() {
      resetBad(r, rank);
      checkAg<<<1024, 256, 0, r.stream>>>(at(l.c), M, N, K, MD, rank, seed, r.bad, r.bad + 1);
      CHECK(cudaStreamSynchronize(r.stream));
      unsigned long long first, bad = mismatches(r, rank, &first);
      if (bad) {
        std::fprintf(stderr,
                     "rank %d: %s %ldx%ldx%ld: %llu of %ld outputs off float64, first at "
                     "%llu\n",
                     rank, names[variant], M, N, K, bad, M * N, first);
        r.ok = false;
      }
      return bad;
    };
    CHECK(cudaMemsetAsync(data + l.c, 0xff, size_t(M) * N * 2, r.stream)); // bf16 NaN
    if (variant < 2)
      CHECK(cudaMemsetAsync(data + l.ag, 0xff, size_t(M) * K * 2, r.stream));
    COMM(ts_dev::barrier(r.comm, r.stream));
    if (!step(variant)) {
      std::fprintf(stderr, "rank %d: %s was not run (not lowered here, or refused)\n", rank,
                   names[variant]);
      r.ok = false;
      continue;
    }
    unsigned long long bad = check();
    int iters = gemmIters(o, M, N, K);
    double us = usPerCall(r, rank, 2, iters, [&] { step(variant); });
    bad += check(); // after repeated calls (the flags' epochs)
    if (rank == 0)
      std::printf("{\"bench\":\"allgather_gemm\",\"impl\":\"%s\",\"ranks\":%d,\"gpu\":\"%s\","
                  "\"M\":%ld,\"N\":%ld,\"K\":%ld,\"iters\":%d,\"time_us\":%.2f,\"tflops\":%.1f,"
                  "\"checked\":\"every output, twice\",\"mismatches\":%llu,\"correct\":%s}\n",
                  names[variant], n, r.gpu.c_str(), M, N, K, iters, us, 2.0 * M * N * K / us / 1e6,
                  bad, bad == 0 ? "true" : "false");
    std::fflush(stdout);
  }
  cublasDestroy(h);
}

// Simulator = hardware: the fused kernel on the simulator's inputs of this
// rank (DIR/n<N>_ag_dev<r>_{A,B,C}.npy: A [MD, K], B [N, K], C [M, N]) gives
// the simulator's C bit for bit.
void compareAgWithSimulator(Rank &r, int rank, const std::string &dir) {
#ifdef TS_LOWERED_AG
  if (!dumpsForEveryRank(r, dir, "ag_dev", "A.npy")) {
    if (rank == 0)
      std::printf("{\"bench\":\"sim_vs_hw\",\"impl\":\"allgather_gemm\",\"ranks\":%d,"
                  "\"skipped\":\"no simulator dump for every rank\"}\n",
                  r.comm.ndev);
    return;
  }
  std::string base =
      dir + "/n" + std::to_string(r.comm.ndev) + "_ag_dev" + std::to_string(rank) + "_";
  std::vector<long> sa, sb, sc;
  std::vector<uint16_t> a = readNpyU16(base + "A.npy", &sa), b = readNpyU16(base + "B.npy", &sb),
                        c = readNpyU16(base + "C.npy", &sc);
  if (a.empty() || b.empty() || c.empty() || sa.size() != 2 || sb.size() != 2 || sc.size() != 2 ||
      sa[1] != sb[1] || sc[0] != sa[0] * r.comm.ndev || sc[1] != sb[0]) {
    std::fprintf(stderr, "rank %d: no all-gather GEMM dump at %sA.npy, B.npy, C.npy\n", rank,
                 base.c_str());
    r.ok = false;
    return;
  }
  long MD = sa[0], K = sa[1], N = sb[0], M = sc[0];
  AgLayout l(M, N, K, MD);
  char *data = ts_dev::localData(r.comm);
  CHECK(cudaMemcpy(data + l.a, a.data(), a.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(data + l.b, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(data + l.ag, 0xff, size_t(M) * K * 2));
  CHECK(cudaMemset(data + l.c, 0xff, c.size() * 2));
  COMM(ts_dev::barrier(r.comm, r.stream));
  int rc = launchFusedAg(r, l, M, N, K, MD);
  CHECK(cudaStreamSynchronize(r.stream));
  std::vector<uint16_t> got(c.size());
  CHECK(cudaMemcpy(got.data(), data + l.c, c.size() * 2, cudaMemcpyDeviceToHost));
  size_t same = 0;
  for (size_t i = 0; i < got.size(); ++i)
    same += got[i] == c[i];
  if (rc != 0 || same != got.size())
    r.ok = false;
  std::printf("{\"bench\":\"sim_vs_hw\",\"impl\":\"tilescope.lowered.fused_allgather_gemm\","
              "\"rank\":%d,\"ranks\":%d,\"gpu\":\"%s\",\"M\":%ld,\"N\":%ld,\"K\":%ld,\"launch\":%d,"
              "\"elements\":%zu,\"bit_identical\":%zu,\"correct\":%s}\n",
              rank, r.comm.ndev, r.gpu.c_str(), M, N, K, rc, got.size(), same,
              rc == 0 && same == got.size() ? "true" : "false");
  std::fflush(stdout);
#else
  (void)r;
  (void)rank;
  (void)dir;
#endif
}
