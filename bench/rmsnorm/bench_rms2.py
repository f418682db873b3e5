#!/usr/bin/env python3
"""Run 2: the named points of kernels/rmsnorm_family.tile (LIB, kernel names
rf_POINT) and the same kernels with evict-first X loads and Y stores (EFLIB,
rf_POINT_ef, the lowered CUDA edited) against Triton's RMSNorm (the kernel
codegen/bench.py times) at its best num_warps, in one process.

Usage: bench_rms2.py LIB.so EFLIB.so KERNELS.txt OUTDIR DEADLINE_S
KERNELS.txt: lines 'H name' (tilescope_launch_<name> in LIB and in EFLIB, shown as <name>_ef).
Unlike run 1, the GPU sleeps ~100 us after the L2 flush (torch.cuda._sleep),
so the host has enqueued the timed launch before the start event is reached:
the interval is GPU time, not Python launch overhead (Triton's launcher is
slower than a ctypes call); 1024x1024 is also timed without it, as run 1. Harness as
codegen/bench.py: fresh randn inputs, output poisoned with NaN bits and checked
fully written, error against a float64 reference on sampled rows, CUDA events,
256 MiB L2 flush before every timed run, candidates timed round-robin so all
see the same clocks. Writes OUTDIR/log.txt (progress) and OUTDIR/results.json
(rewritten after every shape)."""
import ctypes, json, os, statistics, sys, time
import torch
import triton
import triton.language as tl

T0 = time.monotonic()
lib_path, ef_path, kfile, outdir = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
deadline = float(sys.argv[5])
os.makedirs(outdir, exist_ok=True)
LOG = open(os.path.join(outdir, "log.txt"), "a")


def log(msg):
    LOG.write(f"[{time.monotonic() - T0:7.1f}s] {msg}\n")
    LOG.flush()


@triton.jit
def rmsnorm_kernel(X, W, Y, H, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < H
    x = tl.load(X + row * H + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    ms = tl.sum(x * x, axis=0) / H
    y = x * tl.rsqrt(ms + eps) * w
    tl.store(Y + row * H + cols, y.to(tl.bfloat16), mask=mask)


def triton_run(nw):
    def run(x, w, y, eps):
        r, h = x.shape
        return rmsnorm_kernel[(r,)](x, w, y, h, eps, BLOCK=triton.next_power_of_2(h),
                                    num_warps=nw)
    return run


FLUSH = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")


SLEEP = True


def time_one(fn):
    FLUSH.zero_()
    if SLEEP:
        torch.cuda._sleep(200000)
    s = torch.cuda.Event(enable_timing=True)
    e = torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e)


def round_robin(fns, reps, warmup=3):
    for _ in range(warmup):
        for f in fns.values():
            f()
    torch.cuda.synchronize()
    names = list(fns)
    t = {n: [] for n in names}
    for i in range(reps):
        order = names if i % 2 == 0 else names[::-1]
        for n in order:
            t[n].append(time_one(fns[n]))
    return {n: statistics.median(v) * 1000.0 for n, v in t.items()}  # us


lib = ctypes.CDLL(lib_path)
eflib = ctypes.CDLL(ef_path)
ours = {}
for line in open(kfile):
    if not line.strip():
        continue
    h, name = line.split()
    for l, n in ((lib, name), (eflib, name + "_ef")):
        f = getattr(l, "tilescope_launch_" + name)  # the same launcher name in both
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_void_p] * 4
        ours.setdefault(int(h), []).append((n, f))

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
    if time.monotonic() - T0 > deadline:
        log(f"deadline: stop before {r}x{h}")
        break
    torch.manual_seed(r + h)
    X = torch.randn(r, h, device="cuda", dtype=torch.float32).to(torch.bfloat16)
    W = torch.randn(h, device="cuda", dtype=torch.float32).to(torch.bfloat16)
    Y = torch.empty_like(X)
    rows = torch.unique(torch.cat([torch.tensor([0, r - 1]), torch.randint(0, r, (254,))])).cuda()
    xs = X[rows].double()
    ref = xs * torch.rsqrt((xs * xs).mean(dim=1, keepdim=True) + eps) * W.double()
    ptrs = (ctypes.c_void_p * 3)(X.data_ptr(), W.data_ptr(), Y.data_ptr())
    syms = (ctypes.c_int64 * 2)(r, h)
    scal = (ctypes.c_double * 1)(eps)
    fns, info = {}, {}
    names = list(ours.get(h, []))
    for name, f in names:
        def run(f=f):
            rc = f(ptrs, syms, scal, ctypes.c_void_p(stream))
            if rc != 0:
                raise RuntimeError(f"cudaError {rc}")
        Y.view(torch.int16).fill_(-1)
        try:
            run()
            torch.cuda.synchronize()
        except Exception as ex:  # a launch the sizes refuse
            info[name] = {"error": str(ex)}
            continue
        unwritten = int(torch.isnan(Y.float()).sum().item())
        err = ((Y[rows].double() - ref).norm() / ref.norm()).item()
        info[name] = {"unwritten": unwritten, "rel_err": err}
        if unwritten == 0 and err < 1e-2:
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
    screen = round_robin(fns, 10 if big else 20)
    plain = [n for n in screen if not n.startswith("triton") and not n.endswith("_ef")]
    ef = [n for n in screen if n.endswith("_ef")]
    ours_best = min(plain, key=screen.get, default=None)
    ef_best = min(ef, key=screen.get, default=None)
    tri_best = min((n for n in screen if n.startswith("triton")), key=screen.get, default=None)
    final, final_nosleep = {}, {}
    if ours_best and tri_best:
        pick = {n: fns[n] for n in (ours_best, ef_best, tri_best) if n}
        final = round_robin(pick, 40 if big else 100)
        if (r, h) == (1024, 1024):
            SLEEP = False
            final_nosleep = round_robin(pick, 100)
            SLEEP = True
    if tri_best and f"{h}_{tri_best}" not in results.setdefault("triton_ptx", {}):
        try:
            k = triton_run(int(tri_best[len("triton_nw"):]))(X, W, Y, eps)
            results["triton_ptx"][f"{h}_{tri_best}"] = k.asm["ptx"]
        except Exception as ex:
            results["triton_ptx"][f"{h}_{tri_best}"] = "unavailable: " + str(ex)[:200]
    row = {"R": r, "H": h, "screen_us": screen, "check": info, "best": ours_best,
           "ef_best": ef_best, "triton_best": tri_best, "final_us": final,
           "final_nosleep_us": final_nosleep,
           "ratio": final[tri_best] / final[ours_best] if final else None,
           "ratio_ef": final[tri_best] / final[ef_best] if final and ef_best else None}
    results["shapes"].append(row)
    log(f"{r}x{h}: best {ours_best} {final.get(ours_best, 0):.2f} us, {ef_best} "
        f"{final.get(ef_best, 0):.2f} us, {tri_best} {final.get(tri_best, 0):.2f} us, ratio "
        f"{row['ratio'] or 0:.3f}, ef {row['ratio_ef'] or 0:.3f}")
    with open(os.path.join(outdir, "results.json"), "w") as fh:
        json.dump(results, fh, indent=1)
    del X, Y, W, ptrs
    torch.cuda.empty_cache()
log("done")
