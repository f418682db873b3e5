#!/usr/bin/env python3
"""Writes measured entries into the RMSNorm tuning table
(model/tables/rmsnorm_bf16_family.h100.json): for each R,H,NAME the
candidate NAME of bench_rms2.py's results at R x H (the sweep phase), with
its median and Triton's best, replacing the table's entry of that shape in
place or adding one at the end. NAME is a point of POINTS.txt or POINTS2.txt (build.sh's lists);
a name of POINTS2 (lowered with --evict-first X) gets "evict_first": ["X"].

    set_entries.py TABLE RESULTS.json TILESCOPE POINTS POINTS2 NOTE R,H,NAME ...

The point's hash is `tilescope space`'s; a point that is not valid there is
an error (the table names points of the family)."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from point_name import canon, settings  # noqa: E402

TILE = "kernels/rmsnorm_family.tile"


def hashes(tilescope):
    out = subprocess.run([tilescope, "space", TILE], capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 4 and f[0] == "valid" and "hash" in f:
            found[canon(f[1])] = (f[1], f[f.index("hash") + 1])
    return found


def main():
    table_path, results_path, tilescope, points, points2, note = sys.argv[1:7]
    table = json.load(open(table_path))
    results = json.load(open(results_path))
    plain, ef = settings(TILE, points), settings(TILE, points2)
    known = hashes(tilescope)
    named = {canon(v): k for k, v in __import__("point_name").named_points(TILE).items()}
    for spec in sys.argv[7:]:
        r, h, name = spec.split(",")
        setting = plain.get((h, name)) or ef.get((h, name))
        if setting is None or canon(setting) not in known:
            sys.exit(f"set_entries.py: {name} is no valid point of H {h}")
        text, digest = known[canon(setting)]
        row = next(e for e in results["shapes"]
                   if e["R"] == int(r) and e["H"] == int(h) and "pick" in e)
        tri = row["best_triton"]
        entry = {"shape": {"H": int(h), "R": int(r)}, "point": text, "hash": digest,
                 "verdict": "proved", "round": note,
                 "measured_us": round(row["cands"][name]["median"], 3),
                 "triton": tri, "triton_us": round(row["cands"][tri]["median"], 3)}
        if canon(setting) in named:
            entry["named"] = named[canon(setting)]
        if (h, name) in ef:
            entry["evict_first"] = ["X"]
        # In place (nearest-entry ties go by table order), else at the end.
        at = [i for i, e in enumerate(table["entries"]) if e["shape"] == entry["shape"]]
        if at:
            table["entries"][at[0]] = entry
        else:
            table["entries"].append(entry)
    json.dump(table, open(table_path, "w"), indent=2, sort_keys=True)
    open(table_path, "a").write("\n")


if __name__ == "__main__":
    main()
