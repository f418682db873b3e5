#!/usr/bin/env python3
"""scripts/model/gemm_to_calib.py RESULTS.csv POINTS OUT.csv: gemm_run.py's rows as calib.py's
(name,point,M,N,K,ms,ms_min,cublas_ms,ok,rel_err,gpu) for `tilescope tune
--measured`; POINTS: lines NAME POINT (gen.sh's list) or points.csv."""
import csv, sys
res, pts, out = sys.argv[1:4]
point = {}
if pts.endswith(".csv"):
    for r in csv.DictReader(open(pts)):
        point[r["name"]] = r["point"]
else:
    for line in open(pts):
        f = line.split()
        if len(f) >= 2 and not f[0].startswith("#") and f[1] != "-" and len(f) == 2:
            point[f[0]] = f[1]
w = csv.writer(open(out, "w", newline=""))
w.writerow(["set", "name", "point", "M", "N", "K", "ms", "ms_min", "cublas_ms", "ok", "rel_err", "gpu"])
for r in csv.DictReader(open(res)):
    if r["name"] not in point or not r["us"]:
        continue
    w.writerow([sys.argv[4] if len(sys.argv) > 4 else "gemm", r["name"], point[r["name"]], r["M"], r["N"], r["K"], f"{float(r['us'])/1e3:.5f}",
                f"{float(r['us_min'])/1e3:.5f}", f"{float(r['cublas_us'])/1e3:.5f}", r["ok"],
                r["rel_err"], r["gpu"]])
