#!/usr/bin/env python3
# Run: nice python3 scripts/sweep/sweep.py [--max-per-target N] [--seed S] [--only SUBSTR] [--out DIR]
#      (TS=path/to/tilescope; default build/tools/tilescope). Results: DIR/results.jsonl, DIR/table.md.
"""Differential soundness sweep: mutate the synchronisation of library kernels (scripts/sweep/
mutants.py), then compare `check` (static, all sizes) with `sim` and `race` (dynamic, at small
sizes the kernel's `where` admits, every ring wrapped at least twice).

A mutant where `check` says proved (exit 0) while `sim` or `race` fails is an unsound proof
(UNSOUND, the worst bug this project can have). A mutant where `check` reports a finding while
`sim` and `race` run clean is listed for triage (CHECK-ONLY: a false positive, or a bug the small
sizes do not reach). Mutants run one at a time, each tool under a processor-time limit."""
import argparse
import json
import os
import random
import re
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutants  # noqa: E402

ATT = 'B=1,H=1,S={S},sm_scale=0.2'
# (name, kernel file, --kernel, --set point, edits of the instantiated text, sim/race --args)
# Persistent GEMMs run as `@grid2` variants (every literal 132, the grid and the tile step, made
# 2; edits replace whole integer tokens): at the sizes the simulator can afford, a grid of 132
# runs every CTA's tile loop once at most; at 2 it runs several tiles a CTA.
G2 = [('132', '2')]
TARGETS = [
    ('causal-q64', 'attention_fwd_causal_family_sm90.tile', None, 'BQ=64', [], ATT.format(S=264)),
    ('causal-q128', 'attention_fwd_causal_family_sm90.tile', None, 'BQ=128', [], ATT.format(S=520)),
    ('overlap', 'attention_fwd_overlap_sm90.tile', 'attention_fwd_overlap_sm90', None, [], ATT.format(S=520)),
    ('overlap-causal', 'attention_fwd_overlap_sm90.tile', 'attention_fwd_overlap_causal_sm90', None, [],
     ATT.format(S=520)),
    ('overlap-d64', 'attention_fwd_overlap_d64_sm90.tile', 'attention_fwd_overlap_d64_sm90', None, [],
     ATT.format(S=520)),
    ('overlap-causal-d64', 'attention_fwd_overlap_d64_sm90.tile', 'attention_fwd_overlap_causal_d64_sm90',
     None, [], ATT.format(S=520)),
    ('rms-warp-r2', 'rmsnorm_family.tile', None, 'warp_r2_h512', [], 'R=6,H=512,eps=0.001'),
    ('rms-cta-t64-n2', 'rmsnorm_family.tile', None, 'cta_t64_n2_h512', [], 'R=6,H=512,eps=0.001'),
    ('rms-cta-t128', 'rmsnorm_family.tile', None, 'cta_t128_h1024', [], 'R=3,H=1024,eps=0.001'),
    ('fp8-grouped@grid2', 'gemm_fp8_sm90_grouped.tile', None, None, G2, 'M=1024,N=264,K=784,scale=0.5'),
    ('family-split2', 'gemm_bf16_sm90_family.tile', None,
     'BM=64,BN=128,STAGES=4,CONSUMERS=1,ORDER=row,PERSISTENT=false,SPLIT=2', [], 'M=136,N=264,K=1024'),
    # Not swept: the persistent SPLIT points (BM=64,BN=128,STAGES=3,CONSUMERS=1,PERSISTENT=true,
    # SPLIT=2): `check` says unknown (write coverage not proved, as the family's comment says)
    # after 8 s of CPU, so every mutant would be unknown or budget.
    ('family-epi2@grid2', 'gemm_bf16_sm90_family.tile', None,
     'BM=128,BN=256,STAGES=3,CONSUMERS=2,ORDER=row,PERSISTENT=true,SPLIT=1,EPI=2', G2, 'M=264,N=264,K=392'),
    ('family-mcast2@grid2', 'gemm_bf16_sm90_family.tile', None,
     'BM=128,BN=128,STAGES=4,CONSUMERS=2,ORDER=row,PERSISTENT=true,SPLIT=1,MCAST=2',
     [('132', '4'), ('66', '2')], 'M=264,N=264,K=520'),
    ('gemm-sm100', 'gemm_bf16_sm100.tile', None, None, [], 'M=256,N=256,K=256'),
    ('attention-sm100', 'attention_fwd_sm100.tile', None, None, [], ATT.format(S=520)),
]
CHECK_RC = {0: 'proved', 1: 'finding', 2: 'input-error', 3: 'unknown', 4: 'budget'}


def _limit(cpu_s):
    def f():
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))
    return f


def run(args, cpu_s, wall_s):
    t = time.time()
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=wall_s, preexec_fn=_limit(cpu_s))
        rc, out = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        rc, out = 'wall', ''
    if isinstance(rc, int) and rc < 0:
        rc = 'killed'
    return rc, out, time.time() - t


def first_error(out):
    for line in out.splitlines():
        if 'error:' in line or 'deadlock' in line or 'race' in line.lower() and 'races in' not in line:
            return line.strip()[:200]
    return ''


def verdicts(ts, path, kname, simargs):
    sel = ['--kernel', kname] if kname else []
    rc, out, tc = run([ts, 'check', path, '--json', '--timeout-ms', '5000'] + sel, 20, 60)
    check = CHECK_RC.get(rc, str(rc))
    why = ''
    if rc == 1:
        try:
            j = json.loads(out[out.index('{'):])
            d = [x for x in j.get('diagnostics', []) if x.get('severity') == 'error']
            why = (d[0].get('message', '') if d else '')[:160]
        except (ValueError, KeyError):
            why = ''
    src, sout, ts_ = run([ts, 'sim', path, '--args', simargs, '--seed', '3', '--ctas', 'all',
                          '--max-steps', '20000000', '--timeout-ms', '30000'] + sel, 40, 120)
    rrc, rout, tr = run([ts, 'race', path, '--args', simargs, '--seed', '5', '--seeds', '2', '--ctas', 'all',
                         '--max-steps', '20000000', '--timeout-ms', '30000'] + sel, 40, 120)
    sim = {0: 'match', 1: 'FAIL', 2: 'input-error', 3: 'unknown', 4: 'budget'}.get(src, str(src))
    race = {0: 'clean', 1: 'FAIL', 2: 'input-error', 3: 'unknown', 4: 'budget'}.get(rrc, str(rrc))
    return dict(check=check, check_why=why, sim=sim, sim_why=first_error(sout) if src else '',
                race=race, race_why=first_error(rout) if rrc else '', t_check=round(tc, 2),
                t_sim=round(ts_, 2), t_race=round(tr, 2))


def classify(v):
    dyn_bad = v['sim'] in ('FAIL',) or v['race'] in ('FAIL',)
    dyn_ok = v['sim'] == 'match' and v['race'] == 'clean'
    if v['check'] == 'proved':
        return 'UNSOUND' if dyn_bad else ('both-clean' if dyn_ok else 'proved, dynamic ' + v['sim'] + '/' + v['race'])
    if v['check'] in ('finding', 'input-error'):
        return 'agree-bug' if dyn_bad or v['sim'] == 'input-error' else ('CHECK-ONLY' if dyn_ok else 'finding, dynamic ' + v['sim'] + '/' + v['race'])
    return v['check']


def instantiate(ts, t, work):
    name, file, kname, point, edits, _ = t
    path = os.path.join(ROOT, 'kernels', file)
    if point:
        rc, out, _ = run([ts, 'instantiate', path, '--set', point], 60, 120)
        if rc != 0:
            raise SystemExit(f'{name}: instantiate failed: {out[-300:]}')
        text = out
    elif kname:
        text = open(path).read()
    else:
        text = open(path).read()
    for old, new in edits:
        text, n = re.subn(r'\b' + re.escape(old) + r'\b', new, text)
        if n == 0:
            raise SystemExit(f'{name}: edit not found: {old!r}')
    base = os.path.join(work, name + '.tile')
    open(base, 'w').write(text)
    return text


def kernel_lines(text, kname):
    """(prefix, lines of the kernel kname or the only kernel, suffix) so that mutants touch only it."""
    lines = text.split('\n')
    if not kname:
        return [], lines, []
    starts = [i for i, l in enumerate(lines) if l.startswith('kernel ')]
    k = next(i for i in starts if lines[i].startswith(f'kernel {kname}('))
    # The kernel ends at the first line `}` after its body begins.
    end = next(i for i in range(k, len(lines)) if lines[i] == '}')
    # Keep the comments above it with the prefix.
    return lines[:k], lines[k:end + 1], lines[end + 1:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--max-per-target', type=int, default=20)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--only', default='')
    ap.add_argument('--pass', dest='pass_', type=int, default=1,
                    help='1: one-place edits (mutants.operators); 2: reorders, wait depths, widened conditions; '
                         '3: the tcgen05 thread-sync fences dropped or moved (mutants.fences)')
    ap.add_argument('--out', default='/tmp/sweep')
    ap.add_argument('--list', action='store_true', help='print the mutants, run nothing')
    a = ap.parse_args()
    ts = os.environ.get('TS', os.path.join(ROOT, 'build/tools/tilescope'))
    os.makedirs(a.out, exist_ok=True)
    res = open(os.path.join(a.out, 'results.jsonl'), 'a')
    for t in TARGETS:
        name, _, kname, _, _, simargs = t
        if a.only and a.only not in name:
            continue
        text = instantiate(ts, t, a.out)
        pre, lines, post = kernel_lines(text, kname)
        ops = {1: mutants.operators, 2: mutants.reorders, 3: mutants.fences}[a.pass_]
        muts = list(ops(lines))
        # A stratified sample: round-robin over operators, random within each.
        rnd = random.Random(f'{a.seed}:{name}')
        by_op = {}
        for m in muts:
            by_op.setdefault(m[0], []).append(m)
        for v in by_op.values():
            rnd.shuffle(v)
        pick = []
        while len(pick) < a.max_per_target and any(by_op.values()):
            for op in sorted(by_op):
                if by_op[op] and len(pick) < a.max_per_target:
                    pick.append(by_op[op].pop())
        if a.list:
            for m in pick:
                print(f'{name}\t{m[0]}\t{m[1] + 1}\t{m[2]}')
            continue
        base = os.path.join(a.out, name + '.tile')
        v = verdicts(ts, base, kname, simargs)
        print(f'{name}: baseline {classify(v)} {v}', flush=True)
        rec = dict(target=name, op='baseline', line=0, what='', **v, cls=classify(v), **{'pass': a.pass_})
        res.write(json.dumps(rec) + '\n')
        for n, m in enumerate(pick):
            mtext = '\n'.join(pre + mutants.apply(lines, m) + post)
            path = os.path.join(a.out, f'{name}.p{a.pass_}m{n:02d}.tile')
            open(path, 'w').write(mtext)
            v = verdicts(ts, path, kname, simargs)
            c = classify(v)
            rec = dict(target=name, op=m[0], line=m[1] + 1 + len(pre), what=m[2], file=path, **v, cls=c,
                       **{'pass': a.pass_})
            res.write(json.dumps(rec) + '\n')
            res.flush()
            print(f'{name} m{n:02d} {m[0]:14s} L{rec["line"]:<4d} {c:12s} check={v["check"]} sim={v["sim"]} '
                  f'race={v["race"]}  {m[2][:70]}', flush=True)


if __name__ == '__main__':
    main()
