#!/usr/bin/env python3
"""RMSNorm kernels of kernels/rmsnorm_family.tile against Triton's RMSNorm
(the kernel codegen/bench.py times) at its best num_warps, in one process.

Usage: bench_rms.py LIB.so KERNELS.txt OUTDIR DEADLINE_S [--ef EFLIB.so] [--sleep]
KERNELS.txt: lines 'H name' (name: tilescope_launch_<name> in LIB; H = 0: a
kernel for every H divisible by 1024). Harness as codegen/bench.py
(codegen/gpu_harness.py, copied beside this script in a device folder):
fresh randn inputs, output poisoned with NaN bits and checked fully written,
error against a float64 reference on sampled rows, CUDA events, 256 MiB L2
flush before every timed run, candidates timed round-robin so all see the
same clocks. Per shape a screening round of every candidate, then a final
round of our best and Triton's best. Writes OUTDIR/log.txt (progress) and
OUTDIR/results.json (rewritten after every shape).

Run 1 (docs/perf.md): no options. Run 2: --ef EFLIB.so --sleep, where
  --ef     EFLIB holds the same launchers (the evict-first twins of
           bench/rmsnorm/make_ef.py), shown as <name>_ef; the best twin joins
           the final round (rows gain ef_best and ratio_ef);
  --sleep  the GPU sleeps ~100 us after the L2 flush (torch.cuda._sleep), so
           the host has enqueued the timed launch before the start event is
           reached: the interval is GPU time, not Python launch overhead
           (Triton's launcher is slower than a ctypes call); 1024x1024's final
           round is also timed without it (rows gain final_nosleep_us)."""
import argparse
import ctypes
import json
import os
import sys
import time

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("lib")
ap.add_argument("kernels")
ap.add_argument("outdir")
ap.add_argument("deadline", type=float)
ap.add_argument("--ef", default="", help="library of the evict-first twins")
ap.add_argument("--sleep", action="store_true", help="GPU sleep after the L2 flush")
a = ap.parse_args()

import torch  # noqa: E402
import triton  # noqa: E402

# codegen/gpu_harness.py: beside this script in a device folder, else in the source tree.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "codegen"))
from gpu_harness import (bind_launch, checked_run, rmsnorm_case, round_robin,  # noqa: E402
                         triton_rmsnorm)

T0 = time.monotonic()
SLEEP_CYCLES = 200000 if a.sleep else 0
os.makedirs(a.outdir, exist_ok=True)
LOG = open(os.path.join(a.outdir, "log.txt"), "a")


def log(msg):
    LOG.write(f"[{time.monotonic() - T0:7.1f}s] {msg}\n")
    LOG.flush()


def triton_run(nw):
    return lambda x, w, y, eps: triton_rmsnorm(x, w, y, eps, num_warps=nw)


libs = [(ctypes.CDLL(a.lib), "")]
if a.ef:
    libs.append((ctypes.CDLL(a.ef), "_ef"))
ours = {}
for line in open(a.kernels):
    if not line.strip():
        continue
    h, name = line.split()
    for lib, suffix in libs:
        f = getattr(lib, "tilescope_launch_" + name)  # the same launcher name in both
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_void_p] * 4
        ours.setdefault(int(h), []).append((name + suffix, f))

NW = {512: [1, 2, 4], 1024: [1, 2, 4, 8], 2048: [2, 4, 8], 4096: [4, 8, 16], 8192: [4, 8, 16],
      16384: [8, 16, 32]}
SHAPES = [(1024, 1024), (8192, 8192), (16384, 2048), (4096, 4096)]
for h in (512, 1024, 2048, 4096, 8192, 16384):
    for r in (1024, 4096, 16384, 65536):
        if (r, h) not in SHAPES:
            SHAPES.append((r, h))

results = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "triton": triton.__version__, "shapes": []}
eps = 1e-6
stream = torch.cuda.current_stream().cuda_stream
for (r, h) in SHAPES:
    if time.monotonic() - T0 > a.deadline:
        log(f"deadline: stop before {r}x{h}")
        break
    X, W, Y, rows, ref = rmsnorm_case(r, h, eps)
    ptrs = (ctypes.c_void_p * 3)(X.data_ptr(), W.data_ptr(), Y.data_ptr())
    syms = (ctypes.c_int64 * 2)(r, h)
    scal = (ctypes.c_double * 1)(eps)
    fns, info = {}, {}
    names = list(ours.get(h, []))
    if h % 1024 == 0:
        names += [(n, f) for n, f in ours.get(0, [])]
    for name, f in names:
        run = bind_launch(f, ptrs, syms, scal, stream, what="")
        info[name] = checked_run(run, Y, rows, ref)
        if info[name].get("unwritten") == 0 and info[name]["rel_err"] < 1e-2:
            fns[name] = run
    for nw in NW[h]:
        try:
            fn = triton_run(nw)
            Y.view(torch.int16).fill_(-1)
            fn(X, W, Y, eps)
            torch.cuda.synchronize()
            err = ((Y[rows].double() - ref).norm() / ref.norm()).item()
            info[f"triton_nw{nw}"] = {"rel_err": err}
            fns[f"triton_nw{nw}"] = (lambda fn=fn: fn(X, W, Y, eps))
        except Exception as ex:
            info[f"triton_nw{nw}"] = {"error": str(ex)[:200]}
    big = r * h >= 64 * 1024 * 1024
    screen = round_robin(fns, 10 if big else 20, sleep_cycles=SLEEP_CYCLES)
    plain = [n for n in screen if not n.startswith("triton") and not n.endswith("_ef")]
    ef = [n for n in screen if n.endswith("_ef")]
    ours_best = min(plain, key=screen.get, default=None)
    ef_best = min(ef, key=screen.get, default=None)
    tri_best = min((n for n in screen if n.startswith("triton")), key=screen.get, default=None)
    final, final_nosleep = {}, {}
    if ours_best and tri_best:
        pick = {n: fns[n] for n in (ours_best, ef_best, tri_best) if n}
        final = round_robin(pick, 40 if big else 100, sleep_cycles=SLEEP_CYCLES)
        if a.sleep and (r, h) == (1024, 1024):
            final_nosleep = round_robin(pick, 100)
    if tri_best and f"{h}_{tri_best}" not in results.setdefault("triton_ptx", {}):
        try:
            k = triton_run(int(tri_best[len("triton_nw"):]))(X, W, Y, eps)
            results["triton_ptx"][f"{h}_{tri_best}"] = k.asm["ptx"]
        except Exception as ex:
            results["triton_ptx"][f"{h}_{tri_best}"] = "unavailable: " + str(ex)[:200]
    row = {"R": r, "H": h, "screen_us": screen, "check": info, "best": ours_best}
    if a.ef:
        row["ef_best"] = ef_best
    row.update({"triton_best": tri_best, "final_us": final})
    if a.sleep:
        row["final_nosleep_us"] = final_nosleep
    row["ratio"] = final[tri_best] / final[ours_best] if final else None
    if a.ef:
        row["ratio_ef"] = final[tri_best] / final[ef_best] if final and ef_best else None
    results["shapes"].append(row)
    ef_text = f"{ef_best} {final.get(ef_best, 0):.2f} us, " if a.ef else ""
    ef_ratio = f", ef {row['ratio_ef'] or 0:.3f}" if a.ef else ""
    log(f"{r}x{h}: best {ours_best} {final.get(ours_best, 0):.2f} us, {ef_text}{tri_best} "
        f"{final.get(tri_best, 0):.2f} us, ratio {row['ratio'] or 0:.3f}{ef_ratio}")
    with open(os.path.join(a.outdir, "results.json"), "w") as fh:
        json.dump(results, fh, indent=1)
    del X, Y, W, ptrs
    torch.cuda.empty_cache()
log("done")
