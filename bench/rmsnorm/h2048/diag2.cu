// Diagnostic kernels for issue 15's RMSNorm sweep at 1024 x 2048, and the
// floors of issue 19's 1024 x 1024 (helper rms2, session 15). Written by
// hand, not lowered: they measure ideas (cache hints, barriers, rows a CTA,
// the kind of load) before any is carried into kernels/rmsnorm_family.tile,
// and floors (an empty kernel, an empty grid, a copy of X into Y by a kernel
// and by the runtime's cudaMemcpyAsync, a read of X alone, a write of Y
// alone) of the same bytes as the RMSNorm at the shape. Each launcher has the ctypes signature of a lowered kernel's tilescope_launch_K:
//   int diag_K(void *const *tensors /* X, W, Y */, const int64_t *symbols /* R, H */,
//              const double *scalars /* eps */, cudaStream_t stream)
// and returns 2 for an H it was not built for.
// Built with nvcc 13.0 -O3 -gencode=arch=compute_90a,code=sm_90a -shared.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

namespace {

struct V8 {
  uint32_t w[4];
};

// The X load: 0 ld.global.nc (what nvcc makes of the lowered code), 1 plain
// ld.global (Triton's), 2 .nc with the 256-byte L2 prefetch, 3 ld.global.cs
// (streaming: evict first), 4 .nc with an L2 evict_first policy (what
// `tilescope lower --evict-first` emits), 5 ld.global.L1::no_allocate, 6
// L1::no_allocate with the evict_first policy (bench/rmsnorm/make_ef.py's).
template <int LD> __device__ __forceinline__ V8 ldx(const void *p) {
  V8 v;
  if constexpr (LD == 0)
    asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3]) : "l"(p));
  else if constexpr (LD == 1)
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3]) : "l"(p));
  else if constexpr (LD == 2)
    asm volatile("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3]) : "l"(p));
  else if constexpr (LD == 3)
    asm volatile("ld.global.cs.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3]) : "l"(p));
  else if constexpr (LD == 4) {
    uint64_t pol;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    asm volatile("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3]) : "l"(p), "l"(pol));
  } else if constexpr (LD == 6) {
    uint64_t pol;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3]) : "l"(p), "l"(pol));
  } else
    asm volatile("ld.global.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3]) : "l"(p));
  return v;
}

// The Y store: 0 plain, 1 st.global.cs, 2 an L2 evict_first policy.
template <int ST> __device__ __forceinline__ void sty(void *p, V8 v) {
  if constexpr (ST == 0)
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.w[0]), "r"(v.w[1]),
                 "r"(v.w[2]), "r"(v.w[3])
                 : "memory");
  else if constexpr (ST == 1)
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.w[0]),
                 "r"(v.w[1]), "r"(v.w[2]), "r"(v.w[3])
                 : "memory");
  else {
    uint64_t pol;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p),
                 "r"(v.w[0]), "r"(v.w[1]), "r"(v.w[2]), "r"(v.w[3]), "l"(pol)
                 : "memory");
  }
}

__device__ __forceinline__ void unpack(V8 v, float f[8]) {
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = __uint_as_float(v.w[i] << 16);
    f[2 * i + 1] = __uint_as_float(v.w[i] & 0xffff0000u);
  }
}

__device__ __forceinline__ V8 pack(const float f[8]) {
  V8 v;
  for (int i = 0; i < 4; ++i) {
    __nv_bfloat162 b = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
    v.w[i] = *reinterpret_cast<uint32_t *>(&b);
  }
  return v;
}

// RMSNorm, T threads a row (V = H / (8 T) 16-byte vectors a thread, vector j
// of thread t at column (j T + t) 8), RPC rows a CTA (each row's T threads
// meet at a named barrier of their own; bar 0 for the whole CTA when RPC is
// 1). With one vector a thread bounded to 32 registers, so that 2048
// threads fit an SM (one wave of 1024 rows on 132 SMs). NBAR 2: a second
// barrier after the partials are read (Triton's and the lowered kernels').
// FL: bit 1 loads W before X; bit 2 puts the partial sums in dynamic shared
// memory aligned to 1024 bytes and launches with 1024 + 4 x warps bytes, as
// `tilescope lower` does (static otherwise).
template <int H, int T, int RPC, int LD, int ST, int NBAR, int FL>
__global__ void __launch_bounds__(T *RPC, H / (8 * T) == 1 ? 2048 / (T * RPC) : 1)
    k_rms(const __nv_bfloat16 *X, const __nv_bfloat16 *W, __nv_bfloat16 *Y, float eps) {
  constexpr int V = H / (8 * T);
  constexpr int NW = T / 32;
  constexpr bool WF = FL & 1, DYN = FL & 2;
  __shared__ float spart[DYN ? 1 : RPC * NW];
  extern __shared__ __align__(1024) uint8_t dsm[];
  const uint32_t dsa = (uint32_t)__cvta_generic_to_shared(dsm);
  float *part = DYN ? reinterpret_cast<float *>(dsm + ((1024u - (dsa & 1023u)) & 1023u)) : spart;
  const int r = RPC == 1 ? 0 : (int)threadIdx.x / T;
  const int t = RPC == 1 ? (int)threadIdx.x : (int)threadIdx.x % T;
  const size_t row = (size_t)blockIdx.x * RPC + r;
  const __nv_bfloat16 *xr = X + row * H;
  V8 xv[V], wv[V];
  if (WF)
    for (int j = 0; j < V; ++j)
      wv[j] = ldx<0>(W + (j * T + t) * 8);
  for (int j = 0; j < V; ++j)
    xv[j] = ldx<LD>(xr + (j * T + t) * 8);
  if (!WF)
    for (int j = 0; j < V; ++j)
      wv[j] = ldx<0>(W + (j * T + t) * 8);
  float x[V][8];
  float s = 0.f;
  for (int j = 0; j < V; ++j) {
    unpack(xv[j], x[j]);
    for (int i = 0; i < 8; ++i)
      s = fmaf(x[j][i], x[j][i], s);
  }
  for (int o = 16; o > 0; o >>= 1)
    s += __shfl_xor_sync(0xffffffffu, s, o);
  if constexpr (NW > 1) {
    if ((t & 31) == 0)
      part[r * NW + (t >> 5)] = s;
    if (RPC == 1)
      __syncthreads();
    else
      asm volatile("bar.sync %0, %1;" ::"r"(r + 1), "r"(T) : "memory");
    s = 0.f;
    for (int k = 0; k < NW; ++k)
      s += part[r * NW + k];
    if (NBAR == 2) {
      if (RPC == 1)
        __syncthreads();
      else
        asm volatile("bar.sync %0, %1;" ::"r"(r + 1), "r"(T) : "memory");
    }
  }
  const float sc = rsqrtf(s * (1.f / H) + eps);
  for (int j = 0; j < V; ++j) {
    float w[8];
    unpack(wv[j], w);
    for (int i = 0; i < 8; ++i)
      x[j][i] = x[j][i] * sc * w[i];
    sty<ST>(Y + row * H + (j * T + t) * 8, pack(x[j]));
  }
}

// Floors, one CTA of T threads a row, V 16-byte vectors a thread as k_rms.
__global__ void k_empty() {}

template <int H, int T> __global__ void __launch_bounds__(T)
    k_copy(const __nv_bfloat16 *X, __nv_bfloat16 *Y) {
  constexpr int V = H / (8 * T);
  const size_t base = (size_t)blockIdx.x * H;
  V8 v[V];
  for (int j = 0; j < V; ++j)
    v[j] = ldx<0>(X + base + (j * T + threadIdx.x) * 8);
  for (int j = 0; j < V; ++j)
    sty<0>(Y + base + (j * T + threadIdx.x) * 8, v[j]);
}

// Reads X alone; stores only if a sum is NaN (never, for finite input).
template <int H, int T> __global__ void __launch_bounds__(T)
    k_read(const __nv_bfloat16 *X, __nv_bfloat16 *Y) {
  constexpr int V = H / (8 * T);
  const size_t base = (size_t)blockIdx.x * H;
  float s = 0.f;
  for (int j = 0; j < V; ++j) {
    float f[8];
    unpack(ldx<0>(X + base + (j * T + threadIdx.x) * 8), f);
    for (int i = 0; i < 8; ++i)
      s += f[i];
  }
  if (s != s)
    Y[base + threadIdx.x] = __float2bfloat16(s);
}

template <int H, int T> __global__ void __launch_bounds__(T) k_write(__nv_bfloat16 *Y) {
  constexpr int V = H / (8 * T);
  const size_t base = (size_t)blockIdx.x * H;
  V8 z = {{0u, 0u, 0u, 0u}};
  for (int j = 0; j < V; ++j)
    sty<0>(Y + base + (j * T + threadIdx.x) * 8, z);
}

struct Args {
  const __nv_bfloat16 *X, *W;
  __nv_bfloat16 *Y;
  int R, H;
  float eps;
};

Args args(void *const *t, const int64_t *sym, const double *sc) {
  return {static_cast<const __nv_bfloat16 *>(t[0]), static_cast<const __nv_bfloat16 *>(t[1]),
          static_cast<__nv_bfloat16 *>(t[2]), (int)sym[0], (int)sym[1], (float)sc[0]};
}

// Threads a row of the floors: the table's point's (128 at 1024, 256 at 2048).
template <int H> constexpr int floorT() { return H == 1024 ? 128 : 256; }

template <int H> int floors(const char *what, const Args &a, cudaStream_t st) {
  constexpr int T = floorT<H>();
  switch (what[0]) {
  case 'e':
    k_empty<<<a.R, T, 0, st>>>();
    break;
  case 'c':
    k_copy<H, T><<<a.R, T, 0, st>>>(a.X, a.Y);
    break;
  case 'r':
    k_read<H, T><<<a.R, T, 0, st>>>(a.X, a.Y);
    break;
  default:
    k_write<H, T><<<a.R, T, 0, st>>>(a.Y);
  }
  return (int)cudaGetLastError();
}

int floorAt(const char *what, void *const *t, const int64_t *sym, const double *sc,
            cudaStream_t st) {
  Args a = args(t, sym, sc);
  if (a.H == 1024)
    return floors<1024>(what, a, st);
  if (a.H == 2048)
    return floors<2048>(what, a, st);
  return 2;
}

template <int H, int T, int RPC, int LD, int ST, int NBAR, int FL>
int rms(void *const *t, const int64_t *sym, const double *sc, cudaStream_t st) {
  Args a = args(t, sym, sc);
  if (a.H != H || a.R % RPC != 0)
    return 2;
  const size_t dyn = (FL & 2) ? 1024 + RPC * T / 32 * sizeof(float) : 0;
  k_rms<H, T, RPC, LD, ST, NBAR, FL><<<a.R / RPC, T * RPC, dyn, st>>>(a.X, a.W, a.Y, a.eps);
  return (int)cudaGetLastError();
}

} // namespace

#define SIG void *const *t, const int64_t *sym, const double *sc, cudaStream_t st
#define FLOOR(NAME)                                                                               \
  extern "C" int diag_##NAME(SIG) { return floorAt(#NAME, t, sym, sc, st); }
// An empty kernel of one CTA: what the interval costs with no work.
extern "C" int diag_empty1(SIG) {
  (void)t, (void)sym, (void)sc;
  k_empty<<<1, 32, 0, st>>>();
  return (int)cudaGetLastError();
}
// The runtime's device-to-device copy of X into Y (cudaMemcpyAsync).
extern "C" int diag_memcpy(SIG) {
  Args a = args(t, sym, sc);
  return (int)cudaMemcpyAsync(a.Y, a.X, (size_t)a.R * a.H * sizeof(__nv_bfloat16),
                              cudaMemcpyDeviceToDevice, st);
}
FLOOR(empty_grid)
FLOOR(copy)
FLOOR(read)
FLOOR(write)

#define RMS(NAME, ...)                                                                            \
  extern "C" int diag_##NAME(SIG) { return rms<__VA_ARGS__>(t, sym, sc, st); }
// H, T, RPC, LD, ST, NBAR, WF.  1024 x 2048 (the table's point is T 256):
RMS(t256, 2048, 256, 1, 0, 0, 1, false)
RMS(t256_bar2, 2048, 256, 1, 0, 0, 2, false)
RMS(t256_ld, 2048, 256, 1, 1, 0, 1, false)
RMS(t256_l256, 2048, 256, 1, 2, 0, 1, false)
RMS(t256_ldcs, 2048, 256, 1, 3, 0, 1, false)
RMS(t256_ldef, 2048, 256, 1, 4, 0, 1, false)
RMS(t256_ldna, 2048, 256, 1, 5, 0, 1, false)
RMS(t256_ldnaef, 2048, 256, 1, 6, 0, 1, false)
RMS(t256_ldef_stef, 2048, 256, 1, 4, 2, 1, false)
RMS(t256_stcs, 2048, 256, 1, 0, 1, 1, false)
RMS(t256_stef, 2048, 256, 1, 0, 2, 1, false)
RMS(t256_ldcs_stcs, 2048, 256, 1, 3, 1, 1, false)
RMS(t256_wfirst, 2048, 256, 1, 0, 0, 1, true)
RMS(t256_r2, 2048, 256, 2, 0, 0, 1, false)
RMS(t256_r4, 2048, 256, 4, 0, 0, 1, false)
RMS(t128, 2048, 128, 1, 0, 0, 1, false)
RMS(t128_r2, 2048, 128, 2, 0, 0, 1, false)
RMS(t128_r4, 2048, 128, 4, 0, 0, 1, false)
// The lowered kernels' shared memory and barriers, one at a time (FL 2:
// dynamic, 1024-aligned, as lowered; NBAR 2: a second barrier, as lowered).
RMS(t128_bar2, 2048, 128, 1, 0, 0, 2, 0)
RMS(t128_dyn, 2048, 128, 1, 0, 0, 1, 2)
RMS(t128_dyn_bar2, 2048, 128, 1, 0, 0, 2, 2)
RMS(t256_dyn, 2048, 256, 1, 0, 0, 1, 2)
RMS(t256_dyn_bar2, 2048, 256, 1, 0, 0, 2, 2)
RMS(t64_r4, 2048, 64, 4, 0, 0, 1, false)
// 1024 x 1024, the table's point (T 128) by hand:
RMS(t128_h1024, 1024, 128, 1, 0, 0, 1, false)
// Every H of the sweep: one row a CTA of T threads (the table's one-row point
// at H 1024 and above), plain, with X loaded evict-first (L2 policy) and
// streaming (.cs).
#define RMS3(H, T)                                                                                \
  RMS(h##H##_t##T, H, T, 1, 0, 0, 1, false)                                                       \
  RMS(h##H##_t##T##_ldef, H, T, 1, 4, 0, 1, false)                                                \
  RMS(h##H##_t##T##_ldcs, H, T, 1, 3, 0, 1, false)
RMS3(512, 64)
RMS3(1024, 128)
RMS3(2048, 256)
RMS3(4096, 256)
RMS3(8192, 512)
RMS3(16384, 512)
