#!/usr/bin/env python3
"""helper attn3: launch one attention kernel of a lowered .so three times
(head dim ATTN_D, default 128; B = 16384 / S, 16 heads), for ncu --launch-skip 2
--launch-count 1. ncu_one.py SO KERNEL S"""
import math
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import attention_timing as at  # noqa: E402

so, kernel, S = sys.argv[1], sys.argv[2], int(sys.argv[3])
B, H, D = 16384 // S, 16, int(os.environ.get("ATTN_D", "128"))
q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
o = torch.empty_like(q)
lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
abi, launch = at.load_lib(so, kernel)
run = at.launcher(abi, launch, {"Q": q, "K": k, "V": v, "O": o, "L": lse}, {"B": B, "H": H, "S": S},
                  {"sm_scale": 1.0 / math.sqrt(D)})
for _ in range(3):
    run()
torch.cuda.synchronize()
