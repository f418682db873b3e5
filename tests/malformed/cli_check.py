"""What the malformed-input harnesses share (tests/malformed/run.py for tile
IR and layouts, tests/ptx/mutate.py for PTX): run the tilescope CLI on one
input and record a failure unless it ends with an allowed exit status, exit 2
comes with a `file:line:col: error:` diagnostic, and nothing crashed or hung."""
import os
import re
import subprocess

DIAG = re.compile(rb"^[^\n:]+:\d+:\d+: error: ", re.M)
# A run past this is a hang: the tool's wall-time backstop (60 s) times the
# build's time slack, which ctest passes (8 in the sanitized build, whose
# budgets count every time limit 8 times over: docs/robustness.md).
HANG_S = 60 * int(os.environ.get("TILESCOPE_TIME_SLACK", "1"))


def run(tool, args, label, failures, allowed=(2,)):
    try:
        p = subprocess.run([tool] + args, capture_output=True, timeout=HANG_S)
    except subprocess.TimeoutExpired:
        failures.append(f"{label}: hung (over {HANG_S} s)")
        return
    if p.returncode not in allowed:
        failures.append(f"{label}: exit status {p.returncode}, expected {allowed}\n"
                        f"{p.stderr[:400]!r}")
    elif p.returncode == 2 and not DIAG.search(p.stderr):
        failures.append(f"{label}: no file:line:col diagnostic\n{p.stderr[:400]!r}")
    elif b"Stack dump" in p.stderr or b"terminate called" in p.stderr:
        failures.append(f"{label}: crashed\n{p.stderr[:400]!r}")


def report(failures, summary):
    """Prints each failure and the summary line; the exit status (1 on any failure)."""
    for f in failures:
        print("FAIL:", f)
    print(summary)
    return 1 if failures else 0
