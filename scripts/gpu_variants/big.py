def kernel(name, BM, BN, S, inflight=True):
    W = BM // 64   # consumer warpgroups, 64 rows each
    nb = BN // 64
    stage = (BM + BN) * 64 * 2
    stores = "\n".join(f"      tma.store(C[m0 : +{BM}, n0 + {64*j} : +64], Cs[:, {64*j} : +64])" for j in range(nb))
    return f"""// problem: gemm(A, B^T -> C)
kernel {name}(A: global bf16[M, K], B: global bf16[N, K], C: global bf16[M, N])
  where M > 0, N > 0, K > 0, N % 8 == 0, K % 8 == 0
  launch grid((N + {BN-1}) / {BN}, (M + {BM-1}) / {BM}) threads({128 * (W + 1)}) target(sm_90a)
{{
  shared As: bf16[{S}, {BM}, 64] layout(swizzle(128B, bf16, S[({S},{BM},64):({BM*64},64,1)]))
  shared Bs: bf16[{S}, {BN}, 64] layout(swizzle(128B, bf16, S[({S},{BN},64):({BN*64},64,1)]))
  shared Cs: bf16[{BM}, {BN}] layout(swizzle(128B, bf16, S[({BM},{nb},64):(64,{BM*64},1)]))
  mbarrier full[{S}](count = 1), empty[{S}](count = {W})
  let kt = (K + 63) / 64
  let m0 = blockIdx.y * {BM}, n0 = blockIdx.x * {BN}
  if wgid == 0 {{
    setmaxnreg.dec(40)
    if warpid == 0 {{
      for k in 0 .. kt {{
        let s = k % {S}
        mbarrier.wait(empty[s], parity = (k / {S} + 1) % 2)
        if elect_sync() {{
          mbarrier.arrive_expect_tx(full[s], bytes = {stage})
          copy_async(As[s], A[m0 : +{BM}, k * 64 : +64], mbar = full[s])
          copy_async(Bs[s], B[n0 : +{BN}, k * 64 : +64], mbar = full[s])
        }}
      }}
    }}
  }} else {{
    setmaxnreg.inc(232)
    reg acc: f32[64, {BN}] layout(wgmma_acc(64, {BN}))
    for k in 0 .. kt {{
      let s = k % {S}
      mbarrier.wait(full[s], parity = k / {S} % 2)
      wgmma.fence()
      wgmma.mma_async(acc, As[s][(wgid - 1) * 64 : +64, :], Bs[s], transpose_b = true, accumulate = k > 0)
      wgmma.commit_group()
      wgmma.wait_group(1)
      if k > 0 && tid_in_wg == 0 {{
        mbarrier.arrive(empty[(k + {S-1}) % {S}])
      }}
    }}
    wgmma.wait_group(0)
    if tid_in_wg == 0 {{
      mbarrier.arrive(empty[(kt + {S-1}) % {S}])
    }}
    reg out: bf16[64, {BN}] layout(wgmma_acc(64, {BN}))
    wg.cast(out, acc)
    wg.copy(Cs[(wgid - 1) * 64 : +64, :], out)
    fence.proxy.async()
    barrier.sync(1, threads = {128 * W})
    if threadIdx.x == 128 {{
{stores}
      tma.store_commit()
      tma.store_wait(0)
    }}
  }}
}}
"""
for n, p in {"b128x64s8": (128, 64, 8), "b128x64s4": (128, 64, 4), "b128x128s6": (128, 128, 6)}.items():
    open(f"{n}.tile", "w").write(kernel(n, *p))
