#!/usr/bin/env python3
"""Times FP8 GEMM kernels against torch._scaled_mm in one process (helper fp8).

fp8time.py SIZE REPS NAME=LIB:KERNEL:KIND ...   (KIND: bs = block-scaled, pt = per-tensor)

Fresh random e4m3 A [M, K], B [N, K] (M = N = K = SIZE), block scales in
[0.25, 1.75). Every kernel's C is poisoned, computed once and compared with
float64 (relative Frobenius error). Then all kernels and both
torch._scaled_mm calls (block-scaled 1x128 / 128x128, per-tensor) are timed in
rotating order, L2 flushed before each call (gpu_harness.time_one), REPS
rounds after warm-ups. Prints one JSON line per function. Kernels of one kind
are compared bit for bit with the first of that kind named.
"""
import ctypes
import json
import statistics
import sys

import torch

from gpu_harness import bind_launch, time_one


def main():
    n = int(sys.argv[1])
    reps = int(sys.argv[2])
    M = N = K = n
    torch.manual_seed(n)
    A = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
    B = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn)
    KB, NB = K // 128, (N + 127) // 128
    SA = torch.rand(KB, M, device="cuda") * 1.5 + 0.25
    SB = torch.rand(NB, KB, device="cuda") * 1.5 + 0.25
    stream = torch.cuda.current_stream().cuda_stream
    fns, outs, kinds, libs = {}, {}, {}, []
    for spec in sys.argv[3:]:
        name, rest = spec.split("=", 1)
        path, kernel, kind = rest.split(":")
        lib = ctypes.CDLL(path)
        libs.append(lib)
        launch = getattr(lib, "tilescope_launch_" + kernel)
        launch.restype = ctypes.c_int
        launch.argtypes = [ctypes.c_void_p] * 4
        abi_fn = getattr(lib, "tilescope_abi_" + kernel)
        abi_fn.restype = ctypes.c_char_p
        abi = json.loads(abi_fn().decode())
        C = torch.empty(M, N, dtype=torch.bfloat16, device="cuda")
        ts = {"A": A, "B": B, "C": C, "SA": SA, "SB": SB}
        names = [t["name"] for t in abi["tensors"]]
        ptrs = (ctypes.c_void_p * len(names))(*[ts[x].data_ptr() for x in names])
        symv = {"M": M, "N": N, "K": K, "KB": KB, "NB": NB}
        syms = (ctypes.c_int64 * max(1, len(abi["symbols"])))(*[symv[s] for s in abi["symbols"]])
        scal = (ctypes.c_double * max(1, len(abi["scalars"])))(*[1.0 for _ in abi["scalars"]])
        fns[name] = bind_launch(launch, ptrs, syms, scal, stream)
        outs[name] = C
        kinds[name] = kind
    one = torch.ones((), dtype=torch.float32, device="cuda")
    # cuBLASLt's block scaling (as codegen/bench.py calls it): A's scales
    # [M, K/128] M-contiguous, B's [K/128, N/128] with either dimension contiguous.
    for sbt in (SB.t(), SB.t().contiguous()):
        call = lambda sbt=sbt: torch._scaled_mm(A, B.t(), scale_a=SA.t(), scale_b=sbt,
                                                out_dtype=torch.bfloat16)
        try:
            call()
            torch.cuda.synchronize()
        except Exception as e:
            print(json.dumps({"scaled_mm_bs_refused": str(e)[:200]}), flush=True)
            continue
        fns["scaled_mm_bs"] = call
        break
    fns["scaled_mm_pt"] = lambda: torch._scaled_mm(A, B.t(), scale_a=one, scale_b=one,
                                                   out_dtype=torch.bfloat16)
    kinds["scaled_mm_bs"], kinds["scaled_mm_pt"] = "bs", "pt"
    print(json.dumps({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__}), flush=True)
    # Correctness: float64 references, bit-for-bit agreement of the block-scaled kernels.
    a64, b64 = A.double(), B.double()
    sa = SA.double().t().repeat_interleave(128, dim=1)
    sb = SB.double().repeat_interleave(128, dim=0)[:N].repeat_interleave(128, dim=1)
    ref_bs = (a64 * sa) @ (b64 * sb).t()
    del sa, sb
    ref_pt = a64 @ b64.t()
    del a64, b64
    info = {}
    first = {}
    for name, fn in fns.items():
        if name in outs:
            outs[name].view(torch.int16).fill_(-1)
            fn()
            c = outs[name]
        else:
            c = fn()
        torch.cuda.synchronize()
        ref = ref_bs if kinds[name] == "bs" else ref_pt
        d = {"rel_err": ((c.double() - ref).norm() / ref.norm()).item(),
             "unwritten": int(torch.isnan(c.float()).sum().item())}
        if name in outs:  # bit for bit against the first kernel of its kind
            f = first.setdefault(kinds[name], name)
            d["same_bits_as_" + f] = int((c.view(torch.int16) ==
                                          outs[f].view(torch.int16)).sum().item())
        info[name] = d
    del ref_bs, ref_pt
    torch.cuda.empty_cache()
    for _ in range(5):
        for fn in fns.values():
            fn()
    torch.cuda.synchronize()
    names = list(fns)
    times = {x: [] for x in names}
    for i in range(reps):
        order = names[i % len(names):] + names[:i % len(names)]
        for x in order:
            times[x].append(time_one(fns[x]))
    flops = 2.0 * M * N * K
    for x in names:
        t = sorted(times[x])
        med = statistics.median(t)
        q1, q3 = t[len(t) // 4], t[(3 * len(t)) // 4]
        print(json.dumps({"size": n, "fn": x, "tflops": round(flops / med / 1e9, 1),
                          "ms": round(med, 4), "ms_min": round(t[0], 4),
                          "ms_q1": round(q1, 4), "ms_q3": round(q3, 4),
                          "ms_max": round(t[-1], 4), "reps": reps, **info[x]}), flush=True)


if __name__ == "__main__":
    main()
