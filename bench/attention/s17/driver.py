#!/usr/bin/env python3
"""helper attn4 (session 17): bench/attention/driver.py with a load check: a
variant whose shared library or symbols do not load is reported and left out
(in session 17's first slot one bad symbol name lost every row).
driver.py SODIR PLAN: PLAN lines `D S1,S2 full|causal LABEL=SO:KERNEL ...`."""
import json
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attention_timing as at  # noqa: E402

sodir, plan = sys.argv[1], sys.argv[2]
for line in open(plan):
    f = line.split()
    if not f or f[0].startswith("#"):
        continue
    os.environ["ATTN_D"] = f[0]
    variants = []
    for v in f[3:]:
        label, rest = v.split("=")
        so, kernel = rest.split(":")
        path = os.path.join(sodir, so)
        try:
            at.load_lib(path, kernel)
        except Exception as ex:
            print(json.dumps({"skip": label, "why": str(ex)[:300]}), flush=True)
            continue
        variants.append((label, path, kernel))
    for S in f[1].split(","):
        try:
            at.timing(int(S), f[2] == "causal", variants)
        except Exception as ex:  # keep the other rows
            print(json.dumps({"error": str(ex)[:300], "line": line.strip(), "S": S}), flush=True)
