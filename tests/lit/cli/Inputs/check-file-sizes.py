"""Issue 17, item 4: no source file above about 900 lines. Lists every
source file of ROOT (C++, CUDA, Python, JavaScript: the files git tracks,
or every such file outside build folders when ROOT is not a checkout) with
more than LIMIT lines (default 900), largest first. Usage:
check-file-sizes.py ROOT [LIMIT]. Exits 1 when there is one."""
import os
import subprocess
import sys

root = sys.argv[1]
limit = int(sys.argv[2]) if len(sys.argv) > 2 else 900
endings = (".cpp", ".h", ".cuh", ".py", ".cu", ".mjs", ".js")

try:
    listed = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True,
                            check=True).stdout.splitlines()
except (OSError, subprocess.CalledProcessError):
    listed = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames
                       if not d.startswith((".", "build")) and d != "node_modules"]
        listed += [os.path.relpath(os.path.join(dirpath, f), root) for f in filenames]

sizes = []
for path in listed:
    if not path.endswith(endings):
        continue
    full = os.path.join(root, path)
    if not os.path.isfile(full):
        continue
    with open(full, "rb") as f:
        lines = f.read().count(b"\n")
    if lines > limit:
        sizes.append((lines, path))
for lines, path in sorted(sizes, reverse=True):
    print("%s: %d lines (more than %d)" % (path, lines, limit))
print("%d source files above %d lines" % (len(sizes), limit))
sys.exit(1 if sizes else 0)
