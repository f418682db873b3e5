#!/usr/bin/env python3
"""The anti-hacking corpus (tests/reward/hacks): every HACK.tile must fail the
stage its `// EXPECT: STAGE CODE` line names, with a diagnostic of that code,
and its honest twin HACK.honest.tile must pass every stage, both rewarded
against the task's problem of its `// PROBLEM:` line (the candidates' own
`// problem:` lines are not read by the reward). A hack that is right but
slower, `// EXPECT: performance below-twin`, must pass with its performance
stage scored (not skipped) and earn a performance credit and a score
strictly below its honest twin's: a way out of the performance model's
reach must lower the reward. A hack marked `// NEEDS:
WHAT` depends on simulator work that may not have landed: while it still
passes it is reported as an expected failure, and once it fails as expected
the script says to drop the marker. A hack with a `// DTYPES: A=f32,...`
line is rewarded, with its twin, against a task that also names those
element types (`--dtypes`).

Every diagnostic code the corpus produces must be listed in docs/reward.md
(given as DOC).

usage: run_hacks.py TILESCOPE HACKS_DIR DOC [--seed S]
"""
import json
import os
import re
import subprocess
import sys


def header(path, key):
    with open(path) as f:
        for line in f:
            m = re.match(r"//\s*" + key + r":\s*(.*\S)", line)
            if m:
                return m.group(1)
    return None


def reward(tilescope, path, problem, seed, dtypes=None):
    out = subprocess.run(
        [tilescope, "reward", path, "--problem", problem, "--seed", str(seed), "--json"] +
        (["--dtypes", dtypes] if dtypes else []),
        capture_output=True, text=True, timeout=600)
    try:
        return out.returncode, json.loads(out.stdout)
    except json.JSONDecodeError:
        return out.returncode, {"error": out.stdout + out.stderr}


def below_twin(name, stage, rc, hack, twin):
    """What is wrong with a right-but-slower hack against its twin (none: [])."""
    def scored(result):
        k = (result.get("kernels") or [{}])[0]
        s = {x["name"]: x for x in k.get("stages", [])}.get(stage, {})
        return k.get("score"), s.get("status"), s.get("credit")
    (hs, hstatus, hcredit), (ts, tstatus, tcredit) = scored(hack), scored(twin)
    if rc != 0 or hack.get("verdict") != "pass" or hstatus != "pass" or tstatus != "pass":
        return [f"{name}: expected the hack to pass with stage '{stage}' scored; got exit {rc}, "
                f"{hack.get('verdict')}, {stage} {hstatus} (twin: {tstatus})"]
    if not (hcredit < tcredit and hs < ts):
        return [f"{name}: expected a {stage} credit and a score below the twin's; got "
                f"{hcredit} and {hs} against {tcredit} and {ts}"]
    print(f"{name}: {stage} credit {hcredit:.3f} and score {hs:.3f}, below the twin's "
          f"{tcredit:.3f} and {ts:.3f}")
    return []


def main():
    tilescope, hacks, doc = sys.argv[1], sys.argv[2], sys.argv[3]
    documented = open(doc).read()
    seen = set()
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 20261125
    failures, xfails, count = [], [], 0
    for name in sorted(os.listdir(hacks)):
        if not name.endswith(".tile") or name.endswith(".honest.tile"):
            continue
        count += 1
        hack = os.path.join(hacks, name)
        twin = hack[:-len(".tile")] + ".honest.tile"
        problem, expect = header(hack, "PROBLEM"), header(hack, "EXPECT")
        needs = header(hack, "NEEDS")
        dtypes = header(hack, "DTYPES")
        if not problem or not expect or not os.path.exists(twin):
            failures.append(f"{name}: needs // PROBLEM:, // EXPECT: and an .honest.tile twin")
            continue
        stage, code = expect.split()
        rc, result = reward(tilescope, hack, problem, seed, dtypes)
        kernels = result.get("kernels", [])
        stages = {s["name"]: s for s in kernels[0]["stages"]} if kernels else {}
        got = stages.get(stage, {})
        codes = [d["code"] for d in got.get("diagnostics", [])]
        for k in kernels:
            for s in k["stages"]:
                seen.update(d["code"] for d in s["diagnostics"])
        hack_rc, hack_result = rc, result
        if code == "below-twin":
            caught, what = True, None  # judged against the twin below
        else:
            caught = rc != 0 and got.get("status") == "fail" and code in codes
            what = (f"{name}: expected stage '{stage}' to fail with {code}; got exit {rc}, "
                    f"{stage} {got.get('status')} {codes}")
        if not caught:
            (xfails if needs else failures).append(what)
        elif needs:
            print(f"note: {name} now fails as expected; drop its '// NEEDS: {needs}' line")
        rc, result = reward(tilescope, twin, problem, seed, dtypes)
        if code == "below-twin":
            failures.extend(below_twin(name, stage, hack_rc, hack_result, result))
        if rc != 0 or result.get("verdict") != "pass":
            bad = [(s["name"], s["status"]) for k in result.get("kernels", [])
                   for s in k["stages"] if s["status"] not in ("pass", "skipped")]
            failures.append(f"{os.path.basename(twin)}: the honest twin must pass; got exit {rc}, "
                            f"{bad or result.get('error')}")
    for code in sorted(seen):
        if f"`{code}`" not in documented:
            failures.append(f"code {code} is not in the table of docs/reward.md")
    for x in xfails:
        print("expected failure (NEEDS):", x)
    for f in failures:
        print("FAIL:", f)
    print(f"{count} hacks, {count - len(failures) - len(xfails)} caught, "
          f"{len(xfails)} waiting on NEEDS, {len(failures)} failures (seed {seed})")
    return 1 if failures or count < 12 else 0


if __name__ == "__main__":
    sys.exit(main())
