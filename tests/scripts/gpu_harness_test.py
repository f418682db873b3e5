#!/usr/bin/env python3
"""codegen/gpu_harness.py's timing loops and launch wrapper, and bench.py's
result fields, checked on the CPU: a stand-in `torch` module records every
call (L2 flush, GPU sleep, event, synchronize) and hands out scripted event
times, so the order in which candidates are timed, the flush before each
timed call and the statistics can be checked exactly without a GPU.

Usage: gpu_harness_test.py REPO. Exit 0 when all hold, 1 otherwise.
"""
import ctypes
import os
import sys
import types

CALLS = []   # what the stand-in saw, in order
TIMES = []   # the elapsed ms the next events report, first first


class Event:
    def __init__(self, enable_timing=False):
        assert enable_timing

    def record(self):
        CALLS.append("record")

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        return TIMES.pop(0)


class Buffer:
    def __init__(self, n):
        self.n = n

    def zero_(self):
        CALLS.append(f"flush {self.n * 4}")


def fake_torch():
    t = types.ModuleType("torch")
    t.int32 = "int32"
    for name in ("bfloat16", "float16", "float32", "float8_e4m3fn"):
        setattr(t, name, name)
    t.empty = lambda n, dtype=None, device=None: Buffer(n)
    t.cuda = types.SimpleNamespace(
        Event=Event,
        synchronize=lambda: CALLS.append("sync"),
        _sleep=lambda cycles: CALLS.append(f"sleep {cycles}"))
    return t


def fn(name):
    return lambda: CALLS.append(name)


def timed_calls():
    """The names of the functions timed, in order (each flushed first)."""
    out, i = [], 0
    while i < len(CALLS):
        if CALLS[i].startswith("flush"):
            j = i + 1
            while CALLS[j].startswith("sleep"):
                j += 1
            assert CALLS[j] == "record" and CALLS[j + 2] == "record", CALLS[i:i + 5]
            out.append(CALLS[j + 1])
            i = j + 3
        else:
            i += 1
    return out


def main():
    if len(sys.argv) != 2:
        print("usage: gpu_harness_test.py REPO", file=sys.stderr)
        return 2
    sys.modules["torch"] = fake_torch()
    sys.path.insert(0, os.path.join(sys.argv[1], "codegen"))
    import gpu_harness as h
    import bench
    failures = []

    def expect(what, got, want):
        if got != want:
            failures.append(f"{what}: got {got!r}, want {want!r}")

    # time_pair: 2 warm-up rounds, then ours first in even rounds, the baseline first in odd ones.
    CALLS.clear()
    TIMES[:] = [1.0, 10.0, 12.0, 3.0, 2.0, 11.0]   # ours 1, base 10, base 12, ours 3, ours 2, base 11
    ours, base = h.time_pair(fn("ours"), fn("base"), warmup=2, reps=3)
    expect("time_pair warm-up", CALLS[:5], ["ours", "base", "ours", "base", "sync"])
    expect("time_pair order", timed_calls(), ["ours", "base", "base", "ours", "ours", "base"])
    expect("time_pair flush size", CALLS[5], f"flush {256 * 1024 * 1024}")
    expect("time_pair ours", ours, (2.0, 1.0, 3.0))
    expect("time_pair baseline", base, (11.0, 10.0, 12.0))
    expect("time_pair sleeps", [c for c in CALLS if c.startswith("sleep")], [])

    # time_rotating: round i starts with function i mod n.
    CALLS.clear()
    TIMES[:] = [float(i) for i in range(12)]
    t = h.time_rotating({"a": fn("a"), "b": fn("b"), "c": fn("c")}, warmup=1, reps=4)
    expect("time_rotating order", timed_calls(), list("abcbcacababc"))
    expect("time_rotating a", t["a"], (6.0, 0.0, 9.0))   # a timed at 0, 5, 7, 9

    # round_robin: given order in even rounds, reversed in odd ones; µs; the GPU sleep when asked.
    CALLS.clear()
    TIMES[:] = [0.001, 0.002, 0.004, 0.003, 0.005, 0.006]
    us = h.round_robin({"x": fn("x"), "y": fn("y")}, 3, warmup=1, sleep_cycles=200000)
    expect("round_robin order", timed_calls(), ["x", "y", "y", "x", "x", "y"])
    expect("round_robin us", {k: round(v, 6) for k, v in us.items()}, {"x": 3.0, "y": 4.0})
    expect("round_robin sleeps", CALLS.count("sleep 200000"), 6)
    CALLS.clear()
    TIMES[:] = [1.0, 1.0]
    h.round_robin({"x": fn("x")}, 2, warmup=0)
    expect("round_robin without sleep", [c for c in CALLS if c.startswith("sleep")], [])

    # bind_launch: the four arguments, the stream as a pointer; a failed launch raises.
    seen = []

    def launch(*args):
        seen.append(args)
        return len(seen) - 1   # 0 the first time (success), then 1

    run = h.bind_launch(launch, "P", "S", "D", 77, what="")
    run()
    expect("bind_launch args", seen[0][:3], ("P", "S", "D"))
    expect("bind_launch stream", (type(seen[0][3]), seen[0][3].value), (ctypes.c_void_p, 77))
    for what, message in (("", "cudaError 1"), ("k: launch failed", "k: launch failed: cudaError 2")):
        try:
            h.bind_launch(launch, "P", "S", "D", 77, what=what)()
            failures.append(f"bind_launch({what!r}): no error on a failed launch")
        except RuntimeError as e:
            expect("bind_launch message", str(e), message)

    # bench.py's result fields, in the order its JSON prints them.
    got = {**bench.timed((2.0, 1.0, 4.0), "tflops", 8e9, 1e9),
           **bench.compared("cublas", (4.0, 3.0, 5.0), (2.0, 1.0, 4.0), "tflops", 8e9, 1e9)}
    expect("bench fields", list(got.items()),
           [("ms", 2.0), ("ms_min", 1.0), ("ms_max", 4.0), ("tflops", 4.0),
            ("cublas_ms", 4.0), ("cublas_tflops", 2.0), ("ratio_vs_cublas", 2.0)])

    for f in failures:
        print("FAIL:", f)
    print(f"gpu_harness: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
