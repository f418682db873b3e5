"""Issue 17, item 2: one thread-index map. A thread's lane, warp, warpgroup,
tid_in_wg and wid_in_wg are computed by ir/ThreadIndex.h (concrete values
and CUDA text; ir/WarpShape.h its constants) and proof/ProtoEncoding.h (Z3
terms) only. Lists every place in the C++ of the passes that computes one
of them again from a thread index with the warp or warpgroup size written
out: a builtin case or binding returning `t % 32`-style arithmetic, a
thread-like name (t, tx, tid, thread, agent, x.t) divided or taken modulo
32 or 128, or a witness spelling "warp {}, lane {}". Usage:
check-thread-map.py ROOT [EXTRA_FILE...]. Exits 1 when there is one."""
import os
import re
import sys

root = sys.argv[1]
folders = ["ir", "sync", "proof", "verifier", "racecheck", "simulator", "codegen", "ptx",
           "dispatch", "layoutviz", "check", "model", "reward", "tools"]
owners = {"ir/ThreadIndex.h", "ir/ThreadIndex.cpp", "ir/WarpShape.h", "proof/ProtoEncoding.h"}

builtin = r"BuiltinKind::(laneid|warpid|wgid|tid_in_wg|wid_in_wg)"
size = r"(32|128|31|127)\b"
patterns = [
    ("a thread builtin computed", re.compile(builtin + r"\s*[,:)].*?(/|%|>>|&)\s*\d")),
    ("a thread index divided by a warp size",
     re.compile(r"(\b(t|tx|tid|thread|threads\.begin|agent)\b|\.t\b|\.agent\b|\*tid\b)\)?\s*(/|%)\s*" + size)),
    ("a thread named by hand", re.compile(r"warp \{\}, lane \{\}")),
]


def strip_comment(line):
    at = line.find("//")
    return line if at < 0 else line[:at]


def scan(path, shown):
    found = 0
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    for n, line in enumerate(lines, 1):
        code = strip_comment(line)
        # A builtin case whose return is on the next line.
        if re.search(r"case " + builtin + r":\s*$", code) and n < len(lines):
            code = code + " " + strip_comment(lines[n])
        for what, pattern in patterns:
            if pattern.search(code):
                print("%s:%d: %s: %s" % (shown, n, what, line.strip()))
                found += 1
                break
    return found


found = 0
for folder in folders:
    for dirpath, _, filenames in os.walk(os.path.join(root, folder)):
        for f in sorted(filenames):
            if not f.endswith((".cpp", ".h")):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)
            if rel not in owners:
                found += scan(path, rel)
for extra in sys.argv[2:]:
    found += scan(extra, os.path.basename(extra))
print("%d thread-index computations outside the map" % found)
sys.exit(1 if found else 0)
