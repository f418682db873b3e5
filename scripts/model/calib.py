#!/usr/bin/env python3
"""Times lowered GEMM points against cuBLAS on the GPU (device machine only).

Loads every pNN.so of DIR (built from pNN.cu by run.sh) and, for each shape,
checks each point's output against an fp32 reference (every element written,
relative error < 1e-2) and times it with CUDA events after an L2 flush, as
codegen/bench.py does, alternating with cuBLAS (torch.matmul) so that both see
the same clocks. Writes one CSV row per (point, shape) the point's where
clause admits: name, point, M, N, K, ms (median), ms_min, cublas_ms (median of
the same rounds), ok, rel_err.

With --pairs FILE (lines NAME,MxNxK) only those pairs run (the sweep of a
tuning table: per shape, the point the table picks).

With --sleep-cycles N the GPU sleeps N cycles after each flush, before the
start event (gpu_harness.time_one's sleep), so that a host slowed by other
jobs on the machine has enqueued the call before its interval begins.

Usage: calib.py DIR SHAPES_FILE OUT.csv [--reps N] [--pairs FILE] [--sleep-cycles N]
"""
import argparse
import csv
import ctypes
import json
import os
import sys

import torch

# The timing of `tilescope bench` (codegen/bench.py): an L2 flush before every
# timed run, the point and cuBLAS alternating.
# codegen/gpu_harness.py: beside this script in a device folder, else in the source tree.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "codegen"))
from gpu_harness import bind_launch, time_pair  # noqa: E402


def admits(point, m, n, k):
    """The family's where clause (kernels/gemm_bf16_sm90_family.tile) at a shape."""
    if n % 8 or k % 8:
        return False
    split = int(point.get("SPLIT", "1"))
    if split > 1 and k % (64 * split):
        return False
    if point["ORDER"] == "grouped":
        bm = int(point["BM"])
        return m >= 8 * bm and m % (8 * bm) == 0
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("shapes")
    ap.add_argument("out")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--sleep-cycles", type=int, default=0)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--pairs", default="")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False

    points = []
    with open(os.path.join(a.dir, "points.csv")) as f:
        for row in csv.DictReader(f):
            so = os.path.join(a.dir, row["name"] + ".so")
            if not os.path.exists(so):
                print(f"missing {so} (did nvcc fail?)", file=sys.stderr)
                continue
            lib = ctypes.CDLL(so)
            launch = getattr(lib, "tilescope_launch_" + row["name"])
            launch.restype = ctypes.c_int
            launch.argtypes = [ctypes.c_void_p] * 4
            getattr(lib, "tilescope_abi_" + row["name"]).restype = ctypes.c_char_p
            abi = json.loads(getattr(lib, "tilescope_abi_" + row["name"])().decode())
            values = dict(kv.split("=") for kv in row["point"].split(","))
            points.append((row["name"], row["point"], values, launch, abi))

    shapes = []
    with open(a.shapes) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line:
                shapes.append(tuple(int(x) for x in line.split("x")))

    pairs = None
    if a.pairs:
        pairs = set()
        with open(a.pairs) as f:
            for line in f:
                line = line.split("#")[0].strip()
                if line:
                    name, shape = line.split(",")
                    pairs.add((name.strip(), tuple(int(x) for x in shape.strip().split("x"))))

    gpu = torch.cuda.get_device_name()
    out = open(a.out, "w", newline="")
    w = csv.writer(out)
    w.writerow(["name", "point", "M", "N", "K", "ms", "ms_min", "cublas_ms", "ok", "rel_err", "gpu"])
    stream = torch.cuda.current_stream().cuda_stream
    for (m, n, k) in shapes:
        torch.manual_seed(0)
        A = torch.randn(m, k, device="cuda").to(torch.bfloat16)
        B = torch.randn(n, k, device="cuda").to(torch.bfloat16)
        ref = A.float() @ B.float().t()
        ref_norm = ref.norm().item()
        C = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        cub = lambda: torch.matmul(A, B.t())
        for _ in range(a.warmup):
            cub()
        for name, text, values, launch, abi in points:
            if not admits(values, m, n, k):
                continue
            if pairs is not None and (name, (m, n, k)) not in pairs:
                continue
            syms = {"M": m, "N": n, "K": k}
            ptrs = (ctypes.c_void_p * 3)(A.data_ptr(), B.data_ptr(), C.data_ptr())
            sym_vals = (ctypes.c_int64 * len(abi["symbols"]))(*[syms[s] for s in abi["symbols"]])
            scal = (ctypes.c_double * 1)(0.0)
            run = bind_launch(launch, ptrs, sym_vals, scal, stream, what=f"{name}: launch failed")
            C.view(torch.int16).fill_(-1)
            try:
                run()
                torch.cuda.synchronize()
            except RuntimeError as e:
                print(e, file=sys.stderr)
                w.writerow([name, text, m, n, k, "", "", "", False, "", gpu])
                continue
            unwritten = int(torch.isnan(C.float()).sum().item())
            err = ((C.float() - ref).norm().item() / ref_norm)
            ok = unwritten == 0 and err < 1e-2
            sleep = (lambda: torch.cuda._sleep(a.sleep_cycles)) if a.sleep_cycles else None
            (t_med, t_min, _), (tb_med, _, _) = time_pair(run, cub, warmup=a.warmup,
                                                          reps=a.reps, before=sleep)
            w.writerow([name, text, m, n, k, f"{t_med:.5f}", f"{t_min:.5f}", f"{tb_med:.5f}", ok,
                        f"{err:.2e}", gpu])
            out.flush()
        print(f"shape {m}x{n}x{k} done", flush=True)
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
