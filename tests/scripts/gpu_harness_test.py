#!/usr/bin/env python3
"""codegen/gpu_harness.py's timing loops and launch wrapper, and bench.py's
result fields, checked on the CPU: a stand-in `torch` module records every
call (L2 flush, GPU sleep, event, synchronize) and hands out scripted event
times, so the order in which candidates are timed, the flush before each
timed call and the statistics can be checked exactly without a GPU.

Usage: gpu_harness_test.py REPO (unittest's exit status).
"""
import ctypes
import os
import sys
import types
import unittest

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


class Harness(unittest.TestCase):
    def setUp(self):
        CALLS.clear()
        TIMES.clear()

    def test_time_pair_alternates_and_flushes_before_each_timed_call(self):
        TIMES[:] = [1.0, 10.0, 12.0, 3.0, 2.0, 11.0]  # ours 1, base 10, base 12, ours 3, ours 2, base 11
        ours, base = h.time_pair(fn("ours"), fn("base"), warmup=2, reps=3)
        self.assertEqual(CALLS[:5], ["ours", "base", "ours", "base", "sync"])  # warm-up
        self.assertEqual(timed_calls(), ["ours", "base", "base", "ours", "ours", "base"])
        self.assertEqual(CALLS[5], f"flush {256 * 1024 * 1024}")
        self.assertEqual(ours, (2.0, 1.0, 3.0))  # median, min, max
        self.assertEqual(base, (11.0, 10.0, 12.0))
        self.assertEqual([c for c in CALLS if c.startswith("sleep")], [])

    def test_pair_times_runs_before_after_the_flush_and_before_the_start_event(self):
        TIMES[:] = [1.0, 2.0, 3.0, 4.0]
        ours, base = h.pair_times(fn("ours"), fn("base"), warmup=1, reps=2,
                                  before=fn("barrier"))
        self.assertEqual(CALLS[:3], ["ours", "base", "sync"])  # warm-up: no barrier
        timed = CALLS[3:]
        self.assertEqual([c for c in timed if not c.startswith("flush")],
                         ["barrier", "record", "ours", "record",
                          "barrier", "record", "base", "record",
                          "barrier", "record", "base", "record",
                          "barrier", "record", "ours", "record"])
        self.assertEqual([i for i, c in enumerate(timed) if c.startswith("flush")], [0, 5, 10, 15])
        self.assertEqual((ours, base), ([1.0, 4.0], [2.0, 3.0]))  # every time, in call order

    def test_pair_times_without_a_baseline_times_ours_alone(self):
        TIMES[:] = [5.0, 6.0, 7.0]
        ours, base = h.pair_times(fn("ours"), None, warmup=2, reps=3)
        self.assertEqual(CALLS[:3], ["ours", "ours", "sync"])
        self.assertEqual(timed_calls(), ["ours", "ours", "ours"])
        self.assertEqual((ours, base), ([5.0, 6.0, 7.0], []))

    def test_time_rotating_starts_round_i_with_function_i(self):
        TIMES[:] = [float(i) for i in range(12)]
        t = h.time_rotating({"a": fn("a"), "b": fn("b"), "c": fn("c")}, warmup=1, reps=4)
        self.assertEqual(timed_calls(), list("abcbcacababc"))
        self.assertEqual(t["a"], (6.0, 0.0, 9.0))  # a timed at 0, 5, 7, 9

    def test_round_robin_reverses_odd_rounds_and_sleeps_when_asked(self):
        TIMES[:] = [0.001, 0.002, 0.004, 0.003, 0.005, 0.006]
        us = h.round_robin({"x": fn("x"), "y": fn("y")}, 3, warmup=1, sleep_cycles=200000)
        self.assertEqual(timed_calls(), ["x", "y", "y", "x", "x", "y"])
        self.assertEqual({k: round(v, 6) for k, v in us.items()}, {"x": 3.0, "y": 4.0})  # µs
        self.assertEqual(CALLS.count("sleep 200000"), 6)
        CALLS.clear()
        TIMES[:] = [1.0, 1.0]
        h.round_robin({"x": fn("x")}, 2, warmup=0)
        self.assertEqual([c for c in CALLS if c.startswith("sleep")], [])

    def test_bind_launch_passes_the_stream_and_raises_on_a_failed_launch(self):
        seen = []

        def launch(*args):
            seen.append(args)
            return len(seen) - 1  # 0 the first time (success), then 1, 2

        h.bind_launch(launch, "P", "S", "D", 77, what="")()
        self.assertEqual(seen[0][:3], ("P", "S", "D"))
        self.assertIsInstance(seen[0][3], ctypes.c_void_p)
        self.assertEqual(seen[0][3].value, 77)
        for what, message in (("", "cudaError 1"), ("k: launch failed", "k: launch failed: cudaError 2")):
            with self.assertRaises(RuntimeError) as caught:
                h.bind_launch(launch, "P", "S", "D", 77, what=what)()
            self.assertEqual(str(caught.exception), message)

    def test_bench_result_fields_in_print_order(self):
        got = {**bench.timed((2.0, 1.0, 4.0), "tflops", 8e9, 1e9),
               **bench.compared("cublas", (4.0, 3.0, 5.0), (2.0, 1.0, 4.0), "tflops", 8e9, 1e9)}
        self.assertEqual(list(got.items()),
                         [("ms", 2.0), ("ms_min", 1.0), ("ms_max", 4.0), ("tflops", 4.0),
                          ("cublas_ms", 4.0), ("cublas_tflops", 2.0), ("ratio_vs_cublas", 2.0)])


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: gpu_harness_test.py REPO")
    sys.modules["torch"] = fake_torch()
    sys.path.insert(0, os.path.join(sys.argv.pop(1), "codegen"))
    import gpu_harness as h  # noqa: E402
    import bench  # noqa: E402
    unittest.main()
