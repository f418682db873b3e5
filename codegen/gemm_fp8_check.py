#!/usr/bin/env python3
"""The FP8 GEMM on the GPU (docs/perf.md, "FP8 GEMM"), until codegen/bench.py
loads fp8 tensors. LIB is kernels/gemm_fp8_sm90.tile lowered by `tilescope
lower` and built with nvcc -shared for sm_90a.

gemm_fp8_check.py LIB CASE_DIR: load A, B (e4m3 bytes) dumped by `tilescope sim
--dump CASE_DIR` and the case's `args` file (M=...,N=...,K=...,scale=...), run
gemm_fp8_sm90 from LIB, and compare C (bf16 bits) with the simulator's C.npy
bit for bit. Prints one JSON line.

gemm_fp8_check.py LIB --time M,N,K: random e4m3 inputs, time the kernel
against torch._scaled_mm (CUDA events, median of 50 runs after 10 warm-ups,
L2 flushed before each, timed alternately)."""
import ctypes
import json
import statistics
import sys

import numpy as np
import torch

KERNEL = "gemm_fp8_sm90"


def load_lib(path):
    lib = ctypes.CDLL(path)
    abi_fn = getattr(lib, "tilescope_abi_" + KERNEL)
    abi_fn.restype = ctypes.c_char_p
    abi = json.loads(abi_fn().decode())
    launch = getattr(lib, "tilescope_launch_" + KERNEL)
    launch.restype = ctypes.c_int
    launch.argtypes = [ctypes.c_void_p] * 4
    return abi, launch


def launcher(abi, launch, tensors, syms, scalars):
    names = [t["name"] for t in abi["tensors"]]
    ptrs = (ctypes.c_void_p * len(names))(*[tensors[n].data_ptr() for n in names])
    sym_vals = (ctypes.c_int64 * max(1, len(abi["symbols"])))(*[syms[s] for s in abi["symbols"]])
    scal = (ctypes.c_double * max(1, len(abi["scalars"])))(
        *[scalars[s["name"]] for s in abi["scalars"]])
    stream = torch.cuda.current_stream().cuda_stream

    def run():
        rc = launch(ptrs, sym_vals, scal, ctypes.c_void_p(stream))
        if rc != 0:
            raise RuntimeError("launch failed: cudaError %d" % rc)
    return run


def parse_args(text):
    out = {}
    for part in filter(None, text.strip().split(",")):
        k, v = part.split("=")
        out[k.strip()] = v.strip()
    return out


def case(lib_path, d):
    abi, launch = load_lib(lib_path)
    args = parse_args(open(d + "/args").read())
    syms = {k: int(v) for k, v in args.items() if k in ("M", "N", "K")}
    scalars = {"scale": float(args["scale"])}
    M, N, K = syms["M"], syms["N"], syms["K"]
    a = np.load(d + "/A.npy").astype(np.uint8).reshape(M, K)
    b = np.load(d + "/B.npy").astype(np.uint8).reshape(N, K)
    want = np.load(d + "/C.npy").view(np.uint16).reshape(M, N)
    tensors = {"A": torch.from_numpy(a).cuda(), "B": torch.from_numpy(b).cuda(),
               "C": torch.full((M, N), -1, dtype=torch.int16, device="cuda")}
    run = launcher(abi, launch, tensors, syms, scalars)
    run()
    torch.cuda.synchronize()
    got = tensors["C"].cpu().numpy().view(np.uint16)
    same = int((got == want).sum())
    # A float64 reference, for scale: the relative error of the kernel's C.
    af = tensors["A"].view(torch.float8_e4m3fn).to(torch.float32).double()
    bf = tensors["B"].view(torch.float8_e4m3fn).to(torch.float32).double()
    ref = scalars["scale"] * (af @ bf.t())
    c = tensors["C"].view(torch.bfloat16).double()
    rel = ((c - ref).norm() / ref.norm()).item()
    diff = np.argwhere(got != want)
    first = None
    if len(diff):
        i, j = diff[0]
        first = {"at": [int(i), int(j)], "gpu": hex(int(got[i, j])), "sim": hex(int(want[i, j]))}
    print(json.dumps({"case": d.rstrip("/").split("/")[-1], "args": args,
                      "gpu": torch.cuda.get_device_name(), "bit_identical": same,
                      "compared": int(got.size), "first_difference": first,
                      "rel_err_vs_f64": rel}))


def timing(lib_path, shape):
    abi, launch = load_lib(lib_path)
    M, N, K = shape
    torch.manual_seed(0)
    A = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
    B = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn)
    C = torch.empty(M, N, dtype=torch.bfloat16, device="cuda")
    tensors = {"A": A.view(torch.uint8), "B": B.view(torch.uint8), "C": C}
    run = launcher(abi, launch, tensors, {"M": M, "N": N, "K": K}, {"scale": 1.0})
    one = torch.tensor(1.0, device="cuda")
    lib = lambda: torch._scaled_mm(A, B.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")

    def time_one(fn):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        return s.elapsed_time(e)
    for _ in range(10):
        run()
        lib()
    ours, base = [], []
    for i in range(50):
        if i % 2 == 0:
            ours.append(time_one(run))
            base.append(time_one(lib))
        else:
            base.append(time_one(lib))
            ours.append(time_one(run))
    ref = lib().double()
    err = ((C.double() - ref).norm() / ref.norm()).item()
    flops = 2.0 * M * N * K
    print(json.dumps({"time": [M, N, K], "gpu": torch.cuda.get_device_name(),
                      "ms": statistics.median(ours), "scaled_mm_ms": statistics.median(base),
                      "tflops": flops / statistics.median(ours) / 1e9,
                      "scaled_mm_tflops": flops / statistics.median(base) / 1e9,
                      "ratio_vs_scaled_mm": statistics.median(base) / statistics.median(ours),
                      "rel_diff_vs_scaled_mm": err}))


if __name__ == "__main__":
    if sys.argv[2] == "--time":
        timing(sys.argv[1], [int(x) for x in sys.argv[3].split(",")])
    else:
        case(sys.argv[1], sys.argv[2])
