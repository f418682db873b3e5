"""Issue 17, item 2: one memory-scope enum. Lists every C++ enum of ROOT's
passes, other than MemScope (ir/Stmt.h), whose enumerators name both global
and shared memory: a second memory-scope enum. Usage:
check-scope-enums.py ROOT [EXTRA_FILE...]. Exits 1 when there is one."""
import os
import re
import sys

root = sys.argv[1]
folders = ["ir", "sync", "proof", "verifier", "racecheck", "simulator", "codegen", "ptx",
           "dispatch", "layoutviz", "check", "model", "reward", "tools", "python"]
enum = re.compile(r"\benum\s+(class\s+|struct\s+)?(\w+)\s*(:\s*[\w:]+\s*)?\{([^}]*)\}", re.S)


def scan(path, shown):
    text = open(path, errors="replace").read()
    found = 0
    for m in enum.finditer(text):
        names = {n.split("=")[0].strip() for n in m.group(4).split(",")}
        if m.group(2) != "MemScope" and {"Global", "Shared"} <= names:
            line = text.count("\n", 0, m.start()) + 1
            print("%s:%d: enum %s names global and shared memory again" %
                  (shown, line, m.group(2)))
            found += 1
    return found


found = 0
for folder in folders:
    for dirpath, _, filenames in os.walk(os.path.join(root, folder)):
        for f in sorted(filenames):
            if f.endswith((".cpp", ".h")):
                path = os.path.join(dirpath, f)
                found += scan(path, os.path.relpath(path, root))
for extra in sys.argv[2:]:
    found += scan(extra, os.path.basename(extra))
print("%d memory-scope enums besides MemScope" % found)
sys.exit(1 if found else 0)
