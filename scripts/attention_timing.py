#!/usr/bin/env python3
"""The attention harness of docs/perf.md ("Attention forward"; issue 18), run on
the GPU machine as .dev/attn3/run_attn.py by .dev/attn3/run.sh, with LIB a
shared library nvcc built from `tilescope lower kernels/attention_fwd_*.tile`.
attention_timing.py LIB KERNEL CASE_DIR SAVE [LIB KERNEL CASE_DIR SAVE ...]: load Q, K,
V (bf16 bits) and the args of a case dumped by `tilescope sim --dump` (CASE_DIR/args
holds the --args line; the head dim is read from Q's size), run KERNEL from LIB,
compare O (bf16 bits) and L (f32 bits) with the simulator's, bit for bit, and save
the GPU's O and L bits to SAVE (.npy, for comparing later simulator models offline;
SAVE '-' prints them in the JSON line instead, as hex).
attention_timing.py --time S1,S2,... causal|full LABEL=LIB:KERNEL ...: bf16, head dim
128, B = 16384 / S, 16 heads; every listed kernel and torch SDPA with the cuDNN
backend and with the flash backend, timed in rotating order (CUDA events, L2
flushed before every timed call, median of ATTN_REPS (20) after 5 warm-ups); the outputs
of the kernels compared bit for bit with the first one's. One JSON line per S."""
import ctypes
import json
import math
import os
import statistics
import sys

import numpy as np
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel


def load_lib(path, kernel):
    lib = ctypes.CDLL(path)
    abi_fn = getattr(lib, "tilescope_abi_" + kernel)
    abi_fn.restype = ctypes.c_char_p
    abi = json.loads(abi_fn().decode())
    launch = getattr(lib, "tilescope_launch_" + kernel)
    launch.restype = ctypes.c_int
    launch.argtypes = [ctypes.c_void_p] * 4
    return abi, launch


def launcher(abi, launch, tensors, syms, scalars):
    names = [t["name"] for t in abi["tensors"]]
    ptrs = (ctypes.c_void_p * len(names))(*[tensors[n].data_ptr() for n in names])
    sym_vals = (ctypes.c_int64 * len(abi["symbols"]))(*[syms[s] for s in abi["symbols"]])
    scal = (ctypes.c_double * len(abi["scalars"]))(*[scalars[s["name"]] for s in abi["scalars"]])
    stream = torch.cuda.current_stream().cuda_stream

    def run():
        rc = launch(ptrs, sym_vals, scal, ctypes.c_void_p(stream))
        if rc != 0:
            raise RuntimeError("launch failed: cudaError %d" % rc)
    return run


def reference(q, k, v, scale, causal):
    """float64 attention and its natural-log LSE."""
    q, k, v = q.double(), k.double(), v.double()
    s = scale * (q @ k.transpose(-1, -2))
    if causal:
        S = s.shape[-1]
        mask = torch.ones(S, S, dtype=torch.bool, device=s.device).tril()
        s = s.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    return torch.softmax(s, dim=-1) @ v, lse


def case(lib_path, kernel, d, save):
    abi, launch = load_lib(lib_path, kernel)
    args = dict(p.split("=") for p in open(d + "/args").read().strip().split(","))
    B, H, S = int(args["B"]), int(args["H"]), int(args["S"])
    scale = float(args["sm_scale"])
    causal = "causal" in kernel
    t = {}
    D = np.load(d + "/Q.npy").size // (B * H * S)
    for n in "QKV":
        bits = np.load(d + "/%s.npy" % n).view(np.int16).reshape(B, H, S, D)
        t[n] = torch.from_numpy(bits.copy()).cuda().view(torch.bfloat16)
    t["O"] = torch.full((B, H, S, D), -1, dtype=torch.int16, device="cuda").view(torch.bfloat16)
    t["L"] = torch.full((B, H, S), float("nan"), dtype=torch.float32, device="cuda")
    run = launcher(abi, launch, t, {"B": B, "H": H, "S": S}, {"sm_scale": scale})
    run()
    torch.cuda.synchronize()
    got_o = t["O"].view(torch.int16).cpu().numpy().view(np.uint16)
    want_o = np.load(d + "/O.npy").view(np.uint16).reshape(B, H, S, D)
    got_l = t["L"].cpu().numpy().view(np.uint32)
    if save != "-":
        np.save(save + "_O.npy", got_o)
        np.save(save + "_L.npy", got_l)
    want_l = np.load(d + "/L.npy").view(np.uint32).reshape(B, H, S)
    diff = np.argwhere(got_o != want_o)
    first = None
    if len(diff):
        i = tuple(int(x) for x in diff[0])
        first = {"at": list(i), "gpu": hex(int(got_o[i])), "sim": hex(int(want_o[i]))}
    # bf16 bits as ordered integers: the largest difference in units of the last place.
    def ordered(u):
        s = u.astype(np.int32)
        return np.where(s & 0x8000, 0x8000 - (s & 0x7FFF), 0x8000 + s)
    ulps = int(np.abs(ordered(got_o) - ordered(want_o)).max())
    ref_o, ref_l = reference(t["Q"], t["K"], t["V"], scale, causal)
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        sd = torch.nn.functional.scaled_dot_product_attention(t["Q"], t["K"], t["V"],
                                                              is_causal=causal, scale=scale)
    err = (t["O"].double() - ref_o).abs().max().item()
    sd_err = (sd.double() - ref_o).abs().max().item()
    l_err = (t["L"].double() - ref_l).abs().max().item()
    print(json.dumps({"case": d.rstrip("/").split("/")[-1], "kernel": kernel, "args": args,
                      "gpu": torch.cuda.get_device_name(),
                      "O_bit_identical": int((got_o == want_o).sum()), "O_compared": int(got_o.size),
                      "O_max_ulp_diff": ulps, "O_first_difference": first,
                      "L_bit_identical": int((got_l == want_l).sum()), "L_compared": int(got_l.size),
                      "O_max_abs_err_vs_f64": err, "cudnn_O_max_abs_err_vs_f64": sd_err,
                      "L_max_abs_err_vs_f64": l_err,
                      # The GPU's bits (little-endian bytes, hex), to commit as the
                      # hardware dump when the run cannot return files.
                      "O_hex": got_o.tobytes().hex() if save == "-" else None,
                      "L_hex": got_l.tobytes().hex() if save == "-" else None}), flush=True)


def timing(S, causal, variants):
    D, H = int(os.environ.get("ATTN_D", "128")), 16
    B = max(1, 16384 // S)
    torch.manual_seed(0)
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    scale = 1.0 / math.sqrt(D)
    fns, outs = {}, {}
    for label, lib_path, kernel in variants:
        abi, launch = load_lib(lib_path, kernel)
        o = torch.full_like(q, float("nan"))
        lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
        outs[label] = o
        fns[label] = launcher(abi, launch, {"Q": q, "K": k, "V": v, "O": o, "L": lse},
                              {"B": B, "H": H, "S": S}, {"sm_scale": scale})

    def sdpa(backend, key):
        def f():
            with sdpa_kernel([backend]):
                outs[key] = torch.nn.functional.scaled_dot_product_attention(
                    q, k, v, is_causal=causal, scale=scale)
        return f
    fns["cudnn"] = sdpa(SDPBackend.CUDNN_ATTENTION, "cudnn")
    fns["flash"] = sdpa(SDPBackend.FLASH_ATTENTION, "flash")
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")

    def time_one(fn):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        return s.elapsed_time(e)
    avail = {}
    for name, fn in fns.items():
        try:
            for _ in range(5):
                fn()
            torch.cuda.synchronize()
            avail[name] = fn
        except Exception as ex:  # a backend torch refuses here
            print(json.dumps({"S": S, "causal": causal, "skip": name, "why": str(ex)[:200]}))
    times = {n: [] for n in avail}
    order = list(avail)
    for i in range(int(os.environ.get("ATTN_REPS", "20"))):
        for n in order[i % len(order):] + order[:i % len(order)]:
            times[n].append(time_one(avail[n]))
    flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
    res = {"S": S, "B": B, "H": H, "D": D, "causal": causal, "gpu": torch.cuda.get_device_name()}
    for n, ts in times.items():
        res[n + "_ms"] = round(statistics.median(ts), 4)
        res[n + "_tflops"] = round(flops / statistics.median(ts) / 1e9, 1)
    first = variants[0][0]
    for label, _, _ in variants:
        if label not in times:
            continue
        o = outs[label]
        if "cudnn" in times:
            res[label + "_x_cudnn"] = round(res["cudnn_ms"] / res[label + "_ms"], 3)
            res[label + "_maxdiff_cudnn"] = (o.float() - outs["cudnn"].float()).abs().max().item()
        if "flash" in times:
            res[label + "_x_flash"] = round(res["flash_ms"] / res[label + "_ms"], 3)
        if label != first:
            res[label + "_bits_equal_" + first] = int((o.view(torch.int16) ==
                                                      outs[first].view(torch.int16)).sum().item())
    res["elements"] = outs[first].numel()
    print(json.dumps(res), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "--time":
        variants = [(v.split("=")[0],) + tuple(v.split("=")[1].split(":")) for v in sys.argv[4:]]
        for S in sys.argv[2].split(","):
            timing(int(S), sys.argv[3] == "causal", variants)
    else:
        for i in range(1, len(sys.argv) - 3, 4):
            case(*sys.argv[i:i + 4])
