#!/usr/bin/env python3
"""`tilescope reward --batch`: one result per input line in input order; a
malformed line, a missing file, a candidate that crashes its worker (out of
memory) and one that runs past the wall-time limit each get an error result
while the batch goes on; shards merge back to the full run; --resume skips
ids already done; duplicates (equal semantic hash) answer their static stages
from the cache; every line is valid under docs/reward.schema.json.

usage: batch_test.py TILESCOPE SOURCE_DIR WORK_DIR
"""
import json
import os
import subprocess
import sys

tilescope, source, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
kernels = os.path.join(source, "kernels")
schema = os.path.join(source, "docs", "reward.schema.json")
checker = os.path.join(source, "tests", "reward", "check_schema.py")
naive = open(os.path.join(kernels, "gemm_naive.tile")).read()
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def mutant(constant):
    return naive.replace("acc[0] = 0.0", f"acc[0] = {constant}")


# Renamed kernel and locals, a comment, 16 * x for x * 16: the same semantic hash.
duplicate = (naive.replace("gemm_naive", "renamed").replace("acc", "sum")
             .replace("blockIdx.y * 16", "16 * blockIdx.y") + "// a comment\n")
endless = naive.replace("  C[i, j] = acc[0]",
                        "  for spin in 0 .. 1000000000 {\n    acc[0] = acc[0] * 1.0\n  }\n"
                        "  C[i, j] = acc[0]")
lines = [
    json.dumps({"id": "naive", "source": naive}),
    json.dumps({"id": "dup", "source": duplicate}),
    json.dumps({"id": "wrong", "source": mutant("1.0")}),
    "{not json",
    json.dumps({"source": naive}),
    json.dumps({"id": "path", "path": os.path.join(kernels, "gemm_naive.tile")}),
    json.dumps({"id": "missing", "path": os.path.join(work, "no-such.tile")}),
    json.dumps({"id": "oom", "source": naive, "sizes": "M=65536,N=65536,K=16"}),
    json.dumps({"id": "endless", "source": endless, "sizes": "M=16,N=16,K=1"}),
    json.dumps({"id": 7, "source": "kernel broken(", "problem": "gemm(A, B -> C)"}),
]
batch = os.path.join(work, "in.jsonl")
with open(batch, "w") as f:
    f.write("\n".join(lines) + "\n")


def run(out, *extra):
    cmd = [tilescope, "reward", "--batch", batch, "-o", out, "--problem", "gemm(A, B -> C)",
           "--seed", "9", "--timeout-ms", "60000", "--memory-mb", "1000000",
           "--worker-memory-mb", "1500", "--candidate-timeout-ms", "4000",
           # The endless candidate must meet the wall-time kill, not the step
           # budget: 2^28 warp statements took 3.6 s of its 4 (2026-11-28).
           "--max-steps", "1000000000000", *extra]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    check(p.returncode == 0, f"{' '.join(extra)}: exit {p.returncode}: {p.stderr}")
    return [json.loads(l) for l in open(out) if l.strip()]


full = run(os.path.join(work, "full.jsonl"), "--jobs", "2")
by = {r["id"] if r["id"] is not None else f"line{r['index']}": r for r in full}
check([r["index"] for r in full] == list(range(len(lines))), "results in input order, one each")
check(by["naive"]["verdict"] == "pass", f"naive passes: {by['naive'].get('verdict')}")
check(by["path"]["verdict"] == "pass", "a path line is read")
check(by["wrong"]["verdict"] == "fail", "a wrong mutant fails")
check(by["dup"]["candidate"] == by["naive"]["candidate"], "duplicates share the semantic hash")
check(by["line3"]["verdict"] == "error" and "not JSON" in by["line3"]["error"], "malformed line")
check(by["line4"]["verdict"] == "error" and "no \"id\"" in by["line4"]["error"], "line without id")
check(by["missing"]["verdict"] == "error" and "cannot read" in by["missing"]["error"],
      "missing path")
# Every build caps the worker (sanitized builds, which set no address-space
# limit, by the coordinator's watch of its resident memory): never "budget".
check(by["oom"]["verdict"] == "error" and "crashed its worker" in by["oom"]["error"]
      and "memory limit of 1500 MiB" in by["oom"]["error"],
      f"out of memory isolated: {by['oom']}")
check(by["endless"]["verdict"] == "budget" and "killed" in by["endless"]["error"],
      f"wall-time limit: {by['endless']}")
check(by[7]["verdict"] == "error" and by[7]["kernels"][0]["stages"][0]["status"] == "fail",
      "a candidate that does not parse")
p = subprocess.run([sys.executable, checker, schema, "--def", "batchLine", "--lines",
                    os.path.join(work, "full.jsonl")], capture_output=True, text=True)
check(p.returncode == 0, "schema: " + p.stdout)

# Duplicates: with one worker the second answers its static stages from the cache.
one = run(os.path.join(work, "one.jsonl"), "--jobs", "1")
dup = next(r for r in one if r["id"] == "dup")
cached = [s["name"] for s in dup["kernels"][0]["stages"] if s["cached"]]
check(cached == ["types", "dispatch", "resources", "layouts", "barriers", "races", "coverage"],
      f"static stages of a duplicate come from the cache: {cached}")
sim = next(s for s in dup["kernels"][0]["stages"] if s["name"] == "simulate")
check(not sim["cached"] and sim["status"] == "pass", "simulate runs again on fresh inputs")

# Shards: 0/2 and 1/2 merged give the full run's lines and static results.
def static(r):
    if "kernels" not in r:
        return (r["id"], r["verdict"])
    return (r["id"], [(s["name"], s["status"]) for k in r["kernels"] for s in k["stages"]
                      if s["name"] not in ("simulate",)])


a = run(os.path.join(work, "s0.jsonl"), "--shard", "0/2", "--jobs", "1")
b = run(os.path.join(work, "s1.jsonl"), "--shard", "1/2", "--jobs", "1")
check(len(a) == 5 and len(b) == 5, "shards split the lines")
merged = os.path.join(work, "merged.jsonl")
p = subprocess.run([tilescope, "reward", "merge", merged, os.path.join(work, "s1.jsonl"),
                    os.path.join(work, "s0.jsonl")], capture_output=True, text=True)
check(p.returncode == 0, "merge: " + p.stderr)
m = [json.loads(l) for l in open(merged)]
check([static(r) for r in m] == [static(r) for r in full], "merged shards = the full run")

# Resume: keep 4 lines, rerun: the rest is appended, each id once.
part = os.path.join(work, "part.jsonl")
with open(part, "w") as f:
    f.writelines(open(os.path.join(work, "full.jsonl")).readlines()[:4])
resumed = run(part, "--resume", "--jobs", "2")
ids = [json.dumps(r["id"]) for r in resumed if r["id"] is not None]
check(len(ids) == len(set(ids)), "resume: each id once")
check(len(resumed) == len(full) + 1, f"resume reruns only what is missing (the id-less "
      f"lines run again): {len(resumed)} lines")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
