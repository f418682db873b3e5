#!/usr/bin/env python3
"""The simulate stage of every library kernel (kernels/*.tile, each kernel
against its own `// problem:` line as the task's problem) at the given seeds:
one line per kernel and seed with the stage's status, outcome per size and ms.
usage: libsim.py TILESCOPE ROOT CACHE_DIR SEED..."""
import json, os, re, subprocess, sys

tilescope, root, cache = sys.argv[1], sys.argv[2], sys.argv[3]
seeds = sys.argv[4:]
for f in sorted(os.listdir(os.path.join(root, "kernels"))):
    if not f.endswith(".tile"):
        continue
    path = os.path.join(root, "kernels", f)
    problem = None
    pairs = []
    for line in open(path):
        m = re.match(r"//\s*problem:\s*(.*\S)", line)
        if m:
            problem = m.group(1)
        m = re.match(r"kernel\s+(\w+)", line)
        if m and problem:
            pairs.append((m.group(1), problem))
            problem = None
    for kernel, problem in pairs:
        for s in seeds:
            out = subprocess.run([tilescope, "reward", path, "--kernel", kernel, "--problem", problem,
                                  "--seed", s, "--json", "--cache", cache],
                                 capture_output=True, text=True, timeout=900)
            try:
                d = json.loads(out.stdout)
                k = d["kernels"][0]
                st = {x["name"]: x for x in k["stages"]}["simulate"]
                sizes = " ".join(f"{z.get('role','')}:{z.get('outcome', z.get('status',''))}"
                                 for z in st.get("sizes", []))
                print(f"{f} {kernel} seed {s}: {st['status']} [{sizes}] {st.get('ms')} ms", flush=True)
            except Exception as e:
                print(f"{f} {kernel} seed {s}: ERROR {out.stdout[-300:]} {out.stderr[-300:]}", flush=True)
