# Intra-CTA split-K: C consumer warpgroups share one 64x64 tile, each takes every C-th k-step.
def kernel(name, C, S, inflight):
    threads = 128 * (C + 1)
    if inflight:
        loop = f"""    for k in wgid - 1 .. kt step {C} {{
      let s = k % {S}
      mbarrier.wait(full[s], parity = k / {S} % 2)
      wgmma.fence()
      wgmma.mma_async(acc, As[s], Bs[s], transpose_b = true, accumulate = k > wgid - 1)
      wgmma.commit_group()
      wgmma.wait_group(1)
      if k > wgid - 1 && tid_in_wg == 0 {{
        mbarrier.arrive(empty[(k + {S - C}) % {S}])
      }}
    }}
    wgmma.wait_group(0)
    // This warpgroup's last k-step: the largest k below kt in its class.
    if wgid - 1 < kt && tid_in_wg == 0 {{
      mbarrier.arrive(empty[((kt - wgid) / {C} * {C} + wgid - 1) % {S}])
    }}"""
        fill = ""
    else:
        loop = f"""    for k in wgid - 1 .. kt step {C} {{
      let s = k % {S}
      mbarrier.wait(full[s], parity = k / {S} % 2)
      wg.gemm(acc, As[s], Bs[s], transpose_b = true)
      if tid_in_wg == 0 {{
        mbarrier.arrive(empty[s])
      }}
    }}"""
        fill = "    wg.fill(acc, 0.0)\n"
    guard = "wgid - 1 < kt" if inflight else "true"
    return f"""// problem: gemm(A, B^T -> C)
kernel {name}(A: global bf16[M, K], B: global bf16[N, K], C: global bf16[M, N])
  where M > 0, N > 0, K > 0, N % 8 == 0, K % 8 == 0
  launch grid((N + 63) / 64, (M + 63) / 64) threads({threads}) target(sm_90a)
{{
  shared As: bf16[{S}, 64, 64] layout(swizzle(128B, bf16, S[({S},64,64):(4096,64,1)]))
  shared Bs: bf16[{S}, 64, 64] layout(swizzle(128B, bf16, S[({S},64,64):(4096,64,1)]))
  shared Red: f32[{C - 1}, 64, 64] layout(S[({C - 1},64,64):(4096,64,1)])
  shared Cs: bf16[64, 64] layout(swizzle(128B, bf16, S[(64,64):(64,1)]))
  mbarrier full[{S}](count = 1), empty[{S}](count = 1)
  let kt = (K + 63) / 64
  let m0 = blockIdx.y * 64, n0 = blockIdx.x * 64
  if wgid == 0 {{
    if warpid == 0 {{
      for k in 0 .. kt {{
        let s = k % {S}
        mbarrier.wait(empty[s], parity = (k / {S} + 1) % 2)
        if elect_sync() {{
          mbarrier.arrive_expect_tx(full[s], bytes = 16384)
          copy_async(As[s], A[m0 : +64, k * 64 : +64], mbar = full[s])
          copy_async(Bs[s], B[n0 : +64, k * 64 : +64], mbar = full[s])
        }}
      }}
    }}
  }} else {{
    reg acc: f32[64, 64] layout(wgmma_acc(64, 64))
{fill}{loop}
    if wgid > 1 && {guard} {{
      wg.copy(Red[wgid - 2], acc)
    }}
    barrier.sync(1, threads = {128 * C})
    if wgid == 1 {{
      reg part: f32[64, 64] layout(wgmma_acc(64, 64))
      for c in 1 .. {C} unroll {{
        if {"c < kt" if inflight else "true"} {{
          wg.copy(part, Red[c - 1])
          wg.add(acc, acc, part)
        }}
      }}
      reg out: bf16[64, 64] layout(wgmma_acc(64, 64))
      wg.cast(out, acc)
      wg.copy(Cs, out)
      fence.proxy.async()
      barrier.sync(2, threads = 128)
      if threadIdx.x == 128 {{
        tma.store(C[m0 : +64, n0 : +64], Cs)
        tma.store_commit()
        tma.store_wait(0)
      }}
    }}
  }}
}}
"""
for n, p in {"sk2": (2, 4, False), "sk2f": (2, 4, True), "sk3": (3, 6, False), "sk2s6": (2, 6, False)}.items():
    open(f"{n}.tile", "w").write(kernel(n, *p))
