# Variants of the small GEMM for 1024^3 (docs/perf.md).
import sys
def kernel(name, BM, BN, BK, S, inflight):
    boxes = BK // 64
    stage_a = BM * BK * 2; stage_b = BN * BK * 2
    a_shape = f"{S}, {boxes}, {BM}, 64"; b_shape = f"{S}, {boxes}, {BN}, 64"
    a_lay = f"S[({S},{boxes},{BM},64):({boxes*BM*64},{BM*64},64,1)]"
    b_lay = f"S[({S},{boxes},{BN},64):({boxes*BN*64},{BN*64},64,1)]"
    copies = "\n".join(
        f"          copy_async(As[s][{j}], A[m0 : +{BM}, k * {BK} + {64*j} : +64], mbar = full[s])\n"
        f"          copy_async(Bs[s][{j}], B[n0 : +{BN}, k * {BK} + {64*j} : +64], mbar = full[s])"
        for j in range(boxes))
    if inflight:
        mmas = "\n".join(f"      wgmma.mma_async(acc, As[s][{j}], Bs[s][{j}], transpose_b = true{', accumulate = k > 0' if j == 0 else ''})" for j in range(boxes))
        body = f"""      mbarrier.wait(full[s], parity = k / {S} % 2)
      wgmma.fence()
{mmas}
      wgmma.commit_group()
      wgmma.wait_group(1)
      if k > 0 && tid_in_wg == 0 {{
        mbarrier.arrive(empty[(k + {S-1}) % {S}])
      }}
    }}
    wgmma.wait_group(0)
    if tid_in_wg == 0 {{
      mbarrier.arrive(empty[(kt + {S-1}) % {S}])
    }}"""
    else:
        mmas = "\n".join(f"      wg.gemm(acc, As[s][{j}], Bs[s][{j}], transpose_b = true)" for j in range(boxes))
        body = f"""      mbarrier.wait(full[s], parity = k / {S} % 2)
{mmas}
      if tid_in_wg == 0 {{
        mbarrier.arrive(empty[s])
      }}
    }}"""
    fill = "" if inflight else "    wg.fill(acc, 0.0)\n"
    cs_boxes = BN // 64
    stores = "\n".join(f"      tma.store(C[m0 : +{BM}, n0 + {64*j} : +64], Cs[:, {64*j} : +64])" for j in range(cs_boxes))
    return f"""// problem: gemm(A, B^T -> C)
kernel {name}(A: global bf16[M, K], B: global bf16[N, K], C: global bf16[M, N])
  where M > 0, N > 0, K > 0, N % 8 == 0, K % 8 == 0
  launch grid((N + {BN-1}) / {BN}, (M + {BM-1}) / {BM}) threads(256) target(sm_90a)
{{
  shared As: bf16[{a_shape}] layout(swizzle(128B, bf16, {a_lay}))
  shared Bs: bf16[{b_shape}] layout(swizzle(128B, bf16, {b_lay}))
  shared Cs: bf16[{BM}, {BN}] layout(swizzle(128B, bf16, S[({BM},{cs_boxes},64):(64,{BM*64},1)]))
  mbarrier full[{S}](count = 1), empty[{S}](count = 1)
  let kt = (K + {BK-1}) / {BK}
  let m0 = blockIdx.y * {BM}, n0 = blockIdx.x * {BN}
  if wgid == 0 {{
    if warpid == 0 {{
      for k in 0 .. kt {{
        let s = k % {S}
        mbarrier.wait(empty[s], parity = (k / {S} + 1) % 2)
        if elect_sync() {{
          mbarrier.arrive_expect_tx(full[s], bytes = {stage_a + stage_b})
{copies}
        }}
      }}
    }}
  }} else {{
    reg acc: f32[{BM}, {BN}] layout(wgmma_acc({BM}, {BN}))
{fill}    for k in 0 .. kt {{
      let s = k % {S}
{body}
    reg out: bf16[{BM}, {BN}] layout(wgmma_acc({BM}, {BN}))
    wg.cast(out, acc)
    wg.copy(Cs, out)
    fence.proxy.async()
    barrier.sync(1, threads = 128)
    if threadIdx.x == 128 {{
{stores}
      tma.store_commit()
      tma.store_wait(0)
    }}
  }}
}}
"""
variants = {
    "g64_base": (64, 64, 64, 4, False),
    "g64_fl4": (64, 64, 64, 4, True),
    "g64_fl6": (64, 64, 64, 6, True),
    "g64_k128": (64, 64, 128, 3, True),
    "g128n_fl4": (64, 128, 64, 4, True),
}
for n, p in variants.items():
    open(f"{n}.tile", "w").write(kernel(n, *p))
