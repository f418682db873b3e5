#!/usr/bin/env python3
"""One line per `codegen/gpu_bench.sh` result (results.jsonl on stdin): the row name and
the figures docs/perf.md quotes."""
import json
import sys

KEYS = ["ms", "cublas_ms", "ratio_vs_cublas", "triton_ms", "ratio_vs_triton", "rel_err",
        "unwritten", "bit_identical", "compared", "ok"]
for line in sys.stdin:
    if line[:1].isspace():
        continue
    name, _, rest = line.partition(" ")
    try:
        r = json.loads(rest)
    except ValueError:
        print(line.strip()[:200])
        continue
    print(name, {k: (round(r[k], 5) if isinstance(r[k], float) else r[k]) for k in KEYS if k in r})
