#!/usr/bin/env python3
"""The red-team mutant table (scripts/redteam/muts.py, both passes), checked
on the CPU without running tilescope:

  - the list of mutants (name, base kernel, class, expectation, edits, reward
    problem; for pass 2 also what must catch it, the sizes and the problem) is
    the one in the golden files, in order: pass 1 (the mutants without `want`)
    in tests/scripts/redteam_mutants.golden.jsonl, pass 2 in
    redteam_mutants2.golden.jsonl; a rewrite of the table must produce the same
    mutants (`--update` rewrites both goldens after an intended change; check
    their diff);
  - names are unique, each expectation is 'bug' or 'clean', each base is a
    kernel of kernels/ unless the mutant carries its source (`src`);
  - every mutant's edits apply to its kernel as it is now (scripts/redteam/
    mutate.py's apply: each text found, found once where no occurrence is
    given) and change it (a mutant without edits runs its base as it is).

Usage: redteam_mutants_test.py REPO [--update]. Exit 0 when all hold, 1 otherwise.
"""
import json
import os
import sys


def load(repo):
    sys.path.insert(0, os.path.join(repo, "scripts", "redteam"))
    import mutate  # noqa: E402  (imports muts.py from the same folder)
    return mutate.MUTANTS, mutate.apply


def main():
    if len(sys.argv) < 2:
        print("usage: redteam_mutants_test.py REPO [--update]", file=sys.stderr)
        return 2
    repo = sys.argv[1]
    update = "--update" in sys.argv[2:]
    mutants, apply = load(repo)
    failures = []
    for name, part in (("redteam_mutants.golden.jsonl", [m for m in mutants if "want" not in m]),
                       ("redteam_mutants2.golden.jsonl", [m for m in mutants if "want" in m])):
        lines = [json.dumps(m, sort_keys=True) for m in part]
        golden = os.path.join(repo, "tests", "scripts", name)
        if update:
            with open(golden, "w") as f:
                f.write("\n".join(lines) + "\n")
            print(f"wrote {golden}: {len(lines)} mutants")
            continue
        want = open(golden).read().splitlines()
        if lines != want:
            for i in range(max(len(lines), len(want))):
                got = lines[i] if i < len(lines) else "(none)"
                exp = want[i] if i < len(want) else "(none)"
                if got != exp:
                    failures.append(f"{name}, mutant {i}: {got[:160]}\n  golden: {exp[:160]}")
                    break
            failures.append(f"the list differs from {name} ({len(lines)} mutants, golden {len(want)})")
    if update:
        return 0
    seen = set()
    for m in mutants:
        name = m["name"]
        if name in seen:
            failures.append(f"{name}: defined twice")
        seen.add(name)
        if m["exp"] not in ("bug", "clean"):
            failures.append(f"{name}: expectation {m['exp']!r}")
        path = os.path.join(repo, "kernels", m["base"])
        if m.get("src"):
            src = m["src"]
        elif not os.path.isfile(path):
            failures.append(f"{name}: no kernel {m['base']}")
            continue
        else:
            src = open(path).read()
        try:
            mutated = apply(src, m["edits"], name)
        except SystemExit as e:  # apply's way of saying an edit does not fit
            failures.append(str(e))
            continue
        if mutated == src and m["edits"]:  # no edits: the base itself, run as a clean mutant
            failures.append(f"{name}: the edits leave {m['base']} as it was")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(mutants)} mutants, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
