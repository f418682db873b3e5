#!/usr/bin/env python3
"""Pins the static reward's verdicts (tests/reward/verdicts.golden.jsonl).

Every speed-up of the static stages must leave what they decide byte for
byte as it was: a fast wrong "proved" is the worst bug the reward can have.
This runs `tilescope reward --static --seed 1 --json` on the bundled kernels
(kernels/*.tile), on every kernel of the bug corpus (tests/lit/bugs) and its
fixed twin (tests/lit/fixed-twin.py), and on the anti-hacking corpus
(tests/reward/hacks), and compares each result with the golden file after
dropping what may differ between two equal runs or is not a static verdict:
times (`ms`), scores and credits (the performance stage's share depends on
the model), the performance stage and the `performance` object (the model's
prediction, pinned by tests/unit/reward/PerformanceTest.cpp). Everything else
(each stage's status, reason and diagnostics with their codes, locations,
messages and witnesses; the verdict, exit code, first failure, candidate
hash) must be equal. A few results depend on solver budgets that a loaded
machine can run out of (a witness that is "merely not the least" when a
minimising query gives up, proof/LeastWitness.h), so an input that
differs is rewarded again, up to twice, and fails only when no run matches:
a change of what the stages decide differs every time. An input whose
result is known to have more than one form under load may list the other
forms' hashes under "alternatives", or a summary without its hash (exit,
verdict, stage statuses). None does now: the one that did,
tests/lit/bugs/grouped-order-mod-4.tile, whose race witness stayed at
C[127, 255] on a loaded machine and whose race query, near the static
stages' 10 s budget, could end as `budget` in one process, is decided with
its least witness in about 0.5 s of CPU since its witness sizes come from a
ladder of constant sizes (racecheck/RaceWitness.cpp, 2026-11-27). The golden
file keeps, per input, a summary (exit
code, verdict, each kernel's stage statuses) and the SHA-256 of the whole
normalised result; a difference prints the summary of both and the current
result in full.

With --in-process PYTHONPATH the same inputs are rewarded one after the
other in one process through the Python module (tilescope.reward, static
only), so that whatever a process keeps between candidates (the linear
pre-check's memo of proved formulas, proof/LinearPrecheck.h) is warm, and
must give the same results as a process per input.

usage: verdicts_test.py TILESCOPE ROOT [--update] [--jobs N] [--in-process PYTHONPATH]
--update rewrites the golden file: do that only for an intended change of a
verdict or a message, and review the diff of the golden file.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

GOLDEN = "tests/reward/verdicts.golden.jsonl"


def inputs(root):
    """(name, source text, file name given to tilescope) in a fixed order."""
    out = []
    for f in sorted(os.listdir(os.path.join(root, "kernels"))):
        if f.endswith(".tile"):
            out.append(("kernels/" + f, None, "kernels/" + f))
    bugs = os.path.join(root, "tests/lit/bugs")
    sys.path.insert(0, os.path.join(root, "tests/lit"))
    twin = __import__("fixed-twin").twin
    for f in sorted(os.listdir(bugs)):
        if not f.endswith(".tile"):
            continue
        path = "tests/lit/bugs/" + f
        out.append((path, None, path))
        with open(os.path.join(root, path)) as src:
            text, fixes = twin(src.readlines())
        if fixes:
            out.append((path + " (fixed twin)", "".join(text), path))
    hacks = os.path.join(root, "tests/reward/hacks")
    for f in sorted(os.listdir(hacks)):
        if f.endswith(".tile"):
            out.append(("tests/reward/hacks/" + f, None, "tests/reward/hacks/" + f))
    return out


def normal(result):
    """The result without what is not a static verdict (see above)."""
    def stage(s):
        return {k: v for k, v in s.items() if k not in ("ms", "credit")}

    out = {k: v for k, v in result.items() if k not in ("ms", "score", "kernels", "stages")}
    out["stages"] = [stage(s) for s in result.get("stages", []) if s["name"] != "performance"]
    out["kernels"] = []
    for k in result.get("kernels", []):
        nk = {key: v for key, v in k.items() if key not in ("score", "performance", "stages")}
        nk["stages"] = [stage(s) for s in k["stages"] if s["name"] != "performance"]
        out["kernels"].append(nk)
    return out


def summary(r):
    """What the golden file keeps of a run: a readable summary and the hash."""
    if "error" in r:
        return {"error": r["error"]}
    res = r["result"]
    text = json.dumps(res, sort_keys=True)
    return {"exit": r["exit"], "verdict": res.get("verdict"),
            "stages": {k["kernel"]: " ".join(s["status"] for s in k["stages"])
                       for k in res.get("kernels", [])},
            "sha256": hashlib.sha256(text.encode()).hexdigest()}


def run(tilescope, root, item):
    name, text, path = item
    cmd = [tilescope, "reward", "--static", "--seed", "1", "--json"]
    if text is None:
        p = subprocess.run(cmd + [path], cwd=root, capture_output=True, text=True)
    else:
        p = subprocess.run(cmd + ["-"], cwd=root, input=text, capture_output=True, text=True)
    try:
        result = json.loads(p.stdout)
    except json.JSONDecodeError:
        return name, {"error": f"exit {p.returncode}, no JSON: {p.stderr[-400:]}"}
    return name, {"exit": p.returncode, "result": normal(result)}


def matches(want, got):
    """Whether a run's summary is the golden one or a listed alternative."""
    alternatives = want.get("alternatives", [])
    main = {k: v for k, v in want.items() if k != "alternatives"}
    if main == got:
        return True
    rest = {k: v for k, v in main.items() if k != "sha256"}
    got_rest = {k: v for k, v in got.items() if k != "sha256"}
    if got.get("sha256") in alternatives and rest == got_rest:
        return True
    # A summary listed as an alternative (exit, verdict, stage statuses) is
    # another form the result may take whatever its diagnostics say.
    return any(isinstance(a, dict) and a == got_rest for a in alternatives)


def run_in_process(root, item):
    import tilescope
    name, text, path = item
    if text is None:
        with open(os.path.join(root, path)) as f:
            text = f.read()
        file_name = path
    else:
        file_name = "<stdin>"
    result = tilescope.reward(text, seed=1, static_only=True, name=file_name)
    return name, {"exit": result["exit_code"], "result": normal(result)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tilescope")
    ap.add_argument("root")
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--in-process", metavar="PYTHONPATH")
    args = ap.parse_args()
    items = inputs(args.root)
    if args.in_process:
        sys.path.insert(0, args.in_process)
        got = [run_in_process(args.root, i) for i in items]
    else:
        with ThreadPoolExecutor(args.jobs) as pool:
            got = list(pool.map(lambda i: run(args.tilescope, args.root, i), items))
    golden_path = os.path.join(args.root, GOLDEN)
    if args.update:
        old = {}  # the alternatives listed so far are kept
        if os.path.exists(golden_path):
            with open(golden_path) as g:
                for line in g:
                    entry = json.loads(line)
                    old[entry["name"]] = entry.get("alternatives")
        with open(golden_path, "w") as f:
            for name, r in got:
                entry = {"name": name, **summary(r)}
                if old.get(name):
                    entry["alternatives"] = old[name]
                f.write(json.dumps(entry, sort_keys=True) + "\n")
        print(f"wrote {len(got)} results to {GOLDEN}")
        return 0
    golden = {}
    with open(golden_path) as f:
        for line in f:
            g = json.loads(line)
            golden[g.pop("name")] = g
    failures = 0
    by_name = {item[0]: item for item in items}
    for k, (name, r) in enumerate(got):
        want = golden.get(name)
        for _ in range(2):
            if want is None or matches(want, summary(r)):
                break
            if args.in_process:
                r = run_in_process(args.root, by_name[name])[1]
            else:
                r = run(args.tilescope, args.root, by_name[name])[1]
            got[k] = (name, r)
        if want is None:
            print(f"{name}: not in {GOLDEN} (a new input: rerun with --update and review)")
            failures += 1
        elif not matches(want, summary(r)):
            failures += 1
            print(f"{name}: the static reward changed")
            print("  golden: " + json.dumps(want, sort_keys=True))
            print("  now:    " + json.dumps(summary(r), sort_keys=True))
            print("  result: " + json.dumps(r, sort_keys=True)[:3000])
    for name in sorted(set(golden) - {n for n, _ in got}):
        print(f"{name}: in {GOLDEN} but no longer an input (rerun with --update)")
        failures += 1
    print(f"{len(got)} inputs, {failures} differ from {GOLDEN}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
