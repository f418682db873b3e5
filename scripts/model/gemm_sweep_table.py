#!/usr/bin/env python3
"""gemm_sweep_table.py DIR SWEEP_PAIRS POINTS.csv BUCKETS ROUND1.csv [ROUND2.csv [ROUND3.csv]]:
the markdown sweep table of docs/perf.md from gemm_run.py's rows: for each
(name, shape) of SWEEP_PAIRS, the point, whether the shape is a centre of the
table (BUCKETS: a comma-separated MxNxK list), ours and cuBLAS µs and the
ratio (round 1, and round 2's ratio when given), then the median and minimum
ratios and the count below 0.9 (over round 1, and round 2)."""
import csv, statistics, sys

pairs_file, points_file, buckets, r1 = sys.argv[2:6]
r2 = sys.argv[6] if len(sys.argv) > 6 else None
r3 = sys.argv[7] if len(sys.argv) > 7 else None
points = {r["name"]: r["point"] for r in csv.DictReader(open(points_file))}
buckets = set(buckets.split(","))


def load(path):
    rows = {}
    for r in csv.DictReader(open(path)):
        if r["us"]:
            rows[(r["name"], f'{r["M"]}x{r["N"]}x{r["K"]}')] = r
    return rows


one = load(r1)
two = load(r2) if r2 else {}
three = load(r3) if r3 else {}


def short(p):
    v = dict(kv.split("=") for kv in p.split(","))
    s = f'{v["BM"]}x{v["BN"]}, {v["STAGES"]} st., '
    s += "persistent" if v["PERSISTENT"] == "true" else "one CTA a tile"
    s += f', {v["ORDER"]}'
    for k in ("SPLIT", "MCAST", "EPI"):
        if v.get(k, "1") != "1":
            s += f', {k}={v[k]}'
    return s


print("| shape M×N×K | centre | point | ours µs | cuBLAS µs | cuBLAS / ours |" +
      (" round 2 |" if r2 else "") + (" round 3 |" if r3 else ""))
print("|---|---|---|---|---|---|" + ("---|" if r2 else "") + ("---|" if r3 else ""))
ratios1, ratios2, ratios3 = [], [], []
for line in open(pairs_file):
    line = line.strip()
    if not line:
        continue
    name, shape = line.split(",")
    r = one.get((name, shape))
    if r is None:
        print(f"| {shape} | | {name}: no row | | | |" + (" |" if r2 else ""))
        continue
    ratio = float(r["cublas_us"]) / float(r["us"])
    ratios1.append(ratio)
    cell2 = ""
    if r2:
        q = two.get((name, shape))
        if q:
            x = float(q["cublas_us"]) / float(q["us"])
            ratios2.append(x)
            cell2 = f" {x:.2f} |"
        else:
            cell2 = " — |"
    if r3:
        q = three.get((name, shape))
        if q:
            x = float(q["cublas_us"]) / float(q["us"])
            ratios3.append(x)
            cell2 += f" {x:.2f} |"
        else:
            cell2 += " — |"
    print(f'| {shape} | {"yes" if shape in buckets else "no"} | {name} {short(points[name])} | '
          f'{float(r["us"]):.1f} | {float(r["cublas_us"]):.1f} | {ratio:.2f} |{cell2}')
for label, rs in (("round 1", ratios1), ("round 2", ratios2), ("round 3", ratios3)):
    if rs:
        print(f"\n{label}: {len(rs)} shapes, median {statistics.median(rs):.3f}, "
              f"min {min(rs):.3f}, below 0.9: {sum(x < 0.9 for x in rs)}")
