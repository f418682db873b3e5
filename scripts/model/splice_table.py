#!/usr/bin/env python3
"""scripts/model/splice_table.py TABLE.json TUNED.json [NOTE]: replaces TABLE's entries at the
shapes of TUNED's entries (a `tilescope tune` output) by TUNED's, appends those at new shapes,
and rewrites TABLE in the same form (sorted keys, two-space indent); NOTE, when given, is
appended to the table's note. How the H100 table took the entries of a later device run
(docs/model.md, "Tuning tables")."""
import json, sys

path, tuned = sys.argv[1:3]
table = json.load(open(path))
new = json.load(open(tuned))
key = lambda e: (e["shape"]["M"], e["shape"]["N"], e["shape"]["K"])
by_shape = {key(e): e for e in new["entries"]}
entries = []
for e in table["entries"]:
    entries.append(by_shape.pop(key(e), e))
entries.extend(by_shape.values())
table["entries"] = entries
if len(sys.argv) > 3:
    table["note"] += "; " + sys.argv[3]
with open(path, "w") as f:
    json.dump(table, f, indent=2, sort_keys=True)
    f.write("\n")
