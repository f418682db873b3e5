#!/usr/bin/env python3
"""Writes the RMSNorm tuning table (model/tables/rmsnorm_bf16_family.h100.json)
from a run's results: for every measured shape (R, H), the family's named
point that was fastest on the H100 in the screening round (all candidates
timed round-robin), with its time and Triton's best num_warps (from the
final round, more runs, where the point was a finalist).

    make_table.py RESULTS.json TILESCOPE OUT.json [NOTE]

Names in the results are rf_POINT (run 2) or rms_hH_TAG (run 1, mapped to
the named points by their parameters). A point whose hash `tilescope space`
does not list is an error: the table must name points of the family.
"""
import json
import subprocess
import sys

ROOT_TILE = "kernels/rmsnorm_family.tile"


def named_points(tilescope):
    pts = {}
    for line in open(ROOT_TILE):
        line = line.strip()
        if line.startswith("point "):
            name = line[len("point "):line.index("(")]
            args = line[line.index("(") + 1:line.rindex(")")].replace(" ", "")
            pts[name] = args
    space = subprocess.run([tilescope, "space", ROOT_TILE], capture_output=True, text=True).stdout
    hashes = {}
    for line in space.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0] == "valid" and "hash" in parts:
            hashes[parts[1]] = parts[parts.index("hash") + 1]
    return pts, hashes


def main():
    results = json.load(open(sys.argv[1]))
    tilescope, out = sys.argv[2], sys.argv[3]
    note = sys.argv[4] if len(sys.argv) > 4 else ""
    pts, hashes = named_points(tilescope)
    entries = []
    for row in results["shapes"]:
        r, h = row["R"], row["H"]
        times = row["screen_us"]  # every candidate, one round-robin
        final = row.get("final_us", {})
        best = None
        for name, us in times.items():
            if name.startswith("triton") or name.endswith("_ef"):
                continue
            point = None
            if name.startswith("rf_"):
                point = name[len("rf_"):]
            elif name.startswith(f"rms_h{h}_"):
                point = name[len(f"rms_h{h}_"):] + f"_h{h}"
            if point not in pts:
                continue
            if best is None or us < best[1]:
                best = (point, us)
        if best is None:
            continue
        tri = row["triton_best"]
        setting = pts[best[0]]
        name = next(n for n in times if n.endswith(best[0]) or n == f"rms_h{h}_" + best[0][:best[0].rindex("_h")])
        # The finalists' times where the point was one of them (more runs).
        src = final if name in final and tri in final else times
        entries.append({"shape": {"R": r, "H": h}, "point": setting, "named": best[0],
                        "hash": hashes[setting], "verdict": "proved",
                        "measured_us": round(src[name], 3), "triton_us": round(src[tri], 3),
                        "triton": tri, "round": "final" if src is final else "screen"})
    table = {"kernel": "rmsnorm_bf16_family", "target": "h100",
             "machine": "NVIDIA H100 80GB HBM3", "measured": True, "note": note,
             "entries": entries}
    json.dump(table, open(out, "w"), indent=2, sort_keys=True)
    open(out, "a").write("\n")


if __name__ == "__main__":
    main()
