#!/usr/bin/env python3
"""scripts/model/best_measured.py SHAPES CSV... [--top N]: for each shape of SHAPES (lines MxNxK,
'#' comments) the family points timed there in the CSVs (calib.py's rows: point, M, N, K, ms,
cublas_ms, ok), best first by the median of their same-run ratios cuBLAS / ours, with the number
of rows. Points named before MCAST or EPI existed get their defaults (MCAST=1, EPI=1), so one
point's rows from old and new files meet. docs/perf.md ("Below 0.9x: the table's choice or the
kernel?")."""
import collections, csv, statistics, sys

args = sys.argv[1:]
top = 4
if "--top" in args:
    i = args.index("--top")
    top = int(args[i + 1])
    del args[i:i + 2]
shapes = [l.strip() for l in open(args[0]) if l.strip() and not l.startswith("#")]
ratios = collections.defaultdict(list)
for f in args[1:]:
    for row in csv.DictReader(open(f)):
        if row.get("ok") != "True":
            continue
        kv = dict(x.split("=") for x in row["point"].split(","))
        kv.setdefault("SPLIT", "1")
        kv.setdefault("MCAST", "1")
        kv.setdefault("EPI", "1")
        point = ",".join(f"{k}={v}" for k, v in kv.items())
        shape = f'{row["M"]}x{row["N"]}x{row["K"]}'
        ratios[(shape, point)].append(float(row["cublas_ms"]) / float(row["ms"]))
for s in shapes:
    ranked = sorted(((statistics.median(v), p, len(v)) for (sh, p), v in ratios.items() if sh == s),
                    reverse=True)
    print(f"{s}: {len(ranked)} points")
    for r, p, n in ranked[:top]:
        print(f"  {r:.3f} ({n} rows) {p}")
