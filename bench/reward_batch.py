#!/usr/bin/env python3
"""Batch throughput of `tilescope reward --batch` (issue 14's target: 1,000
mutants of library kernels on 2 cores at >= 1.8x the throughput of one job,
peak memory per job <= 500 MB).

Mutants: single random edits (an integer literal changed, an operator
swapped, a float constant changed, a line deleted or duplicated) of the
library kernels gemm_naive, rmsnorm and rmsnorm_onepass (their simulation at
the default sizes is cheap enough for a thousand) drawn from a fixed seed, so
a run is reproducible; many fail early (parse, types), the rest run every
stage. The batch runs with --jobs 1 and --jobs N; the script prints wall
time, candidates per second, the speedup, the workers' CPU time (from
/proc/self children's rusage) and the largest worker's resident memory.

On a shared, loaded machine wall time does not show scaling, so it also
prints what does not depend on the load: the CPU time per candidate in the
workers, the coordinator's own CPU time (reading lines, handing them out,
writing results in order — the serial part, as `tilescope reward --batch`
reports it), the serial fraction s = coordinator / (coordinator + workers)
and the speedup Amdahl's law allows N jobs, 1 / (s + (1 - s) / N). The
measured wall-clock speedup is the target's figure; run it on an idle
machine with N no larger than its cores.

Fixed work: the batch file is the same for a given --count (mutants drawn
from seed 14, each with its own input seed), so runs on different days or
machines compare. Each run also reports the load it ran under — the load
average sampled every 2 s (/proc/loadavg: min, mean, max) — and the cores it
obtained (the workers' CPU time over the wall time): on a machine where other
work takes the cores, 2 jobs obtain fewer than 2 and the wall-clock speedup
is bounded by that, not by the batch path. `--repeat R` runs the pair
(1 job, N jobs) R times, alternating, and prints each pair's speedup.

`--write-only` writes the batch file (WORK/mutants.jsonl) and stops; the
first N mutants of any --count are the same. `--jobs` takes a comma-separated list (`--jobs 2,16`): each pair runs 1 job
and then each N. `--json FILE` writes every run's figures (wall, CPU, peak
worker memory, load, verdicts) and the speedups as one JSON object.

usage: reward_batch.py TILESCOPE [--count 1000] [--jobs 2[,N...]] [--work DIR] [--repeat 1]
                       [--json FILE] [--write-only]
"""
import argparse
import json
import os
import random
import re
import resource
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = {"gemm_naive.tile": "gemm(A, B -> C)",
           "rmsnorm.tile": "rmsnorm(X, W, eps -> Y)",
           "rmsnorm_onepass.tile": "rmsnorm(X, W, eps -> Y)"}


def mutate(text, rng):
    lines = text.split("\n")
    body = [i for i, l in enumerate(lines) if l.startswith("  ") and not l.strip().startswith("//")]
    kind = rng.randrange(5)
    i = rng.choice(body)
    line = lines[i]
    if kind == 0 and re.search(r"\b\d+\b", line):
        nums = list(re.finditer(r"\b\d+\b", line))
        m = rng.choice(nums)
        line = line[:m.start()] + str(rng.choice([0, 1, 2, 8, 16, 64, 128, 1023, 2048])) + line[m.end():]
    elif kind == 1 and re.search(r" [-+*] ", line):
        ops = list(re.finditer(r" [-+*] ", line))
        m = rng.choice(ops)
        line = line[:m.start()] + " " + rng.choice("+-*") + " " + line[m.end():]
    elif kind == 2 and re.search(r"\d\.\d", line):
        line = re.sub(r"\d+\.\d+", rng.choice(["1.0", "0.5", "2.0"]), line, count=1)
    elif kind == 3:
        line = ""
    else:
        line = line + "\n" + line
    lines[i] = line
    return "\n".join(lines)


class LoadSampler:
    """Samples the 1-minute load average every `period` seconds while running."""

    def __init__(self, period=2.0):
        self.period, self.samples = period, []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while True:
            try:
                with open("/proc/loadavg") as f:
                    self.samples.append(float(f.read().split()[0]))
            except OSError:
                return
            if self.stop.wait(self.period):
                return

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()

    def text(self):
        if not self.samples:
            return "load not sampled"
        return (f"load average min {min(self.samples):.1f} mean "
                f"{sum(self.samples) / len(self.samples):.1f} max {max(self.samples):.1f}")


def run_batch(args, batch, jobs, tag):
    out = os.path.join(args.work, f"out{jobs}.jsonl")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.time()
    with LoadSampler() as load:
        p = subprocess.run([args.tilescope, "reward", "--batch", batch, "-o", out,
                            "--jobs", str(jobs)], capture_output=True, text=True)
    wall = time.time() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        print(p.stderr)
        return None, None
    peak = re.search(r"peak worker memory (\d+) MiB", p.stderr)
    cpus = re.search(r"coordinator CPU ([0-9.]+) s, workers' CPU ([0-9.]+) s", p.stderr)
    verdicts = {}
    for line in open(out):
        v = json.loads(line)["verdict"]
        verdicts[v] = verdicts.get(v, 0) + 1
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    record = {"jobs": jobs, "count": args.count, "wall_s": round(wall, 3),
              "candidates_per_s": round(args.count / wall, 3), "cpu_s": round(cpu, 3),
              "cores_obtained": round(cpu / wall, 3),
              "peak_worker_mib": int(peak.group(1)) if peak else None,
              "load": [min(load.samples), max(load.samples)] if load.samples else None,
              "verdicts": verdicts}
    print(f"{tag}jobs {jobs}: {args.count} candidates in {wall:.1f} s wall = "
          f"{args.count / wall:.2f}/s; workers' CPU {cpu:.1f} s = {args.count / cpu:.2f}/s "
          f"per CPU-second; cores obtained {cpu / wall:.2f}; peak worker "
          f"{peak.group(1) if peak else '?'} MiB; {load.text()}; {verdicts}", flush=True)
    if cpus:
        coord, work = float(cpus.group(1)), float(cpus.group(2))
        serial = coord / (coord + work) if coord + work > 0 else 0.0
        print(f"  per candidate: {1000 * work / args.count:.1f} ms CPU in a worker, "
              f"{1000 * coord / args.count:.2f} ms in the coordinator; serial fraction "
              f"{serial:.4f}; Amdahl bound for {jobs} jobs: "
              f"{1 / (serial + (1 - serial) / jobs):.2f}x", flush=True)
        record.update({"coordinator_cpu_s": coord, "workers_cpu_s": work,
                       "serial_fraction": round(serial, 5)})
    return wall, record


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tilescope")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--jobs", default="2")
    ap.add_argument("--work", default="/tmp/reward-batch-bench")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json")
    ap.add_argument("--write-only", action="store_true")
    args = ap.parse_args()
    jobs_list = [int(j) for j in args.jobs.split(",")]
    os.makedirs(args.work, exist_ok=True)
    rng = random.Random(14)
    sources = {k: open(os.path.join(ROOT, "kernels", k)).read() for k in KERNELS}
    batch = os.path.join(args.work, "mutants.jsonl")
    with open(batch, "w") as f:
        for n in range(args.count):
            name = rng.choice(sorted(KERNELS))
            f.write(json.dumps({"id": n, "source": mutate(sources[name], rng),
                                "problem": KERNELS[name], "seed": n + 1}) + "\n")
    if args.write_only:
        print(batch)
        return 0
    speedups, runs = [], []

    def save():
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"count": args.count, "runs": runs, "speedups": speedups}, f, indent=1)

    for r in range(args.repeat):
        tag = f"[{r + 1}/{args.repeat}] " if args.repeat > 1 else ""
        one, record = run_batch(args, batch, 1, tag)
        if one is None:
            return 1
        runs.append(record)
        save()
        for jobs in jobs_list:
            many, record = run_batch(args, batch, jobs, tag)
            if many is None:
                return 1
            runs.append(record)
            speedups.append({"jobs": jobs, "speedup": round(one / many, 3)})
            save()
            print(f"{tag}speedup of {jobs} jobs over 1: {one / many:.2f}x", flush=True)
    if len(speedups) > 1:
        print("speedups: " + ", ".join(f"{x['jobs']} jobs {x['speedup']:.2f}x" for x in speedups))
    return 0


if __name__ == "__main__":
    sys.exit(main())
