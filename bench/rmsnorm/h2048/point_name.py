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


tile, points, h, want = sys.argv[1:5]
named = {m.group(1): canon(m.group(2))
         for m in re.finditer(r"^\s*point\s+(\w+)\(([^)]*)\)", open(tile).read(), re.M)}
for line in open(points):
    f = line.split()
    if len(f) == 3 and f[0] == h and canon(named.get(f[2], f[2])) == canon(want):
        print(f[1])
        sys.exit(0)
sys.exit(f"point_name.py: no point of H {h} in {points} is {want}")
