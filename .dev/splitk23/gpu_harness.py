"""What the GPU harnesses share (GPU machine only): the launch of a lowered
kernel through its ctypes entry point, CUDA-event timing after an L2 flush,
and the Triton RMSNorm that RMSNorm kernels are compared with.

Used by codegen/bench.py (`tilescope bench`), codegen/devbench.py (`tilescope
bench --devices N`), bench/rmsnorm/bench_rms.py,
scripts/model/calib.py and tests/ptx/sources/perf_1024.py. A script that is
copied into a flat device folder finds this file beside it: copy it along
(bench/rmsnorm/build_run2.sh, scripts/portable do); in the source tree each
of them also looks in codegen/.

Every timing flushes L2 (a 256 MiB write) before each timed call, so each
call reads its inputs from DRAM, and times one call between two CUDA events.
Candidates are timed in alternating or rotating order in the same process,
so that all see the same clocks: timed one after the other, the first sees a
GPU still ramping up from idle.
"""
import ctypes
import statistics

import torch

FLUSH_BYTES = 256 * 1024 * 1024
_flush = None


def flush_l2():
    global _flush
    if _flush is None:
        _flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    _flush.zero_()


def time_one(fn, sleep_cycles=0, before=None, flush=True, calls=1):
    """One timed call after an L2 flush, in ms (CUDA events). With
    sleep_cycles > 0 the GPU sleeps that long after the flush
    (torch.cuda._sleep), so that the host has enqueued the call before the
    start event is reached: the interval is then GPU time only, not the
    host's launch overhead. `before`, when given, is enqueued after the flush
    and before the start event: the device barrier with which every process
    of a devices(N) kernel starts the timed call together (codegen/devbench.py).
    flush=False keeps L2 as the previous call left it; calls > 1 times that
    many calls back to back between the events and returns the time a call."""
    if flush:
        flush_l2()
    if sleep_cycles:
        torch.cuda._sleep(sleep_cycles)
    if before is not None:
        before()
    s = torch.cuda.Event(enable_timing=True)
    e = torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(calls):
        fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e) / calls


def _warm(fns, warmup):
    for _ in range(warmup):
        for fn in fns:
            fn()
    torch.cuda.synchronize()


def _spread(t):
    return statistics.median(t), min(t), max(t)


def pair_times(ours, baseline, warmup=10, reps=50, before=None):
    """Every timed ms of `ours` and of `baseline`, timed alternately (ours
    first in even rounds, the baseline first in odd ones); `before`: time_one's.
    Without a baseline (None), the times of `ours` alone and an empty list."""
    _warm((ours,) if baseline is None else (ours, baseline), warmup)
    t_ours, t_base = [], []
    for i in range(reps):
        if baseline is None:
            t_ours.append(time_one(ours, before=before))
        elif i % 2 == 0:
            t_ours.append(time_one(ours, before=before))
            t_base.append(time_one(baseline, before=before))
        else:
            t_base.append(time_one(baseline, before=before))
            t_ours.append(time_one(ours, before=before))
    return t_ours, t_base


def time_pair(ours, baseline, warmup=10, reps=50, before=None):
    """Median, min and max ms of `ours` and of `baseline`, timed alternately
    (ours first in even rounds, the baseline first in odd ones); `before`:
    time_one's."""
    t_ours, t_base = pair_times(ours, baseline, warmup, reps, before)
    return _spread(t_ours), _spread(t_base)


def time_rotating(fns, warmup=5, reps=30):
    """Median, min and max ms of each named function, timed in rotating order
    (round i starts with function i mod n)."""
    _warm(fns.values(), warmup)
    names = list(fns)
    times = {n: [] for n in names}
    for i in range(reps):
        for n in names[i % len(names):] + names[:i % len(names)]:
            times[n].append(time_one(fns[n]))
    return {n: _spread(t) for n, t in times.items()}


def round_robin(fns, reps, warmup=3, sleep_cycles=0):
    """Median µs of each named function, timed round-robin: in the given
    order in even rounds, reversed in odd ones (sleep_cycles: time_one's)."""
    _warm(fns.values(), warmup)
    names = list(fns)
    t = {n: [] for n in names}
    for i in range(reps):
        order = names if i % 2 == 0 else names[::-1]
        for n in order:
            t[n].append(time_one(fns[n], sleep_cycles))
    return {n: statistics.median(v) * 1000.0 for n, v in t.items()}


def bind_launch(launch, ptrs, symbols, scalars, stream, what="launch failed"):
    """A call of a lowered kernel's tilescope_launch_K (a ctypes function of
    four pointers: tensors, int64 sizes, double scalars, stream) that raises
    RuntimeError("WHAT: cudaError N") when the launch fails ("cudaError N"
    when WHAT is empty)."""
    prefix = f"{what}: " if what else ""

    def run():
        rc = launch(ptrs, symbols, scalars, ctypes.c_void_p(stream))
        if rc != 0:
            raise RuntimeError(f"{prefix}cudaError {rc}")

    return run


def rmsnorm_case(r, h, eps):
    """Inputs of an RMSNorm timing at R x H (seeded by R + H): bf16 X [R, H]
    and W [H] from randn, an empty Y, the rows whose output is checked (the
    first, the last and 254 random ones) and their float64 reference."""
    torch.manual_seed(r + h)
    x = torch.randn(r, h, device="cuda", dtype=torch.float32).to(torch.bfloat16)
    w = torch.randn(h, device="cuda", dtype=torch.float32).to(torch.bfloat16)
    y = torch.empty_like(x)
    rows = torch.unique(torch.cat([torch.tensor([0, r - 1]), torch.randint(0, r, (254,))])).cuda()
    xs = x[rows].double()
    ref = xs * torch.rsqrt((xs * xs).mean(dim=1, keepdim=True) + eps) * w.double()
    return x, w, y, rows, ref


def checked_run(run, y, rows, ref):
    """One call of `run` with Y poisoned first (all bits set: NaN in bf16):
    {"error": why} when it raises (a launch the sizes refuse), else
    {"unwritten": elements of Y left NaN, "rel_err": the relative error of
    the checked rows against `ref`} (rmsnorm_case's rows and reference)."""
    y.view(torch.int16).fill_(-1)
    try:
        run()
        torch.cuda.synchronize()
    except Exception as ex:
        return {"error": str(ex)}
    return {"unwritten": int(torch.isnan(y.float()).sum().item()),
            "rel_err": ((y[rows].double() - ref).norm() / ref.norm()).item()}


_triton_rmsnorm_kernel = None


def _compile_triton_rmsnorm():
    import triton
    import triton.language as tl

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

    return rmsnorm_kernel, triton.next_power_of_2


def triton_rmsnorm(x, w, y, eps, num_warps=None):
    """Triton's RMSNorm: y = x / sqrt(mean(x^2) + eps) * w over each row of
    the bf16 [R, H] x, one row a program (BLOCK = H rounded up to a power of
    two), num_warps 8 for BLOCK >= 2048 and 4 below unless given. Returns the
    compiled kernel (its .asm["ptx"]). Triton is imported on first use only:
    the GEMM and attention harnesses run without it."""
    global _triton_rmsnorm_kernel
    if _triton_rmsnorm_kernel is None:
        _triton_rmsnorm_kernel = _compile_triton_rmsnorm()
    kernel, next_power_of_2 = _triton_rmsnorm_kernel
    r, h = x.shape
    block = next_power_of_2(h)
    if num_warps is None:
        num_warps = 8 if block >= 2048 else 4
    return kernel[(r,)](x, w, y, h, eps, BLOCK=block, num_warps=num_warps)
