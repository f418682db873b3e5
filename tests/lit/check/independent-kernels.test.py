"""A kernel's verdict must not depend on the kernels checked before it in the
same process (proof/ProofContext.h: each kernel's proofs get a Z3 context
of their own). For each pair (A, B) of kernel files, writes one file holding
A's kernels and then B's, checks it, and compares the JSON of each of B's
kernels with that of B checked alone (the structural hash aside, which names
the source position). No budget runs in either, so that only the proofs'
answers are compared."""
import json
import pathlib
import subprocess
import sys

tilescope, work = sys.argv[1], pathlib.Path(sys.argv[2])
paths = [pathlib.Path(p) for p in sys.argv[3:]]
if len(paths) % 2 or not paths:
    sys.exit("give pairs of files")
work.mkdir(parents=True, exist_ok=True)


def kernels(path):
    p = subprocess.run([tilescope, "check", "--json", "--timeout-ms", "0", "--wall-timeout-ms",
                        "0", str(path)], capture_output=True, text=True)
    doc = json.loads(p.stdout)
    out = {}
    for f in doc.get("files", [doc]):
        for k in f.get("kernels", []):
            out[k["name"]] = json.dumps({x: y for x, y in k.items() if x != "hash"},
                                        sort_keys=True)
    return out


differences = 0
for i in range(0, len(paths), 2):
    first, second = paths[i], paths[i + 1]
    both = work / f"pair{i // 2}.tile"
    both.write_text(first.read_text() + "\n" + second.read_text())
    alone, after = kernels(second), kernels(both)
    if not alone:
        sys.exit(f"{second.name}: no kernel checked")
    for name, verdict in alone.items():
        if after.get(name) != verdict:
            differences += 1
            print(f"{name} ({second.name}) after {first.name}:\n  alone: {verdict}\n  after: "
                  f"{after.get(name)}")
        else:
            print(f"{name} ({second.name}) after {first.name}: {json.loads(verdict)['verdict']}, "
                  "the same")
print(f"{differences} differences")
sys.exit(1 if differences else 0)
