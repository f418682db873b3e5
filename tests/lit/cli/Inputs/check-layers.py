"""Checks the layering of docs/architecture.md: a folder includes headers of
its own and of folders on lower levels only. A listed folder may be a
subfolder of another (racecheck/dynamic): a file, and an included header,
belong to the longest listed folder their path starts with. Usage:
check-layers.py ROOT [ARCHITECTURE_MD]. Prints every include that runs up or
sideways, with its place; exits 1 when there is one."""
import os
import re
import sys

root = sys.argv[1]
doc = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "docs", "architecture.md")
block = re.search(r"```layers\n(.*?)```", open(doc).read(), re.S)
if not block:
    sys.exit("%s has no ```layers block" % doc)
level = {}
for line in block.group(1).splitlines():
    parts = line.split()
    if parts:
        for folder in parts[1:]:
            level[folder] = int(parts[0])



def folder_of(path):
    """The longest listed folder that `path` (relative to ROOT) lies in."""
    best = None
    for folder in level:
        if path.startswith(folder + "/") and (best is None or len(folder) > len(best)):
            best = folder
    return best


found = []
for folder in sorted(level):
    for dirpath, _, filenames in os.walk(os.path.join(root, folder)):
        for f in sorted(filenames):
            if not f.endswith((".cpp", ".h", ".cuh", ".cu")):
                continue
            path = os.path.join(dirpath, f)
            if folder_of(os.path.relpath(path, root)) != folder:
                continue  # a listed subfolder's file, checked with its own level
            for n, line in enumerate(open(path, errors="replace"), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                target = m and folder_of(m.group(1))
                if not target or target == folder:
                    continue
                if level[target] >= level[folder]:
                    found.append("%s:%d: %s (level %d) includes %s (level %d)" % (
                        os.path.relpath(path, root), n, folder, level[folder], target,
                        level[target]))
for f in found:
    print(f)
print("%d includes against the layers of %s" % (len(found), os.path.basename(doc)))
sys.exit(1 if found else 0)
