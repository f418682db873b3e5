#!/usr/bin/env bash
# Which cuBLAS kernel torch.matmul(A, B.t()) runs at the GEMM sweep's shapes
# (bf16, A [M, K] and B [N, K] row-major, as scripts/model/gemm_run.py calls it), with its time
# from the profiler: the tile shape, cluster and split-K / stream-K in the kernel's name.
out=${OUT:-/tmp/out}; mkdir -p "$out"
timeout 120 python3 - <<'PY' > "$out/names.txt" 2> "$out/err.txt"
import torch
from torch.profiler import profile, ProfilerActivity
print(torch.cuda.get_device_name(0), torch.__version__, torch.version.cuda)
shapes = [(5000,1000,4000),(4104,2056,1032),(1536,1536,1536),(1000,3000,7000),(3000,5000,2000),
          (512,512,8192),(512,512,4096),(256,2048,8192),(1024,1024,16384),(4096,8192,1024),
          (16384,16384,1024),(5120,5120,5120),(8192,512,4096),(4096,4096,4096),(2048,2048,2048),
          (8192,8192,8192),(512,8192,4096),(2000,6000,3000)]
for M, N, K in shapes:
    a = torch.randn(M, K, device='cuda', dtype=torch.bfloat16)
    b = torch.randn(N, K, device='cuda', dtype=torch.bfloat16)
    for _ in range(5):
        c = torch.matmul(a, b.t())
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(5):
            c = torch.matmul(a, b.t())
        torch.cuda.synchronize()
    seen = {}
    for e in p.events():
        if e.device_type.name == 'CUDA':
            seen.setdefault(e.name, []).append(e.device_time_total if hasattr(e, 'device_time_total') else e.cuda_time_total)
    for name, ts in seen.items():
        ts = sorted(ts)
        print(f"{M}x{N}x{K}\t{len(ts)}\t{ts[len(ts)//2]:.1f} us\t{name}")
PY
echo "exit $?" >> "$out/err.txt"
