#!/usr/bin/env python3
"""helper attn6 (session 19): s19/run.sh's ncu.txt (blocks `===== ncu LABEL: ...`, each
ncu's `--page details` text) as one table, a row per metric, a column per label.
ncu_table.py NCU_TXT [REGEX]: only the metrics whose section or name match REGEX."""
import re
import sys

cols, rows, order = [], {}, []
label, section = None, ""
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("===== ncu "):
        label = line.split()[2].rstrip(":")
        cols.append(label)
        continue
    s = line.strip()
    if s.startswith("Section: "):
        section = s[len("Section: "):]
        continue
    parts = re.split(r"\s{2,}", s)
    if len(parts) == 2 and re.fullmatch(r"[-+0-9.,e]+", parts[1]):
        parts = [parts[0], "", parts[1]]
    if label is None or len(parts) != 3 or set(s) <= set("- ") or parts[0] == "Metric Name":
        continue
    key = (section, parts[0], parts[1])
    if key not in rows:
        rows[key] = {}
        order.append(key)
    rows[key][label] = parts[2]
pat = re.compile(sys.argv[2]) if len(sys.argv) > 2 else None
print("| section | metric | unit | " + " | ".join(cols) + " |")
print("|" + "---|" * (3 + len(cols)))
for key in order:
    if pat and not (pat.search(key[0]) or pat.search(key[1])):
        continue
    print("| " + " | ".join(key) + " | " + " | ".join(rows[key].get(c, "") for c in cols) + " |")
