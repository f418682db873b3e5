#!/usr/bin/env python3
"""The two ceilings of the GPU (METHOD.md): device-to-device copy bandwidth
(bytes read plus written) and the bf16 matrix-product rate of cuBLAS
(torch.matmul, 8192^3, random data), each the median of event-timed runs."""
import json
import statistics

import torch


def timed(fn, reps=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    return statistics.median(ts)


src = torch.randn(1 << 30, device="cuda", dtype=torch.bfloat16)  # 2 GiB
dst = torch.empty_like(src)
ms = timed(lambda: dst.copy_(src))
copy_tbs = 2 * src.numel() * 2 / ms / 1e9
del src, dst
n = 8192
a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
ms_mm = timed(lambda: a @ b.t())
print(json.dumps({"gpu": torch.cuda.get_device_name(), "copy_TBps": copy_tbs,
                  "cublas_bf16_8192_TFLOPs": 2 * n**3 / ms_mm / 1e9}))
