"""Compiles the kernels of triton_kernels.py on this GPU and writes their PTX.

Usage: python3 dump_triton_ptx.py OUTDIR
Writes OUTDIR/triton_<name>.ptx for each kernel that compiled and
OUTDIR/triton_versions.txt (Triton, PyTorch, CUDA, the GPU, what failed and
why, and each kernel's register / spill / shared-memory figures from Triton's
compiled metadata).
"""
import os
import sys
import traceback

import torch
import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_kernels as tk  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
log = []


def note(s):
    print(s)
    log.append(s)


note(f"triton {triton.__version__}")
note(f"torch {torch.__version__} (cuda {torch.version.cuda})")
note(f"gpu {torch.cuda.get_device_name(0)} cc {torch.cuda.get_device_capability(0)}")


def save(name, compiled):
    with open(os.path.join(out, f"triton_{name}.ptx"), "w") as f:
        f.write(compiled.asm["ptx"])
    md = compiled.metadata
    note(f"{name}: n_regs {getattr(compiled, 'n_regs', '?')} n_spills "
         f"{getattr(compiled, 'n_spills', '?')} shared {getattr(md, 'shared', '?')} "
         f"num_warps {getattr(md, 'num_warps', '?')} num_stages {getattr(md, 'num_stages', '?')}")


def attempt(name, fn):
    try:
        save(name, fn())
        return True
    except Exception as e:  # record why and go on with the next kernel
        note(f"{name}: FAILED {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        traceback.print_exc()
        return False


M = N = K = 1024
BM, BN, BK = 128, 128, 64
dev = "cuda"
a = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
b = torch.randn(N, K, device=dev, dtype=torch.bfloat16)
c = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)


def host_descs():
    from triton.tools.tensor_descriptor import TensorDescriptor
    return (TensorDescriptor.from_tensor(a, [BM, BK]), TensorDescriptor.from_tensor(b, [BN, BK]),
            TensorDescriptor.from_tensor(c, [BM, BN]))


def mm_ws():
    # Warp specialisation on Hopper is picky about the configuration: the
    # first that compiles is kept (each failure is logged).
    da, db, dc = host_descs()
    last = None
    for warps, stages in ((8, 4), (4, 4), (8, 3), (4, 3)):
        try:
            k = tk.matmul_tma_ws_kernel[grid](da, db, dc, M, N, K, BM, BN, BK, num_warps=warps,
                                              num_stages=stages)
            note(f"matmul_tma_ws: compiled with num_warps={warps} num_stages={stages}")
            return k
        except Exception as e:  # try the next configuration
            note(f"matmul_tma_ws: num_warps={warps} num_stages={stages}: {type(e).__name__}")
            last = e
    raise last


def mm_tma():
    da, db, dc = host_descs()
    return tk.matmul_tma_kernel[grid](da, db, dc, M, N, K, BM, BN, BK, num_warps=8, num_stages=4)


def mm_tma_device():
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8,
                                                                 device=dev))
    return tk.matmul_tma_device_desc_kernel[grid](a, b, c, M, N, K, BM, BN, BK, num_warps=8,
                                                  num_stages=4)


def mm_cpasync():
    return tk.matmul_cpasync_kernel[grid](a, b, c, M, N, K, BM, BN, BK, num_warps=8, num_stages=3)


def rmsnorm():
    x = torch.randn(1024, 1024, device=dev, dtype=torch.bfloat16)
    w = torch.randn(1024, device=dev, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    return tk.rmsnorm_kernel[(1024,)](x, w, y, 1024, 1024, 1e-6, BLOCK=1024, num_warps=4)


def attention():
    bh, s, d = 16, 1024, 64
    q = torch.randn(bh, s, d, device=dev, dtype=torch.bfloat16)
    k = torch.randn_like(q)
    v = torch.randn_like(q)
    o = torch.empty_like(q)
    return tk.attention_fwd_kernel[(s // 128, bh)](q, k, v, o, s, 0.125, HEAD_DIM=d, BLOCK_M=128,
                                                    BLOCK_N=64, num_warps=8)


attempt("matmul_tma_ws", mm_ws)
if not attempt("matmul_tma", mm_tma):
    attempt("matmul_tma", mm_tma_device)
attempt("matmul_cpasync", mm_cpasync)
attempt("rmsnorm", rmsnorm)
attempt("attention_fwd", attention)
torch.cuda.synchronize()
with open(os.path.join(out, "triton_versions.txt"), "w") as f:
    f.write("\n".join(log) + "\n")
