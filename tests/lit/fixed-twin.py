#!/usr/bin/env python3
"""Writes the fixed twin of a bug-corpus kernel (tests/lit/bugs/) to stdout.

Every line holding `// FIX:` is replaced by its indentation followed by the
text after the marker; ` ;; ` separates several lines; an empty text drops the
line. So `mbarrier.wait(bar, parity = 1)  // FIX: mbarrier.wait(bar, parity = 0)`
corrects a line, `// FIX: cta.sync()` on a line of its own adds one, and
`cta.sync()  // FIX:` removes one. A file without a marker is an error (exit 2):
a twin identical to its bug would make the fixed-twin run meaningless.
"""
import re
import sys

MARK = re.compile(r"^(\s*)(.*?)\s*//\s*FIX:(.*)$")


def twin(lines):
    out, fixes = [], 0
    for line in lines:
        m = MARK.match(line)
        if not m:
            out.append(line)
            continue
        fixes += 1
        indent, fix = m.group(1), m.group(3).strip()
        if fix:
            out.extend(indent + part.rstrip() + "\n" for part in fix.split(" ;; "))
    return out, fixes


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: fixed-twin.py FILE")
    with open(sys.argv[1]) as f:
        out, fixes = twin(f.readlines())
    if fixes == 0:
        print(f"{sys.argv[1]}: no // FIX: marker", file=sys.stderr)
        sys.exit(2)
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
