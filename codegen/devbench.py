#!/usr/bin/env python3
"""Hardware harness of `tilescope bench --devices N` (GPU machine only).

`tilescope bench FILE --kernel K --args ... --devices N` lowers a devices(N)
kernel and writes a package (tools/BenchDevices.h): the lowered kernel, the
device-scale runtime, an entry file with C entry points (ts_bench_entry.cuh),
this script, gpu_harness.py and a manifest (K.nN.json: the kernel, its
problem, every tensor's shape, dtype and byte offset in the symmetric region,
the launcher's parameters with their values). This script runs a manifest:

    python3 devbench.py PKG/K.nN.json [--json] [--reps R] [--nvcc NVCC] [--timeout S]
                        [--build-only] [--json-out FILE]

It builds PKG/K.so with nvcc (once: it is the same for every N and size),
starts N processes, one per rank, each on GPU rank % G (G visible GPUs: one
process per GPU when N <= G, else N processes sharing the G GPUs through
CUDA IPC, which the output says), and waits for them. Each rank opens the
communicator (tsb_init: the peer regions exchanged as IPC handles through a
directory of small files), fills its inputs (fresh per rank from the seed),
zeroes scratch and flags, poisons the outputs (NaN), calls the kernel's
launcher, checks every output element against a float64 reference of the
kernel's problem computed from every rank's inputs, times the kernel the way
codegen/bench.py does (gpu_harness.py: L2 flushed before each timed call, one
call between two CUDA events, alternating with the baseline in the same
process), with a device barrier of all ranks before each timed call, then
poisons, runs and checks again. The baseline is NCCL through
torch.distributed in the same processes (allreduce, all_gather,
reduce_scatter; cuBLAS then NCCL for the GEMM problems) where NCCL runs: it
refuses two ranks on one GPU, so processes sharing a GPU have none (said so).

A timed call's time is the slowest rank's (the ranks start it together);
the table gives its median, min and max over the calls. Exit status: 0 every
output right on every rank, 1 an output wrong or a rank that crashed or hung,
2 no GPU, a failed build, or arguments the launcher refused.
"""
import argparse
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
COLLECTIVES = ("allreduce", "all_gather", "reduce_scatter")
GEMMS = ("tp_gemm_allreduce", "allgather_gemm", "gemm_reduce_scatter")
NO_GPU = "no GPU on this machine"


def load_manifest(path):
    with open(path) as f:
        m = json.load(f)
    m["dir"] = os.path.dirname(os.path.abspath(path))
    return m


def placement(devices, gpus):
    """How N ranks sit on G visible GPUs (rank r on GPU r % G)."""
    if devices <= gpus:
        return "one process per GPU"
    return (f"{devices} processes sharing {gpus} GPU{'s' if gpus > 1 else ''} through CUDA IPC "
            "(time-sliced: timings are not the kernel's speed)")


def slowest(per_rank):
    """Each timed call's time, the slowest rank's (lists of equal length)."""
    return [max(ts) for ts in zip(*per_rank)]


def spread_us(ms):
    return {"us_median": 1000.0 * statistics.median(ms), "us_min": 1000.0 * min(ms),
            "us_max": 1000.0 * max(ms)}


def work(m):
    """(amount, unit, scale) for a rate: bytes per rank of the collective's
    input in GB/s, or the GEMM's flops per device in TFLOP/s."""
    t = {x["name"]: x for x in m["tensors"]}
    kind = m["problem"]["kind"]
    if kind in COLLECTIVES:
        return t[m["problem"]["inputs"][0]["name"]]["bytes"], "GB/s", 1e6
    a = t[m["problem"]["inputs"][0]["name"]]["shape"]
    c = t[m["problem"]["outputs"][0]["name"]]["shape"]
    k = a[0] if m["problem"]["inputs"][0]["transposed"] else a[1]
    return 2.0 * c[0] * c[1] * k, "TFLOP/s", 1e9  # C: the device's instance


def summarize(m, ranks):
    """The report: placement, checks, timings (slowest rank per call)."""
    n = m["devices"]
    gpus = ranks[0].get("gpus", 0)
    out = {"kernel": m["kernel"], "problem": m["problem"]["text"], "args": m["args"],
           "devices": n, "processes": n, "gpus_visible": gpus,
           "gpu": ranks[0].get("gpu", ""), "placement": placement(n, gpus) if gpus else "",
           "checks": [c for r in ranks for c in r.get("checks", [])]}
    picked = {r.get("picked", "") for r in ranks}
    if picked != {""}:
        out["picked"] = sorted(picked)
    out["ok"] = all(r.get("ok") for r in ranks) and len(ranks) == n
    if all(r.get("ours_ms") for r in ranks):
        amount, unit, scale = work(m)
        ours = slowest([r["ours_ms"] for r in ranks])
        out["tilescope"] = dict(spread_us(ours), rate=amount / statistics.median(ours) / scale,
                                unit=unit, reps=len(ours))
        base = [r.get("baseline_ms") for r in ranks]
        if all(base):
            b = slowest(base)
            out["baseline"] = dict(spread_us(b), name=ranks[0]["baseline"],
                                   rate=amount / statistics.median(b) / scale, unit=unit)
            out["ratio_vs_baseline"] = statistics.median(b) / statistics.median(ours)
    note = ranks[0].get("baseline_note")
    if note:
        out["baseline_note"] = note
    return out


def table(s):
    """The report as text lines."""
    args = ",".join(f"{k}={v}" for k, v in s["args"].items())
    lines = [f"tilescope bench: {s['kernel']} ({s['problem']}) at {args} on {s['devices']} "
             f"device{'s' if s['devices'] > 1 else ''}",
             f"placement: {s['placement']}, {s['gpus_visible']} GPU(s) visible ({s['gpu']})"]
    bad = [c for c in s["checks"] if not c["ok"]]
    compared = sum(c["compared"] for c in s["checks"])
    lines.append(f"check: {len(s['checks'])} checks of every output against float64 "
                 f"({compared} elements): " +
                 ("ok" if not bad and s["ok"] else
                  "WRONG: " + "; ".join(c["first_bad"] for c in bad[:3]) if bad else "FAILED"))
    if "picked" in s:
        lines.append(f"the launcher picked: {', '.join(s['picked'])}")
    if "tilescope" in s:
        rows = [("tilescope", s["tilescope"])]
        if "baseline" in s:
            rows.append((s["baseline"]["name"], s["baseline"]))
        lines.append(f"{'impl':<28} {'median us':>10} {'min us':>10} {'max us':>10} "
                     f"{'rate':>10}")
        for name, r in rows:
            lines.append(f"{name:<28} {r['us_median']:>10.2f} {r['us_min']:>10.2f} "
                         f"{r['us_max']:>10.2f} {r['rate']:>10.2f} {r['unit']}")
        if "ratio_vs_baseline" in s:
            lines.append(f"baseline / tilescope (median): {s['ratio_vs_baseline']:.3f}")
    if "baseline_note" in s:
        lines.append(s["baseline_note"])
    return lines


# --------------------------------------------------------------- the build

def build(m, nvcc):
    """PKG/K.so from the entry file, unless it is newer than its sources."""
    lib = os.path.join(m["dir"], m["library"])
    sources = [os.path.join(m["dir"], s) for s in m["sources"]]
    if os.path.exists(lib) and all(os.path.getmtime(lib) >= os.path.getmtime(s) for s in sources):
        return lib, ""
    tmp = f"{lib}.{os.getpid()}.tmp"
    cmd = [nvcc] + m["nvcc_args"] + ["-I", m["dir"], os.path.join(m["dir"], m["entry"]), "-o", tmp]
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if p.returncode != 0:
        return None, " ".join(cmd) + "\n" + p.stdout + p.stderr
    os.replace(tmp, lib)
    return lib, ""


def find_nvcc(given):
    if given:
        return given
    for c in (os.environ.get("TILESCOPE_NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if c and os.path.exists(c):
            return c
    return None


# --------------------------------------------------------------- the ranks

def run_ranks(m, a, lib):
    """Starts the N rank processes and collects their results (or errors)."""
    n = m["devices"]
    with tempfile.TemporaryDirectory(prefix="ts_devbench.") as d:
        procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), a.manifest,
                                   "--rank", str(r), "--dir", d, "--lib", lib,
                                   "--reps", str(a.reps), "--seed", str(a.seed)],
                                  stdin=subprocess.DEVNULL) for r in range(n)]
        deadline = time.time() + a.timeout
        failed_at = None
        while any(p.poll() is None for p in procs):
            now = time.time()
            if failed_at is None and any(p.poll() not in (None, 0) for p in procs):
                failed_at = now  # a peer of a failed rank waits for it: give up soon
            if now > deadline or (failed_at is not None and now > failed_at + 30):
                for p in procs:
                    if p.poll() is None:
                        p.kill()
                break
            time.sleep(0.05)
        for p in procs:
            p.wait()
        results = []
        for r, p in enumerate(procs):
            path = os.path.join(d, f"result.{r}.json")
            if os.path.exists(path):
                with open(path) as f:
                    results.append(json.load(f))
            else:
                why = "killed after the others failed or the time ran out" if p.returncode < 0 \
                    else f"exit status {p.returncode} without a result"
                results.append({"rank": r, "ok": False, "error": f"rank {r}: {why}"})
        return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("manifest")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    ap.add_argument("--reps", type=int, default=None, help="timed calls (default: the manifest's)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--nvcc", default="")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds for all ranks")
    ap.add_argument("--build-only", action="store_true", help="build K.so and stop")
    ap.add_argument("--json-out", default="", help="also append the JSON object to this file")
    ap.add_argument("--rank", type=int, default=-1, help=argparse.SUPPRESS)
    ap.add_argument("--dir", default="", help=argparse.SUPPRESS)
    ap.add_argument("--lib", default="", help=argparse.SUPPRESS)
    a = ap.parse_args()
    m = load_manifest(a.manifest)
    if a.reps is None:
        a.reps = m.get("reps", 50)
    if a.rank >= 0:
        sys.path.insert(0, HERE)
        import devbench_rank
        return devbench_rank.rank_main(m, a)
    if not a.build_only:
        try:
            import torch  # the parent only counts GPUs; CUDA is initialised in the ranks
        except ImportError as ex:
            print(f"devbench: error: no PyTorch here ({ex})", file=sys.stderr)
            return 2
        if torch.cuda.device_count() == 0:
            print(f"devbench: error: {NO_GPU} (torch.cuda.device_count() is 0)", file=sys.stderr)
            return 2
    nvcc = find_nvcc(a.nvcc)
    if not nvcc:
        print("devbench: error: nvcc not found (--nvcc, TILESCOPE_NVCC)", file=sys.stderr)
        return 2
    lib, log = build(m, nvcc)
    if not lib:
        print(log + "devbench: error: nvcc failed", file=sys.stderr)
        return 2
    if a.build_only:
        print(f"devbench: built {lib}")
        return 0
    a.lib = lib
    ranks = run_ranks(m, a, lib)
    errors = [r["error"] for r in ranks if r.get("error")]
    s = summarize(m, ranks)
    if errors:
        s["errors"] = errors
    if a.json:
        print(json.dumps(s))
    else:
        print("\n".join(table(s)))
    if a.json_out:
        with open(a.json_out, "a") as f:
            f.write(json.dumps(s) + "\n")
    for e in errors:
        print(f"devbench: error: {e}", file=sys.stderr)
    if any(r.get("refused") for r in ranks):
        return 2
    return 0 if s["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
