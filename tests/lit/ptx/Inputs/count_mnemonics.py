#!/usr/bin/env python3
"""Counts the instructions of a PTX file's line ranges by mnemonic: the
independent count the hand-checked condense tests (condense-*.test) name
when they say how many instructions of a class a loop holds.

    count_mnemonics.py FILE A-B[,C-D ...] [-X-Y ...]
    count_mnemonics.py --regs FILE A-B    registers declared in A..B by type

With --regs the `.reg` declarations of the lines are summed by type (`%r<N>`
declares N, each name of a list or an inline `.reg .pred p;` one), the
figure condense prints as "registers declared".

Lines A..B (inclusive) are counted, minus the ranges after a `-` (an inner
loop's lines). A line counts when it holds an instruction: not a label, a
directive, a comment or a brace; guards (`@%p`, `@!%p`) are dropped and the
mnemonic with its modifiers is the first word. Inline-assembly scopes
`{ cvt.rn.bf16.f32 ...; }` count their instruction. A block inside a loop's
line range that the loop does not hold (a `trap` path, the exit's `bra`)
is counted too: compare with care there.
"""
import collections
import re
import sys


def ranges(args):
    keep, drop = [], []
    for arg in args:
        into = drop if arg.startswith("-") else keep
        for part in arg.lstrip("-").split(","):
            lo, hi = part.split("-")
            into.append((int(lo), int(hi)))
    return keep, drop


def registers(lines, keep):
    counts = collections.Counter()
    for number, line in enumerate(lines, 1):
        match = re.match(r"\s*\.reg\s+\.(\w+)\s+(.*);", line)
        if not match or not any(lo <= number <= hi for lo, hi in keep):
            continue
        for name in match.group(2).split(","):
            declared = re.search(r"<(\d+)>", name)
            counts[match.group(1)] += int(declared.group(1)) if declared else 1
    for kind, n in sorted(counts.items()):
        print(n, "." + kind)
    print("total", sum(counts.values()))
    return 0


def main():
    if sys.argv[1] == "--regs":
        return registers(open(sys.argv[2]).read().split("\n"), ranges(sys.argv[3:])[0])
    lines = open(sys.argv[1]).read().split("\n")
    keep, drop = ranges(sys.argv[2:])
    counts = collections.Counter()
    for number, line in enumerate(lines, 1):
        inside = any(lo <= number <= hi for lo, hi in keep)
        if not inside or any(lo <= number <= hi for lo, hi in drop):
            continue
        text = line.strip().strip("{} ").strip()
        if not text or text.startswith("//") or text.startswith(".") or text.endswith(":"):
            continue
        text = re.sub(r"^@!?%[\w{}]+\s+", "", text)
        counts[text.split()[0].rstrip(";")] += 1
    for mnemonic, n in sorted(counts.items()):
        print(n, mnemonic)
    print("total", sum(counts.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
