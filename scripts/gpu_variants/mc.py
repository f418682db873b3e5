def kernel(name, S):
    return f"""// problem: gemm(A, B^T -> C)
kernel {name}(A: global bf16[M, K], B: global bf16[N, K], C: global bf16[M, N])
  where M > 0, N > 0, K > 0, N % 8 == 0, K % 8 == 0
  launch grid((N + 127) / 128 * 2, (M + 127) / 128) cluster(2) threads(384) target(sm_90a)
{{
  shared As: bf16[{S}, 128, 64] layout(swizzle(128B, bf16, S[({S}, 128, 64):(8192, 64, 1)]))
  shared Bs: bf16[{S}, 64, 64] layout(swizzle(128B, bf16, S[({S}, 64, 64):(4096, 64, 1)]))
  shared Cs: bf16[128, 64] layout(swizzle(128B, bf16, S[(128, 64):(64, 1)]))
  mbarrier full[{S}](count = 1), empty[{S}](count = 4)
  let kt = (K + 63) / 64
  let r = clusterCtaIdx.x
  let m0 = blockIdx.y * 128, n0 = blockIdx.x * 64
  // Boxes that would start past the edge of A or B load rows that exist
  // instead; the rows of C they feed are past the edge and never stored.
  let ma = select(m0 + r * 64 < M, m0 + r * 64, m0)
  let nb = select(n0 < N, n0, 0)
  cluster.sync()
  if wgid == 0 {{
    setmaxnreg.dec(40)
    if warpid == 0 {{
      for k in 0 .. kt {{
        let s = k % {S}
        mbarrier.wait(empty[s], parity = (k / {S} + 1) % 2)
        if elect_sync() {{
          mbarrier.arrive_expect_tx(full[s], bytes = 24576)
          tma.load(As[s][r * 64 : +64, :], A[ma : +64, k * 64 : +64], mbar = full[s], multicast = 3)
          tma.load(Bs[s], B[nb : +64, k * 64 : +64], mbar = full[s])
        }}
      }}
    }}
  }} else {{
    setmaxnreg.inc(232)
    reg acc: f32[64, 64] layout(wgmma_acc(64, 64))
    for k in 0 .. kt {{
      let s = k % {S}
      mbarrier.wait(full[s], parity = k / {S} % 2)
      wgmma.fence()
      wgmma.mma_async(acc, As[s][(wgid - 1) * 64 : +64, :], Bs[s], transpose_b = true, accumulate = k > 0)
      wgmma.commit_group()
      wgmma.wait_group(1)
      if k > 0 && tid_in_wg == 0 {{
        mbarrier.arrive(empty[(k + {S - 1}) % {S}])
        mbarrier.arrive(empty[(k + {S - 1}) % {S}], cta = 1 - r)
      }}
    }}
    wgmma.wait_group(0)
    if tid_in_wg == 0 {{
      mbarrier.arrive(empty[(kt + {S - 1}) % {S}])
      mbarrier.arrive(empty[(kt + {S - 1}) % {S}], cta = 1 - r)
    }}
    reg out: bf16[64, 64] layout(wgmma_acc(64, 64))
    wg.cast(out, acc)
    wg.copy(Cs[(wgid - 1) * 64 : +64, :], out)
    fence.proxy.async()
    barrier.sync(1, threads = 256)
    if threadIdx.x == 128 && n0 < N {{
      tma.store(C[m0 : +128, n0 : +64], Cs)
      tma.store_commit()
      tma.store_wait(0)
    }}
  }}
  cluster.sync()
}}
"""
for n, s in {"mc6": 6, "mc8": 8, "mc4": 4}.items():
    open(f"{n}.tile", "w").write(kernel(n, s))
