"""Runs one red-team mutant through every verdict an agent sees: `check`, `race --static`,
`sim` (at the mutant's sizes, against its problem) and `reward --problem`, and classifies it.

A pass-2 mutant (scripts/redteam/muts.py, `r2`) says what must catch it: 'static' (a synchronisation or
memory bug: `check` must not prove it), or 'dynamic' (a wrong value or a reward hack: `sim` or
the reward's simulate stage must fail it). A clean mutant must pass all four."""
import json
import subprocess

STATIC_RC = {0: 'proved', 1: 'finding', 2: 'input-error', 3: 'unknown', 4: 'budget'}
# Reward stages that judge the candidate; `performance` is the model's, not a verdict.
JUDGED = ('parse', 'types', 'dispatch', 'resources', 'layouts', 'barriers', 'races', 'coverage',
          'simulate')


def _run(args, timeout):
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return 'T', ''


def _first_error(out):
    for line in out.splitlines():
        if 'error:' in line or 'warning: not' in line:
            return line.split('.tile:', 1)[-1][:160]
    return ''


def run_all(ts, path, m):
    """(results per tool, classification, note) of mutant m written at path."""
    sel = ['--kernel', m['kernel']] if m.get('kernel') else []
    if m.get('set'):
        # A family's point as a plain kernel: `race` and `reward` take no --set.
        rc, out = _run([ts, 'instantiate', path, '--set', m['set']] + sel, 120)
        if rc != 0:
            return {'instantiate': (f'rc={rc}', out[-160:])}, 'input-error'
        with open(path, 'w') as f:
            f.write(out)
    res = {}
    rc, out = _run([ts, 'check', path] + sel, 300)
    res['check'] = (STATIC_RC.get(rc, str(rc)), _first_error(out))
    rc, out = _run([ts, 'race', '--static', path] + sel, 300)
    res['race'] = (STATIC_RC.get(rc, str(rc)), _first_error(out))
    if m.get('args'):
        rc, out = _run([ts, 'sim', path, '--seed', '7', '--problem', m['problem'], '--args', m['args']] + sel + m.get('simflags', []), 300)
        res['sim'] = ({0: 'match', 1: 'FAIL', 2: 'input-error', 3: 'unknown', 4: 'budget'}.get(rc, str(rc)),
                      _first_error(out))
    rargs = [ts, 'reward', path, '--problem', m['problem'], '--seed', '7', '--json'] + sel
    if m.get('rsizes'):
        rargs += ['--sizes', m['rsizes']]
    rc, out = _run(rargs, 600)
    try:
        j = json.loads(out[out.index('{'):])
        bad = [f"{s['name']}={s['status']}" for s in j.get('stages', [])
               if s['name'] in JUDGED and s['status'] != 'pass']
        if not j.get('stages') or j.get('exit_code') == 2:
            bad = [f"reward-error(exit {j.get('exit_code')})"]
        res['reward'] = ('pass' if not bad else ','.join(bad), (j.get('first_failure') or {}).get('hint', '')[:160])
    except ValueError:
        res['reward'] = (f'rc={rc}', out[-160:])
    static_ok = res['check'][0] == 'proved' and res['race'][0] == 'proved'
    dyn_ok = res.get('sim', ('match',))[0] == 'match' and res['reward'][0] == 'pass'
    if m['exp'] == 'clean':
        cls = 'ok' if static_ok and dyn_ok else 'FALSE POSITIVE'
    elif m['want'] == 'static':
        if res['check'][0] == 'proved':
            cls = 'WRONGLY PROVED' if dyn_ok else 'WRONGLY PROVED (sim catches)'
        elif res['check'][0] in ('unknown', 'budget'):
            cls = 'unknown'
        else:
            cls = 'caught'
    else:
        cls = 'caught' if not (static_ok and dyn_ok) else 'WRONGLY PROVED'
    return res, cls
