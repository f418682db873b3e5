#!/usr/bin/env python3
"""Drops the rows of a calib.py CSV whose median is more than SPREAD times
their fastest run (default 1.10): rows where delays outside the kernel (the
host, when the GPU machine's CPUs were shared with another job) hit a good
part of the timed runs. Uses the row's own times only, never a prediction.

Usage: drop_noisy.py IN.csv OUT.csv [SPREAD]"""
import csv
import sys


def main():
    src, dst = sys.argv[1], sys.argv[2]
    spread = float(sys.argv[3]) if len(sys.argv) > 3 else 1.10
    with open(src) as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames, list(reader)
    kept = [r for r in rows if r["ok"] == "True" and float(r["ms"]) <= spread * float(r["ms_min"])]
    with open(dst, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(kept)
    print(f"{len(kept)} of {len(rows)} rows kept (median <= {spread} x fastest)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
