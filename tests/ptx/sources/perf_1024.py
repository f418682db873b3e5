"""Triton side of the 1024 comparison (issue 19, item 7), run on the GPU machine.

Usage: python3 perf_1024.py OUTDIR
  - RMSNorm 1024 x 1024, bf16: the Triton kernel codegen/bench.py times as the
    baseline (one row per program, BLOCK = 1024, num_warps = 4), launched once;
    its PTX is written to OUTDIR/triton_rmsnorm_bench.ptx.
  - GEMM 1024^3, C = A @ B^T in bf16 with fp32 accumulation: a TMA + wgmma
    Triton matmul over a few tile / stage / warp configurations, each timed
    against cuBLAS (torch.matmul) the way codegen/bench.py times (L2 flushed
    before every timed run, alternating, median of 200); the fastest
    configuration's PTX is written to OUTDIR/triton_matmul_1024.ptx.
Prints one JSON object per measurement on stdout.
"""
import json
import os
import sys

import torch
import triton
import triton.language as tl

# The timing of `tilescope bench` (codegen/bench.py): L2 flushed before every
# timed run, alternating with the baseline; its RMSNorm baseline.
# codegen/gpu_harness.py: beside this script in a device folder, else in the source tree.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                             "codegen"))
from gpu_harness import time_pair, triton_rmsnorm  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
dev = "cuda"


@triton.jit
def matmul_kernel(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_pid_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([off_m, k * BLOCK_K])
        b = b_desc.load([off_n, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([off_m, off_n], acc.to(tl.bfloat16))


def emit(d):
    print(json.dumps(d), flush=True)


# RMSNorm: compile and save the baseline's PTX.
x = torch.randn(1024, 1024, device=dev, dtype=torch.bfloat16)
w = torch.randn(1024, device=dev, dtype=torch.bfloat16)
y = torch.empty_like(x)
k = triton_rmsnorm(x, w, y, 1e-6)  # BLOCK = 1024, num_warps = 4
with open(os.path.join(out, "triton_rmsnorm_bench.ptx"), "w") as f:
    f.write(k.asm["ptx"])
emit({"triton_rmsnorm": {"n_regs": getattr(k, "n_regs", None), "n_spills": getattr(k, "n_spills", None)}})

# GEMM 1024^3.
from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: E402

M = N = K = 1024
a = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
b = torch.randn(N, K, device=dev, dtype=torch.bfloat16)
c = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
ref = (a.double() @ b.double().t())
best = None
for bm, bn, bk, stages, warps in ((128, 128, 64, 4, 8), (128, 128, 64, 3, 4), (64, 128, 64, 4, 4),
                                  (64, 128, 64, 8, 4), (128, 64, 64, 4, 4), (128, 256, 64, 3, 8),
                                  (64, 64, 64, 6, 4)):
    try:
        da = TensorDescriptor.from_tensor(a, [bm, bk])
        db = TensorDescriptor.from_tensor(b, [bn, bk])
        dc = TensorDescriptor.from_tensor(c, [bm, bn])
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)

        def run():
            return matmul_kernel[grid](da, db, dc, M, N, K, bm, bn, bk, 8, num_warps=warps,
                                       num_stages=stages)

        kern = run()
        torch.cuda.synchronize()
        err = ((c.double() - ref).norm() / ref.norm()).item()
        (t_tr, _, _), (t_cb, _, _) = time_pair(run, lambda: torch.matmul(a, b.t()), reps=200)
        d = {"triton_gemm": f"{bm}x{bn}x{bk} stages {stages} warps {warps}", "ms": t_tr,
             "cublas_ms": t_cb, "ratio_vs_cublas": t_cb / t_tr, "rel_err": err,
             "n_regs": getattr(kern, "n_regs", None)}
        emit(d)
        if err < 1e-2 and (best is None or t_tr < best[0]):
            best = (t_tr, kern, d["triton_gemm"])
    except Exception as e:  # record and go on
        emit({"triton_gemm": f"{bm}x{bn}x{bk} stages {stages} warps {warps}",
              "failed": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"})
if best:
    with open(os.path.join(out, "triton_matmul_1024.ptx"), "w") as f:
        f.write(f"// fastest configuration: {best[2]}\n" + best[1].asm["ptx"])
    emit({"triton_gemm_best": best[2], "ms": best[0]})
emit({"versions": {"triton": triton.__version__, "torch": torch.__version__,
                   "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0)}})
