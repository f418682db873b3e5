#!/usr/bin/env python3
"""RMSNorm at 1024 x 1024 (issue 19 item 7) and the shapes issue 15's table
missed, against Triton's RMSNorm in one process.

Usage: bench_h1024.py DIR OUTDIR DEADLINE_S
DIR holds diag.so (bench/rmsnorm/h1024/diag.cu: floors and hand-written
variants, launchers diag_NAME), fam.so with fam.txt (lines 'H name': lowered
points of kernels/rmsnorm_family.tile, launchers tilescope_launch_NAME) and
gpu_harness.py (codegen/). Harness: codegen/gpu_harness.py's, as
bench/rmsnorm/bench_rms.py uses it (256 MiB L2 flush, one call between two
CUDA events, candidates round-robin in one process, medians), at 1024 x 1024
in four modes:
  cold_sleep  the L2 flush, a GPU sleep of 200000 cycles, then the timed call
              (bench_rms.py --sleep: docs/perf.md's RMSNorm rows);
  cold        the flush, the timed call (the host's launch inside the interval);
  warm_sleep  no flush (X, W and Y in L2 from the previous call), the sleep;
  b2b         no flush, 20 calls back to back between two events, per call (a
              sleep of 2e6 cycles first, so that the host has enqueued all 20).
Then the other shapes in cold_sleep mode with every family point of their H.
With DIR/sweep.txt (lines 'R H', issue 15's sweep), 1024 x 1024 is timed in
cold_sleep and b2b modes only, with Triton's RMSNorm also launched with
programmatic dependent launch (triton_pdl_nwN), and the shapes are those of
sweep.txt, in its order;
DIR/diag.txt (names, one a line) then limits the diag_ variants.
Writes OUTDIR/log.txt and OUTDIR/results.json (after every step)."""
import ctypes
import json
import os
import statistics
import sys
import time

import torch
import triton

here = sys.argv[1]
sys.path.insert(0, here)
from gpu_harness import (bind_launch, checked_run, rmsnorm_case, time_one,  # noqa: E402
                         triton_rmsnorm)

outdir, deadline = sys.argv[2], float(sys.argv[3])
T0 = time.monotonic()
os.makedirs(outdir, exist_ok=True)
LOG = open(os.path.join(outdir, "log.txt"), "a")
SLEEP = 200000
FLOORS = ("diag_empty1", "diag_empty_grid", "diag_copy", "diag_read", "diag_write")


def log(msg):
    LOG.write(f"[{time.monotonic() - T0:6.1f}s] {msg}\n")
    LOG.flush()


def fn_of(lib, sym):
    f = getattr(lib, sym)
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_void_p] * 4
    return f


diag = ctypes.CDLL(os.path.join(here, "diag.so"))
DIAG = ["empty1", "empty_grid", "copy", "read", "write", "cta128", "cta128_l256", "warp1",
        "warp2", "warp4", "warp8", "pair1", "pair2", "bulk", "cta128_pdl"]
SWEEP = os.path.join(here, "sweep.txt")
# DIR/reps.txt: a whole multiplier of the sweep's runs per shape.
SCALE = int(open(os.path.join(here, "reps.txt")).read()) if os.path.exists(
    os.path.join(here, "reps.txt")) else 1
if os.path.exists(os.path.join(here, "diag.txt")):
    DIAG = [n.strip() for n in open(os.path.join(here, "diag.txt")) if n.strip()]
# fam.so / fam.txt, and fam2.so / fam2.txt where present (a second lowering,
# e.g. `tilescope lower --pdl`): lines 'H name'.
FAM, FAMLIB = {}, {}
for lib in ("fam", "fam2"):
    if not os.path.exists(os.path.join(here, lib + ".so")):
        continue
    handle = ctypes.CDLL(os.path.join(here, lib + ".so"))
    for line in open(os.path.join(here, lib + ".txt")):
        if line.strip():
            h, name = line.split()
            FAM.setdefault(int(h), []).append(name)
            FAMLIB[name] = handle
NW = {512: [1, 2, 4], 1024: [1, 2, 4, 8], 2048: [1, 2, 4, 8], 4096: [4, 8, 16],
      8192: [4, 8, 16], 16384: [8, 16, 32]}

results = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "triton": triton.__version__, "shapes": []}


def save():
    with open(os.path.join(outdir, "results.json"), "w") as fh:
        json.dump(results, fh, indent=1)


MODES = {
    "cold_sleep": lambda fn: time_one(fn, SLEEP),
    "cold": lambda fn: time_one(fn, 0),
    "warm_sleep": lambda fn: time_one(fn, SLEEP, flush=False),
    # ~1 ms of sleep: every launch is enqueued before the start event
    "b2b": lambda fn: time_one(fn, 10 * SLEEP, flush=False, calls=20),
}


def rr(fns, mode, reps):
    """Median and min µs per candidate, round-robin (reversed on odd rounds)."""
    for fn in fns.values():
        fn()
    torch.cuda.synchronize()
    names = list(fns)
    t = {n: [] for n in names}
    for i in range(reps):
        for n in (names if i % 2 == 0 else names[::-1]):
            t[n].append(MODES[mode](fns[n]))
    return {n: [round(statistics.median(v) * 1000, 3), round(min(v) * 1000, 3)]
            for n, v in t.items()}


def setup(r, h):
    eps = 1e-6
    X, W, Y, rows, ref = rmsnorm_case(r, h, eps)
    ptrs = (ctypes.c_void_p * 3)(X.data_ptr(), W.data_ptr(), Y.data_ptr())
    syms = (ctypes.c_int64 * 2)(r, h)
    scal = (ctypes.c_double * 1)(eps)
    stream = torch.cuda.current_stream().cuda_stream
    cands = []
    if h == 1024:
        cands += [("diag_" + n, fn_of(diag, "diag_" + n)) for n in DIAG]
    cands += [(n, fn_of(FAMLIB[n], "tilescope_launch_" + n)) for n in FAM.get(h, [])]
    fns, info = {}, {}
    for name, f in cands:
        run = bind_launch(f, ptrs, syms, scal, stream, what="")
        info[name] = checked_run(run, Y, rows, ref)
        if name in FLOORS and "error" not in info[name]:
            fns[name] = run  # floors: not an RMSNorm, timed as they are
        elif info[name].get("unwritten") == 0 and info[name]["rel_err"] < 1e-2:
            fns[name] = run
    tritons = [(f"triton_nw{nw}", lambda nw=nw: triton_rmsnorm(X, W, Y, eps, num_warps=nw))
               for nw in NW[h]]
    if (r, h) == (1024, 1024) and os.path.exists(SWEEP):
        tritons += [(f"triton_pdl_nw{nw}", lambda nw=nw: triton_rmsnorm_pdl(X, W, Y, eps, nw))
                    for nw in (1, 4)]
    for name, call in tritons:
        try:
            Y.view(torch.int16).fill_(-1)
            call()
            torch.cuda.synchronize()
            err = ((Y[rows].double() - ref).norm() / ref.norm()).item()
            info[name] = {"rel_err": err}
            fns[name] = call
        except Exception as ex:
            info[name] = {"error": str(ex)[:300]}
    return fns, info, (X, W, Y, ptrs)


_pdl_kernel = None


def triton_rmsnorm_pdl(x, w, y, eps, num_warps):
    """codegen/gpu_harness.py's Triton RMSNorm with programmatic dependent
    launch (Triton's tutorial 11): griddepcontrol.wait before the loads,
    launch_dependents after them, launched with launch_pdl=True."""
    global _pdl_kernel
    if _pdl_kernel is None:
        import triton.language as tl

        @triton.jit
        def rmsnorm_pdl_kernel(X, W, Y, H, eps, BLOCK: tl.constexpr):
            tl.extra.cuda.gdc_wait()
            row = tl.program_id(0)
            cols = tl.arange(0, BLOCK)
            mask = cols < H
            x = tl.load(X + row * H + cols, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
            tl.extra.cuda.gdc_launch_dependents()
            ms = tl.sum(x * x, axis=0) / H
            y = x * tl.rsqrt(ms + eps) * w
            tl.store(Y + row * H + cols, y.to(tl.bfloat16), mask=mask)

        _pdl_kernel = rmsnorm_pdl_kernel
    r, h = x.shape
    return _pdl_kernel[(r,)](x, w, y, h, eps, BLOCK=triton.next_power_of_2(h),
                             num_warps=num_warps, launch_pdl=True)


def ratios(t):
    tri = min((v[0] for n, v in t.items() if n.startswith("triton")), default=None)
    return {n: round(tri / v[0], 3) for n, v in t.items()} if tri else {}


log(f"{results['gpu']}, torch {results['torch']}, triton {results['triton']}")
fns, info, keep = setup(1024, 1024)
row = {"R": 1024, "H": 1024, "check": info, "modes": {}}
results["shapes"].append(row)
MODES_1024 = (("cold_sleep", 200), ("cold", 60), ("warm_sleep", 60), ("b2b", 30))
for mode, reps in (MODES_1024[0], MODES_1024[3]) if os.path.exists(SWEEP) else MODES_1024:
    if time.monotonic() - T0 > deadline:
        log(f"deadline: stop before mode {mode}")
        break
    t = rr(fns, mode, reps)
    row["modes"][mode] = {"us": t, "ratio_to_best_triton": ratios(t)}
    save()
    log(f"1024x1024 {mode} ({reps} reps): " +
        ", ".join(f"{n} {v[0]:.3f}" for n, v in sorted(t.items(), key=lambda kv: kv[1][0])))
del fns, keep
torch.cuda.empty_cache()

SHAPES = [(4096, 1024), (1024, 2048), (4096, 8192), (1024, 512), (16384, 1024), (4096, 2048),
          (1024, 4096)]
if os.path.exists(SWEEP):
    SHAPES = [tuple(int(v) for v in line.split()) for line in open(SWEEP) if line.strip()]
for (r, h) in SHAPES:
    if time.monotonic() - T0 > deadline:
        log(f"deadline: stop before {r}x{h}")
        break
    fns, info, keep = setup(r, h)
    t = rr(fns, "cold_sleep", SCALE * (20 if r * h >= 256 * 1024 * 1024 else
                                       40 if r * h >= 16 * 1024 * 1024 else 100))
    results["shapes"].append({"R": r, "H": h, "check": info,
                              "modes": {"cold_sleep": {"us": t, "ratio_to_best_triton": ratios(t)}}})
    save()
    log(f"{r}x{h} cold_sleep: " +
        ", ".join(f"{n} {v[0]:.3f}" for n, v in sorted(t.items(), key=lambda kv: kv[1][0])))
    del fns, keep
    torch.cuda.empty_cache()
log("done")
