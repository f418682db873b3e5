#!/usr/bin/env python3
# Run: python3 scripts/sweep/table.py [DIR] (default /tmp/sweep): the markdown tables of a sweep's results.
"""Summarises DIR/results.jsonl of scripts/sweep/sweep.py: per target and pass, the mutants by
class (agree-bug, both-clean, UNSOUND, CHECK-ONLY, unknown, ...) and the time the three tools
took, then every mutant whose verdicts disagree."""
import collections
import json
import os
import sys

COLS = ['agree-bug', 'both-clean', 'UNSOUND', 'CHECK-ONLY', 'unknown', 'other']


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else '/tmp/sweep'
    rows = collections.OrderedDict()
    for line in open(os.path.join(d, 'results.jsonl')):
        r = json.loads(line)
        if r['op'] == 'baseline':
            continue
        # A rerun of a target replaces its earlier rows.
        rows[(r['target'], r.get('pass', 1), r['op'], r['line'], r['what'])] = r
    per = collections.OrderedDict()
    for r in rows.values():
        key = (r['target'], r.get('pass', 1))
        c = r['cls'] if r['cls'] in COLS else 'other'
        per.setdefault(key, collections.Counter())[c] += 1
        per[key]['n'] += 1
        per[key]['t'] += r['t_check'] + r['t_sim'] + r['t_race']
        per[key]['tc'] += r['t_check']
    print('| target | pass | mutants | ' + ' | '.join(COLS) + ' | check s (sum) | all tools s (sum) |')
    print('|---|---|---|' + '---|' * len(COLS) + '---|---|')
    tot = collections.Counter()
    for (t, p), c in per.items():
        print(f'| {t} | {p} | {c["n"]} | ' + ' | '.join(str(c[k]) for k in COLS) +
              f' | {c["tc"]:.0f} | {c["t"]:.0f} |')
        tot.update(c)
    print(f'| total | | {tot["n"]} | ' + ' | '.join(str(tot[k]) for k in COLS) +
          f' | {tot["tc"]:.0f} | {tot["t"]:.0f} |')
    print()
    print('| target | pass | mutant | check | sim | race | class |')
    print('|---|---|---|---|---|---|---|')
    for r in rows.values():
        if r['cls'] in ('agree-bug', 'both-clean'):
            continue
        what = r['what'].replace('|', '\\|')
        print(f'| {r["target"]} | {r.get("pass", 1)} | {r["op"]} L{r["line"]}: {what} | {r["check"]} | '
              f'{r["sim"]} | {r["race"]} | {r["cls"]} |')


if __name__ == '__main__':
    main()
