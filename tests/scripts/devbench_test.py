#!/usr/bin/env python3
"""codegen/devbench.py, the harness of `tilescope bench --devices N`, checked
on the CPU: the report it makes of its ranks' results (the slowest rank per
timed call, the placement, the rates, the table), the build of the bench
library (nvcc's command line from the manifest, built once), and the rank
protocol (N processes, a result file each, collected by the parent) with a
stand-in `torch` that has no GPU, so every rank refuses with the reason.

Usage: devbench_test.py REPO (unittest's exit status).
"""
import json
import os
import stat
import sys
import tempfile
import time
import types
import unittest

MANIFEST = {
    "kernel": "allreduce_one_shot_bf16", "devices": 2, "args": {"E": 4096, "N": 2},
    "problem": {"kind": "allreduce", "text": "allreduce(X -> Y)",
                "inputs": [{"name": "X", "transposed": False}],
                "outputs": [{"name": "Y", "transposed": False}]},
    "tensors": [{"name": "X", "dtype": "bf16", "shape": [4096], "offset": 0, "bytes": 8192},
                {"name": "Y", "dtype": "bf16", "shape": [4096], "offset": 8192, "bytes": 8192}],
    "data_bytes": 16384, "reps": 3, "launcher": [],
    "nvcc_args": ["-std=c++17", "-O3", "-shared"], "entry": "k.entry.cu", "library": "k.so",
    "sources": ["k.cu", "k.entry.cu"],
}
TP = dict(MANIFEST, kernel="tp", devices=1, args={"M": 128, "N": 256, "KD": 64, "D": 1},
          problem={"kind": "tp_gemm_allreduce", "text": "tp_gemm_allreduce(A, B^T -> C)",
                   "inputs": [{"name": "A", "transposed": False},
                              {"name": "B", "transposed": True}],
                   "outputs": [{"name": "C", "transposed": False}]},
          tensors=[{"name": "A", "shape": [128, 64], "bytes": 16384},
                   {"name": "B", "shape": [256, 64], "bytes": 32768},
                   {"name": "C", "shape": [128, 256], "bytes": 65536}])


def check_record(rank, ok=True):
    c = {"rank": rank, "when": "first call", "tensor": "Y", "compared": 4096,
         "mismatches": 0 if ok else 2, "unwritten": 0, "ok": ok}
    if not ok:
        c["first_bad"] = f"rank {rank}, first call: Y[7] = 1.0, float64 2.0"
    return c


class Report(unittest.TestCase):
    def test_a_timed_call_takes_the_slowest_ranks_time(self):
        self.assertEqual(d.slowest([[1.0, 5.0, 2.0], [3.0, 1.0, 2.5]]), [3.0, 5.0, 2.5])

    def test_placement_says_when_processes_share_a_gpu(self):
        self.assertEqual(d.placement(2, 2), "one process per GPU")
        self.assertEqual(d.placement(1, 8), "one process per GPU")
        self.assertTrue(d.placement(2, 1).startswith(
            "2 processes sharing 1 GPU through CUDA IPC (time-sliced"))
        self.assertTrue(d.placement(8, 4).startswith("8 processes sharing 4 GPUs"))

    def test_rates(self):
        self.assertEqual(d.work(MANIFEST), (8192, "GB/s", 1e6))  # input bytes per rank
        self.assertEqual(d.work(TP), (2.0 * 128 * 256 * 64, "TFLOP/s", 1e9))

    def test_summary_of_two_ranks_sharing_a_gpu_without_a_baseline(self):
        ranks = [{"rank": 0, "ok": True, "gpus": 1, "gpu": "G", "picked": "",
                  "checks": [check_record(0)], "ours_ms": [0.002, 0.004, 0.003],
                  "baseline_note": "no baseline: NCCL refuses two ranks on one GPU"},
                 {"rank": 1, "ok": True, "gpus": 1, "gpu": "G", "picked": "",
                  "checks": [check_record(1)], "ours_ms": [0.003, 0.001, 0.005]}]
        s = d.summarize(MANIFEST, ranks)
        self.assertTrue(s["ok"])
        self.assertEqual(s["tilescope"]["us_median"], 4.0)  # slowest: 3, 4, 5 us
        self.assertEqual((s["tilescope"]["us_min"], s["tilescope"]["us_max"]), (3.0, 5.0))
        self.assertAlmostEqual(s["tilescope"]["rate"], 8192 / 0.004 / 1e6)
        self.assertNotIn("baseline", s)
        self.assertNotIn("picked", s)
        lines = d.table(s)
        self.assertEqual(lines[0], "tilescope bench: allreduce_one_shot_bf16 (allreduce(X -> Y)) "
                                   "at E=4096,N=2 on 2 devices")
        self.assertTrue(lines[1].startswith("placement: 2 processes sharing 1 GPU"))
        self.assertEqual(lines[2], "check: 2 checks of every output against float64 (8192 "
                                   "elements): ok")
        self.assertEqual(lines[-1], "no baseline: NCCL refuses two ranks on one GPU")

    def test_summary_with_a_baseline_and_a_wrong_output(self):
        ranks = [{"rank": 0, "ok": False, "gpus": 1, "gpu": "G", "picked": "two_shot",
                  "checks": [check_record(0, ok=False)], "ours_ms": [0.010],
                  "baseline": "cublas+nccl.allreduce", "baseline_ms": [0.020]}]
        s = d.summarize(TP, ranks)
        self.assertFalse(s["ok"])
        self.assertEqual(s["ratio_vs_baseline"], 2.0)
        self.assertEqual(s["picked"], ["two_shot"])
        lines = d.table(s)
        self.assertIn("check: 1 checks of every output against float64 (4096 elements): WRONG: "
                      "rank 0, first call: Y[7] = 1.0, float64 2.0", lines)
        self.assertIn("baseline / tilescope (median): 2.000", lines)

    def test_a_missing_rank_is_not_ok(self):
        ranks = [{"rank": 0, "ok": True, "gpus": 2, "checks": [check_record(0)]}]
        self.assertFalse(d.summarize(MANIFEST, ranks)["ok"])


class Build(unittest.TestCase):
    def test_builds_once_with_the_manifests_flags_and_again_when_a_source_changes(self):
        with tempfile.TemporaryDirectory() as t:
            for s in MANIFEST["sources"]:
                open(os.path.join(t, s), "w").close()
            calls = os.path.join(t, "calls")
            nvcc = os.path.join(t, "nvcc")
            with open(nvcc, "w") as f:  # logs its arguments and writes the -o file
                f.write(f'#!/bin/sh\necho "$@" >> {calls}\n'
                        'while [ $# -gt 1 ]; do [ "$1" = -o ] && touch "$2"; shift; done\n')
            os.chmod(nvcc, os.stat(nvcc).st_mode | stat.S_IEXEC)
            m = dict(MANIFEST, dir=t)
            lib, log = d.build(m, nvcc)
            self.assertEqual(lib, os.path.join(t, "k.so"))
            with open(calls) as f:
                first = f.read().split()
            self.assertEqual(first[:5], ["-std=c++17", "-O3", "-shared", "-I", t])
            self.assertEqual(first[5], os.path.join(t, "k.entry.cu"))
            self.assertEqual(first[6], "-o")
            d.build(m, nvcc)  # the library is newer than its sources: not built again
            with open(calls) as f:
                self.assertEqual(len(f.readlines()), 1)
            later = time.time() + 10
            os.utime(os.path.join(t, "k.cu"), (later, later))
            d.build(m, nvcc)
            with open(calls) as f:
                self.assertEqual(len(f.readlines()), 2)

    def test_a_failed_build_gives_the_log(self):
        with tempfile.TemporaryDirectory() as t:
            for s in MANIFEST["sources"]:
                open(os.path.join(t, s), "w").close()
            lib, log = d.build(dict(MANIFEST, dir=t), "/bin/false")
            self.assertIsNone(lib)
            self.assertTrue(log.startswith("/bin/false -std=c++17"))


class Ranks(unittest.TestCase):
    def test_every_rank_reports_and_the_parent_collects_them(self):
        with tempfile.TemporaryDirectory() as t:
            fake = os.path.join(t, "fake")
            os.mkdir(fake)
            with open(os.path.join(fake, "torch.py"), "w") as f:  # a torch without a GPU
                f.write("import types\n__version__ = 'fake'\n"
                        "cuda = types.SimpleNamespace(device_count=lambda: 0)\n")
                for name in ("bfloat16", "float16", "float32", "float8_e4m3fn", "int8", "uint8",
                             "int16", "int32", "int64"):
                    f.write(f"{name} = '{name}'\n")
            path = os.path.join(t, "k.n2.json")
            with open(path, "w") as f:
                json.dump(MANIFEST, f)
            os.environ["PYTHONPATH"] = fake
            a = types.SimpleNamespace(manifest=path, reps=3, seed=1, timeout=60.0)
            ranks = d.run_ranks(d.load_manifest(path), a, os.path.join(t, "k.so"))
            self.assertEqual([r["rank"] for r in ranks], [0, 1])
            for r in ranks:
                self.assertEqual(r["error"], f"rank {r['rank']}: no GPU on this machine "
                                             "(torch.cuda.device_count() is 0)")
                self.assertTrue(r["refused"])
                self.assertFalse(r["ok"])


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: devbench_test.py REPO")
    sys.path.insert(0, os.path.join(sys.argv.pop(1), "codegen"))
    import devbench as d  # noqa: E402
    unittest.main()
