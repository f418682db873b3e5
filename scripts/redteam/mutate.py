#!/usr/bin/env python3
# Run: python3 scripts/redteam/mutate.py [NAME-SUBSTRING...] (TS=path/to/tilescope); mutants in scripts/redteam/muts.py
# (both passes: a mutant with `want` goes through check, race, sim and reward, stages.py).
"""Red-team mutants of the library kernels: apply edits, run check (and reward), classify."""
import json, os, re, subprocess, sys
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = '/tmp/redteam/m'
TS = os.environ.get('TS', ROOT + '/build/tools/tilescope')
sys.path.insert(0, os.path.dirname(__file__))
from muts import MUTANTS
import stages

def apply(src, edits, name):
    for e in edits:
        old, new = e[0], e[1]
        occ = e[2] if len(e) > 2 else None
        n = src.count(old)
        if n == 0:
            raise SystemExit(f'{name}: edit not found: {old!r}')
        if occ is None:
            if n != 1:
                raise SystemExit(f'{name}: edit ambiguous ({n}): {old!r}')
            src = src.replace(old, new)
        elif occ == 'all':
            src = src.replace(old, new)
        else:
            i = -1
            for _ in range(occ + 1):
                i = src.index(old, i + 1)
            src = src[:i] + new + src[i + len(old):]
    return src

def run(args, timeout=120):
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return 'T', ''

def main():
    os.makedirs(OUT, exist_ok=True)
    only = sys.argv[1:]
    rows = []
    for m in MUTANTS:
        name, base, cls, exp, edits = m['name'], m['base'], m['cls'], m['exp'], m['edits']
        if only and not any(o in name for o in only):
            continue
        src = m.get('src') or open(os.path.join(ROOT, 'kernels', base)).read()
        src = apply(src, edits, name)
        path = os.path.join(OUT, name + '.tile')
        open(path, 'w').write(src)
        if 'want' in m:
            res, verdict = stages.run_all(TS, path, m)
            cols = '  '.join(f"{k}={v[0]}" for k, v in res.items())
            note = next((v[1] for v in res.values() if v[1]), '')
            rows.append((name, cls, m['exp'], verdict, cols, note))
            print(f"{name:45s} {cls:6s} {m['exp']:5s} {verdict:28s} {cols}  | {note}", flush=True)
            continue
        rc, out = run([TS, 'check', path] + m.get('args', []))
        first = ''
        for line in out.splitlines():
            if 'error:' in line or 'warning:' in line:
                first = line.split('.tile:', 1)[-1][:200]
                break
        if not first and out.strip():
            first = out.strip().splitlines()[-1][:200]
        if exp == 'bug':
            verdict = {0: 'WRONGLY PROVED', 1: 'found', 3: 'unknown', 4: 'budget', 2: 'input-error'}.get(rc, str(rc))
        else:
            verdict = {0: 'ok', 1: 'FALSE POSITIVE', 3: 'unknown(twin)', 2: 'REJECTED(twin)', 4: 'budget(twin)'}.get(rc, str(rc))
        rew = ''
        if m.get('reward') and rc == 0:
            r2, o2 = run([TS, 'reward', path, '--problem', m['reward'], '--seed', '7', '--json'], 300)
            try:
                j = json.loads(o2[o2.index('{'):])
                rew = 'reward:' + ','.join(f"{s['name']}={s['status']}" for s in j.get('stages', []) if s['status'] != 'pass')
                rew += ' score=%s' % j.get('score')
            except Exception:
                rew = f'reward rc={r2} ' + o2[-200:]
        rows.append((name, cls, exp, verdict, first, rew))
        print(f'{name:45s} {cls:6s} {exp:5s} {verdict:15s} {first} {rew}', flush=True)

if __name__ == '__main__':
    main()
