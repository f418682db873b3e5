"""Runs `tilescope check --json` on each bug/twin file of the corpus with and
without TILESCOPE_SLOW_CLOCK=20 and fails on any difference of exit status or
JSON.

Both runs have the same real wall-time backstop (an hour), so the only
difference between them is that the budgets' clock reads 20 times the
elapsed time in the second. A first version gave the 20x run the same
budget in clock units (600 s on the 20x clock: 30 s of real time) and was
flaky: on the shared 2-core box at load 16, grouped-order-mod-4.tile takes
8.8 s of CPU and 37 s of wall time, so the 20x run legitimately ran out of
its backstop (`budget`) while the plain one did not; and at load 27 a plain
run with a 600 s backstop ran out too (the same file, 8 s of CPU, took 138 s
of wall time at load 26). Neither run has a
processor-time budget either: the same file's CPU time (8.8 to 10 s) sits at
the default `--timeout-ms` of 10 s, and processor time varies with the load
too; what is compared is what the verdicts read, not how long they take.

A query's answer under a fixed rlimit once depended on the machine's load
anyway (persistent-tail-extra-tile.tile's write coverage was proved or not
from one run to the next): Z3's default strategy for non-linear integer
queries bounds two of its steps by wall-clock time, so how much of the
rlimit was left for the last one depended on how fast the first two ran.
Z3's solvers no longer run those strategies (verifier/SolverBudget.cpp,
docs/robustness.md), and any difference between the two runs fails.

Usage: slow-clock-bugs.test.py TILESCOPE BUGS_DIR [--shard I/N]
With `--shard I/N` (tests/lit/shard.py) only the files of that shard are
checked: the slow-clock-bugs*.test files are the shards, which lit runs side
by side."""
import difflib
import os
import pathlib
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import shard as sharding  # noqa: E402  (tests/lit/shard.py)

argv = sys.argv[1:]
shard = sharding.take(argv)
tilescope, corpus = argv[0], pathlib.Path(argv[1])
files = sorted(corpus.glob("*.tile"))
if not files:
    sys.exit(f"no .tile files under {corpus}")
if shard:
    total = len(files)
    files = [f for f in files if sharding.holds(shard, f.name)]
    print(sharding.header(shard, len(files), total), flush=True)
SCALE = 20
BACKSTOP_MS = 3_600_000  # real milliseconds, in both runs
failures = 0
def check(f, scale):
    env = dict(os.environ)
    env.pop("TILESCOPE_SLOW_CLOCK", None)
    if scale != 1:
        env["TILESCOPE_SLOW_CLOCK"] = str(scale)
    p = subprocess.run([tilescope, "check", "--json", "--timeout-ms", "0",
                        "--wall-timeout-ms", str(BACKSTOP_MS * scale), str(f)],
                       env=env, capture_output=True, text=True)
    return (p.returncode, p.stdout)


for f in files:
    runs = [check(f, 1), check(f, SCALE)]
    if runs[0] != runs[1]:
        failures += 1
        print(f"{f.name}: exit {runs[0][0]} plain, {runs[1][0]} with a {SCALE}x clock")
        for line in difflib.unified_diff(runs[0][1].splitlines(), runs[1][1].splitlines(),
                                         "plain", f"{SCALE}x", lineterm="", n=1):
            print("  " + line)
    for scale, (code, _) in zip((1, SCALE), runs):
        if code == 4:
            failures += 1
            print(f"{f.name}: exit 4 (budget) with a {BACKSTOP_MS // 1000} s backstop "
                  f"({scale}x clock)")
print(f"{len(files)} files, {failures} differences")
sys.exit(1 if failures else 0)
