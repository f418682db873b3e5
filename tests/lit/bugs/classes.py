#!/usr/bin/env python3
"""Counts the bug / fixed-twin pairs of tests/lit per class of issue 16 and
keeps the class table of tests/lit/bugs/README.md in step with the files.

Every kernel of the bug corpus ends with a line `// CLASS: C...` naming the
classes of issue 16 (and 20.3, the device protocol of issue 20) it covers (16.1a .. 16.1f are the sub-bullets of class 1, 16.1g the exhaustive check's processes, 16.1h truncating division in the proofs, 16.1i the cluster's ordering graph, 16.1j the cluster's lifetime around operations on a peer, 16.1k fences under conditions, 16.1l the tcgen05 thread-sync fences;
`base` marks a pair of the general protocol corpus that no class of issue 16
is about). A tagged file is one pair when it holds a `// FIX:` marker (the
twin is built by fixed-twin.py) or when a sibling `NAME-fixed.tile` exists
(the dynamic race corpus). Class 11 (malformed and huge inputs) is not
bug/twin shaped: its inputs are counted where they live, the declared sizes
beyond the target's limits in tests/malformed/corpus/limits_*.tile and the
budget tests in tests/lit/budget.

  classes.py check ROOT   fails (exit 1) when a corpus file has no tag, a tag
                          is unknown, a class 1-10 has fewer than 3 pairs or
                          class 11 fewer than 1 input, or the README table is
                          not the one this script writes;
  classes.py write ROOT   rewrites the README table.
ROOT is the repository root.
"""
import os
import re
import sys

CLASSES = {
    "16.1a": "a verdict that is not proved is never a pass (unknown, exit 3)",
    "16.1b": "persistent grids: the fallback runs CTAs by classes instead of refusing",
    "16.1c": "ring indices of other forms than (iteration + c) % S",
    "16.1d": "fallback sizes wrap every ring at least twice",
    "16.1e": "over-arrival per phase decided by the proofs",
    "16.1f": "a sub-verdict whose query gave up makes the kernel unknown",
    "16.1g": "roles that share a loop are explored (fallback) and proved (stage proof, ordering graph) apart; inits as steps",
    "16.1h": "integer division and remainder truncate toward zero in every encoding",
    "16.1i": "the ordering graph links the CTAs of a cluster: remote releases, multicast fills, CTA masks",
    "16.1j": "the CTAs of a cluster have started before, and stay alive after, every operation that reaches a peer",
    "16.1k": "a fence counts only where it runs whenever the access it orders does (no other size or loop condition, no loop that may not run)",
    "16.1l": "an asynchronous tcgen05 operation is ordered around its thread's synchronisation only through tcgen05.fence_after_thread_sync / fence_before_thread_sync",
    "16.2": "named barriers checked per generation",
    "16.3": "tensor-memory lifetime (alloc, relinquish, dealloc)",
    "16.3b": "tcgen05.ld / tcgen05.st reach only the TMEM lanes of the warp's subpartition",
    "16.4": "resource limits and operand ranges",
    "16.5": "write coverage of the outputs",
    "16.5b": "global accesses inside their tensors (a TMA box starts inside, any other access lies wholly inside)",
    "16.5c": "shared, register-tile and tensor-memory accesses inside their buffers, for all sizes (truncating division)",
    "16.6": "precision: arrive -> sync generations order accesses",
    "16.6b": "precision: a TMA store's wait_group(n) orders across loop iterations (round loops, the next tile, n > 0)",
    "16.6c": "precision: a named barrier's generation orders the thread pairs it holds (per-warpgroup ids), outside common loops",
    "16.7": "precision: the simulator's named-barrier release (ping-pong)",
    "16.8": "precision: mbarrier inits per element",
    "16.9": "precision: `where` equalities in shape checks",
    "16.10": "precision: warp uniformity from the condition's values",
    "16.11": "malformed and huge inputs (not bug/twin shaped)",
    "16.12": "precision: a guard mixing a thread's index with sizes or loop variables (`i < N`) over plain accesses is a thread guard of the bounds, coverage and race proofs",
    "20.3": "device scale (issue 20): flags, epochs, fences, handoffs and collectives across devices",
}
TAGS = set(CLASSES) | {"base"}
MIN_PAIRS = 3
TAG = re.compile(r"^// CLASS:(.*)$", re.M)
BEGIN = "<!-- classes.py: begin -->"
END = "<!-- classes.py: end -->"


def corpus(root):
    """(path relative to root, tags) for every tagged kernel under tests/lit,
    and the problems found (untagged corpus files, unknown tags)."""
    lit = os.path.join(root, "tests", "lit")
    found, problems = [], []
    for dirpath, _, files in os.walk(lit):
        for name in sorted(files):
            if not name.endswith(".tile"):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            with open(path) as f:
                text = f.read()
            tags = [t for m in TAG.finditer(text) for t in m.group(1).split()]
            in_bugs = os.path.basename(dirpath) == "bugs"
            if not tags:
                if in_bugs:
                    problems.append(f"{rel}: no `// CLASS:` line")
                continue
            for t in tags:
                if t not in TAGS:
                    problems.append(f"{rel}: unknown class {t!r}")
            twin = path[:-len(".tile")] + "-fixed.tile"
            if "// FIX:" not in text and not os.path.exists(twin):
                problems.append(f"{rel}: tagged, but neither a // FIX: marker nor {twin}")
                continue
            found.append((rel, tags))
    return sorted(found), problems


def class11_inputs(root):
    corpus_dir = os.path.join(root, "tests", "malformed", "corpus")
    budget_dir = os.path.join(root, "tests", "lit", "budget")
    out = []
    if os.path.isdir(corpus_dir):
        out += [os.path.join("tests/malformed/corpus", f) for f in sorted(os.listdir(corpus_dir))
                if f.startswith("limits_") and f.endswith(".tile")]
    if os.path.isdir(budget_dir):
        out += [os.path.join("tests/lit/budget", f) for f in sorted(os.listdir(budget_dir))
                if f.endswith(".test")]
    return out


def table(root):
    found, problems = corpus(root)
    by_class = {c: [] for c in CLASSES}
    base = 0
    for rel, tags in found:
        for t in tags:
            if t == "base":
                base += 1
            elif t in by_class:
                by_class[t].append(rel)
    by_class["16.11"] = class11_inputs(root)
    lines = [BEGIN, "",
             "| class | what | pairs | files |", "|---|---|---|---|"]
    for c, what in CLASSES.items():
        files = by_class[c]
        shown = ", ".join(f"`{f.replace('tests/lit/bugs/', '')}`" for f in files)
        count = f"{len(files)} inputs" if c == "16.11" else str(len(files))
        lines.append(f"| {c} | {what} | {count} | {shown} |")
        if c == "16.11":
            if len(files) < 1:
                problems.append(f"class {c}: no input")
        elif len(files) < MIN_PAIRS:
            problems.append(f"class {c}: {len(files)} pairs, fewer than {MIN_PAIRS}")
    lines += ["", f"{base} further pairs are tagged `base` (the general protocol corpus).", "",
              END]
    return "\n".join(lines) + "\n", problems


def readme_block(text):
    a, b = text.find(BEGIN), text.find(END)
    if a < 0 or b < a:
        return None
    return text[a:b + len(END) + 1]


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("check", "write"):
        sys.exit("usage: classes.py check|write ROOT")
    root = sys.argv[2]
    readme = os.path.join(root, "tests", "lit", "bugs", "README.md")
    generated, problems = table(root)
    with open(readme) as f:
        text = f.read()
    block = readme_block(text)
    if sys.argv[1] == "write":
        if block is None:
            text = text.rstrip("\n") + "\n\n" + generated
        else:
            text = text.replace(block, generated)
        with open(readme, "w") as f:
            f.write(text)
    elif block != generated:
        problems.append("tests/lit/bugs/README.md: the class table is stale "
                        "(run tests/lit/bugs/classes.py write .)")
    sys.stdout.write(generated)
    for p in problems:
        print(f"error: {p}", file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
