#!/usr/bin/env python3
"""The name POINTS.txt gives the point SET of H (build.sh's sweep picks).

    point_name.py FAMILY.tile POINTS.txt H SET

SET as `tilescope lower --auto` prints it (K=V,... in the order of the
family's params); POINTS.txt's lines are 'H name SET' with SET a named point
of FAMILY.tile or K=V,... Prints the name; exit 1 when no line matches."""
import re
import sys


def canon(s):
    return ",".join(sorted(p.replace(" ", "") for p in s.split(",")))


def named_points(tile):
    """{point name: its K=V,... text} of the family's `point` lines."""
    return {m.group(1): m.group(2).replace(" ", "")
            for m in re.finditer(r"^\s*point\s+(\w+)\(([^)]*)\)", open(tile).read(), re.M)}


def settings(tile, points):
    """{(H, name): K=V,...} of a POINTS.txt file."""
    named = named_points(tile)
    out = {}
    for line in open(points):
        f = line.split()
        if len(f) == 3:
            out[(f[0], f[1])] = named.get(f[2], f[2])
    return out


def main():
    tile, points, h, want = sys.argv[1:5]
    for (ph, name), setting in settings(tile, points).items():
        if ph == h and canon(setting) == canon(want):
            print(name)
            return
    sys.exit(f"point_name.py: no point of H {h} in {points} is {want}")


if __name__ == "__main__":
    main()
