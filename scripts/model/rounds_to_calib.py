#!/usr/bin/env python3
"""Joins the rounds of a device run (scripts/model/run_model3_dev.sh: files of
calib.py rows, a line "# SET" before each set's rows and its header) into one
CSV that `tilescope calibrate --data` and `tune --measured` read, with a first
column `set` = PREFIX-rN-SET (N the round, in the order given).

Usage: rounds_to_calib.py PREFIX OUT.csv ROUND1.csv [ROUND2.csv ...]
"""
import csv
import sys


def main():
    prefix, out_path, rounds = sys.argv[1], sys.argv[2], sys.argv[3:]
    header = None
    rows = []
    for r, path in enumerate(rounds, 1):
        part = None
        with open(path) as f:
            for line in f:
                line = line.rstrip("\n")
                if not line:
                    continue
                if line.startswith("# "):
                    part = line[2:].strip()
                    continue
                fields = next(csv.reader([line]))
                if fields[0] == "name":
                    header = header or fields
                    continue
                rows.append([f"{prefix}-r{r}-{part}"] + fields)
    if header is None:
        print("no rows", file=sys.stderr)
        return 1
    with open(out_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["set"] + header)
        w.writerows(rows)
    print(f"{len(rows)} rows, {sum(1 for x in rows if x[header.index('ok') + 1] != 'True')} not ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
