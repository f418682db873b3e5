#!/usr/bin/env python3
"""Compares two tilescope binaries' reward sizes on every library kernel with a
`// problem:` line: the simulate stage's status and its simulated sizes (role,
sizes, CTAs, outcome), at --seed 1. Usage (from the repository root):
compare_reward_sizes.py OLD_TILESCOPE NEW_TILESCOPE. Prints SAME or DIFF a kernel."""
import json, re, subprocess, sys, glob
from concurrent.futures import ThreadPoolExecutor
bins = sys.argv[1:3]
jobs = []
for f in sorted(glob.glob('kernels/*.tile')):
    prob = None
    for line in open(f):
        m = re.match(r'//\s*problem:\s*(.*)', line)
        if m: prob = m.group(1).strip(); continue
        m = re.match(r'kernel\s+(\w+)', line)
        if m:
            if prob: jobs.append((f, m.group(1), prob))
            prob = None
def run(b, f, k, p):
    out = subprocess.run([b, 'reward', f, '--kernel', k, '--problem', p, '--seed', '1', '--json'], capture_output=True, text=True, timeout=900).stdout
    try:
        r = json.loads(out)
    except Exception:
        return 'ERR ' + out[:200]
    ks = [x for x in r['kernels'] if x['kernel'] == k]
    if not ks: return 'nokernel'
    kk = ks[0]
    sim = [s for s in kk['stages'] if s['name'] == 'simulate']
    return (sim[0]['status'] if sim else '-', [(s['role'], s['sizes'], s['ctas'], s['outcome']) for s in kk.get('simulated', [])])
def both(j):
    a = run(bins[0], *j); b = run(bins[1], *j)
    return j, a, b
with ThreadPoolExecutor(2) as ex:
    for j, a, b in ex.map(both, jobs):
        print(('SAME ' if a == b else 'DIFF ') + j[0] + ' ' + j[1], flush=True)
        if a != b: print('  old', a); print('  new', b)
