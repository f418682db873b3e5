#!/usr/bin/env python3
"""helper attn2: one process for every timing of a slot (attention_timing.timing
per configuration; saves the torch start-up of separate processes).
driver.py SODIR PLAN: PLAN lines `D S1,S2 full|causal LABEL=SO:KERNEL ...`."""
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
        variants.append((label, os.path.join(sodir, so), kernel))
    for S in f[1].split(","):
        try:
            at.timing(int(S), f[2] == "causal", variants)
        except Exception as ex:  # keep the other rows
            print('{"error": %r, "line": %r, "S": %s}' % (str(ex)[:300], line.strip(), S), flush=True)
