#!/usr/bin/env python3
"""How far the rounds of one device run agree (docs/model.md, session 16).

Usage: rounds_agree.py DATA.csv
DATA.csv: rows as rounds_to_calib.py writes them (set PREFIX-rN-SET). Prints
the median and largest |ours round 2 / round 1 - 1| over the (point, shape,
set) triples timed in both rounds (and each that moved more than 10%), the same for cuBLAS, and per shape the fastest
point of each round with the gap to the runner-up (a gap below the rounds'
spread is a tie no model can be judged on)."""
import collections
import csv
import statistics
import sys


def main():
    rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["ok"] == "True"]
    by = collections.defaultdict(dict)  # (point, shape) -> round -> (ms, cublas)
    for r in rows:
        _, rnd, part = r["set"].split("-", 2)
        shape = f"{r['M']}x{r['N']}x{r['K']}"
        by[(r["point"], shape, part)][rnd] = (float(r["ms"]), float(r["cublas_ms"]))
    ours, cub = [], []
    for key, v in by.items():
        if "r1" in v and "r2" in v:
            ours.append(abs(v["r2"][0] / v["r1"][0] - 1))
            cub.append(abs(v["r2"][1] / v["r1"][1] - 1))
            if max(ours[-1], cub[-1]) > 0.1:
                print(f"  apart: {key[1]} {key[0]} ({key[2]}): ours {1000 * v['r1'][0]:.1f} / "
                      f"{1000 * v['r2'][0]:.1f} us, cuBLAS {1000 * v['r1'][1]:.1f} / {1000 * v['r2'][1]:.1f}")
    if ours:
        print(f"{len(ours)} pairs in both rounds: ours median {100 * statistics.median(ours):.1f}% "
              f"max {100 * max(ours):.1f}%; cuBLAS median {100 * statistics.median(cub):.1f}% "
              f"max {100 * max(cub):.1f}%")
    shapes = sorted({s for _, s, _ in by}, key=lambda s: [int(x) for x in s.split("x")])
    for s in shapes:
        line = [f"{s:>18}"]
        for rnd in ("r1", "r2"):
            t = sorted((v[rnd][0], p) for (p, sh, _), v in by.items() if sh == s and rnd in v)
            if not t:
                continue
            gap = f" (+{100 * (t[1][0] / t[0][0] - 1):.1f}% next)" if len(t) > 1 else ""
            line.append(f"{rnd} {len(t):2d} pts best {1000 * t[0][0]:8.1f} us {t[0][1]}{gap}")
        print("  ".join(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
