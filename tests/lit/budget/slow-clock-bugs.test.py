"""Runs `tilescope check --json` on each bug/twin file of the corpus with and
without TILESCOPE_SLOW_CLOCK=20 and fails on any difference of exit status or
JSON."""
import difflib
import os
import pathlib
import subprocess
import sys

tilescope, corpus = sys.argv[1], pathlib.Path(sys.argv[2])
files = sorted(corpus.glob("*.tile"))
if not files:
    sys.exit(f"no .tile files under {corpus}")
failures = 0
for f in files:
    runs = []
    for scale in (None, "20"):
        env = dict(os.environ)
        env.pop("TILESCOPE_SLOW_CLOCK", None)
        if scale:
            env["TILESCOPE_SLOW_CLOCK"] = scale
        # A wall-time backstop of 600 s, 30 s at the 20x clock: enough on a
        # loaded machine, so that only a decision of the wall clock's own
        # (none may exist) can differ.
        p = subprocess.run([tilescope, "check", "--json", "--wall-timeout-ms", "600000", str(f)],
                           env=env,
                           capture_output=True, text=True)
        runs.append((p.returncode, p.stdout))
    if runs[0] != runs[1]:
        failures += 1
        print(f"{f.name}: exit {runs[0][0]} plain, {runs[1][0]} with a 20x clock")
        for line in difflib.unified_diff(runs[0][1].splitlines(), runs[1][1].splitlines(),
                                         "plain", "20x", lineterm="", n=1):
            print("  " + line)
    if runs[0][0] == 4:
        failures += 1
        print(f"{f.name}: exit 4 (budget) with a 600 s backstop")
print(f"{len(files)} files, {failures} differences")
sys.exit(1 if failures else 0)
