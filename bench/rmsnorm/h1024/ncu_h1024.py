#!/usr/bin/env python3
"""Kernel-only durations at 1024 x 1024 under Nsight Compute (run.sh):
  ncu --metrics gpu__time_duration.sum --cache-control all --clock-control none \
      -k regex:'k_|f1024|rmsnorm_kernel' --csv python3 ncu_h1024.py DIR
ncu flushes the caches before every profiled kernel (--cache-control all), so
each duration is a cold-L2 kernel without the launch and event overheads that
bench_h1024.py's CUDA-event intervals contain. Each candidate runs REPS times."""
import ctypes
import os
import sys

import torch

here = sys.argv[1]
sys.path.insert(0, here)
from gpu_harness import bind_launch, triton_rmsnorm  # noqa: E402

REPS = 5
r = h = 1024
eps = 1e-6
torch.manual_seed(r + h)
X = torch.randn(r, h, device="cuda").to(torch.bfloat16)
W = torch.randn(h, device="cuda").to(torch.bfloat16)
Y = torch.empty_like(X)
ptrs = (ctypes.c_void_p * 3)(X.data_ptr(), W.data_ptr(), Y.data_ptr())
syms = (ctypes.c_int64 * 2)(r, h)
scal = (ctypes.c_double * 1)(eps)
stream = torch.cuda.current_stream().cuda_stream
diag = ctypes.CDLL(os.path.join(here, "diag.so"))
fam = ctypes.CDLL(os.path.join(here, "fam.so"))
runs = []
for lib, sym in [(diag, "diag_empty_grid"), (diag, "diag_copy"), (diag, "diag_read"),
                 (diag, "diag_write"), (diag, "diag_cta128"), (diag, "diag_warp4"),
                 (fam, "tilescope_launch_f1024_cta_t128_v1_r1_n1"),
                 (fam, "tilescope_launch_f1024_warp_t32_v4_r1_n1")]:
    f = getattr(lib, sym)
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_void_p] * 4
    runs.append(bind_launch(f, ptrs, syms, scal, stream, what=sym))
for nw in (1, 4):
    runs.append(lambda nw=nw: triton_rmsnorm(X, W, Y, eps, num_warps=nw))
for run in runs:
    for _ in range(REPS):
        run()
        torch.cuda.synchronize()
