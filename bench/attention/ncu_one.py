#!/usr/bin/env python3
"""helper attn3 (session 16), causal and the SDPA backends added by attn6 (session 19):
launch one attention forward three times (head dim ATTN_D, default 128; B = 16384 / S,
16 heads), the third between cudaProfilerStart and cudaProfilerStop, for
`ncu --launch-skip 2 --launch-count 1` (a kernel of ours, selected with -k) or
`ncu --profile-from-start off` (a backend whose kernel names are not known beforehand).
ncu_one.py SO KERNEL S [causal|full]: KERNEL of a lowered .so;
ncu_one.py cudnn|flash - S [causal|full]: torch SDPA with that backend."""
import math
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402
import attention_timing as at  # noqa: E402

so, kernel, S = sys.argv[1], sys.argv[2], int(sys.argv[3])
causal = len(sys.argv) > 4 and sys.argv[4] == "causal"
B, H, D = 16384 // S, 16, int(os.environ.get("ATTN_D", "128"))
q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
scale = 1.0 / math.sqrt(D)
backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}
if so in backends:
    def run():
        with sdpa_kernel([backends[so]]):
            torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
else:
    o = torch.empty_like(q)
    lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
    abi, launch = at.load_lib(so, kernel)
    run = at.launcher(abi, launch, {"Q": q, "K": k, "V": v, "O": o, "L": lse}, {"B": B, "H": H, "S": S},
                      {"sm_scale": scale})
for _ in range(2):
    run()
torch.cuda.synchronize()
torch.cuda.profiler.start()
run()
torch.cuda.synchronize()
torch.cuda.profiler.stop()
