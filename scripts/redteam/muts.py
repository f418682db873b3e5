# Red-team mutants of kernels/*.tile, both passes in one table (M), run by scripts/redteam/mutate.py.
# exp: 'bug' (must not pass) or 'clean' (must pass).
# A mutant is a list of edits (OLD, NEW[, OCCURRENCE]) of its base kernel (scripts/redteam/mutate.py
# applies them: without OCCURRENCE, OLD must occur once; 'all' or an index). Mutants that edit the
# same place are written as one table: the place once, then a row a mutant.
# tests/scripts/redteam_mutants_test.py pins the list (pass 1: tests/scripts/redteam_mutants.golden.jsonl,
# pass 2: redteam_mutants2.golden.jsonl).
import os
import re

G, G64, GS, B, R = ('gemm_bf16_sm90.tile', 'gemm_bf16_sm90_64x128.tile', 'gemm_bf16_sm90_small.tile',
                    'gemm_bf16_sm100.tile', 'rmsnorm.tile')
GEMM = 'gemm(A, B^T -> C)'
RMS = 'rmsnorm(X, W -> Y, eps)'
PW = 'mbarrier.wait(empty[s], parity = (it / 3 + 1) % 2)'   # G producer wait
CW = 'mbarrier.wait(full[s], parity = it / 3 % 2)'          # G consumer wait
CS = '        let s = it % 3\n        mbarrier.wait(full'
TL = 'for t in blockIdx.x .. tiles step 132'
RELEASE = '          mbarrier.arrive(empty[s])\n'                # G consumer's stage release
NAMED = 'barrier.sync(1, threads = 256)'                     # G consumers' named barrier
WG0 = '  if wgid == 0 {\n    setmaxnreg.dec'                 # G producer warpgroup
PRODUCER = '    if warpid == 0 {\n      for t'                # G producer warp
ST128 = 'threadIdx.x == 128'                                 # G's TMA store issuer
M = []
def mk(name, base, cls, exp, edits, **kw):
    d = dict(name=name, base=base, cls=cls, exp=exp, edits=edits); d.update(kw); M.append(d)

def at(old, occ, rows, base=G, **kw):
    """Mutants that each replace the text `old` of `base` (occurrence occ, None: the only one).
    rows: (name, cls, exp, new)."""
    for name, cls, exp, new in rows:
        mk(name, base, cls, exp, [(old, new) if occ is None else (old, new, occ)], **kw)

def cond(place, new):
    """`place` ('... if COND {...') with COND replaced by `new`."""
    head, rest = place.split('if ', 1)
    return head + 'if ' + new + rest[rest.index(' {'):]

# ---- class 1: ring index / parity forms -------------------------------------------------
at('let s = it % 3', 'all', [
    ('ring-it-plus-3-both', '1c', 'clean', 'let s = (it + 3) % 3'),
    ('ring-it-minus-div-both', '1c', 'clean', 'let s = it - it / 3 * 3'),
    ('ring-it-plus-1-both', '1c', 'clean', 'let s = (it + 1) % 3')])
mk('ring-consumer-plus-1', G, '1c', 'bug', [(CS, CS.replace('it % 3', '(it + 1) % 3'))])
mk('parity-consumer-mod3-wrap3', G, '1c', 'bug', [(CW, 'mbarrier.wait(full[s], parity = it / 3 % 3 % 2)')])
at(PW, None, [
    ('parity-producer-mod5-wrap5', '1c', 'bug', 'mbarrier.wait(empty[s], parity = (it / 3 % 5 + 1) % 2)'),
    ('parity-producer-shifted-num', '1c', 'clean', 'mbarrier.wait(empty[s], parity = (it + 3) / 3 % 2)')])
mk('parity-producer-one-minus', G64, '1c', 'clean', [('parity = (k / 8 + 1) % 2', 'parity = 1 - k / 8 % 2')])
mk('parity-consumer-from-k-not-it', G, '1c', 'bug', [(CW, 'mbarrier.wait(full[s], parity = k / 3 % 2)')])
mk('parity-consumer-div6', G64, '1c', 'bug', [('parity = k / 8 % 2', 'parity = k / 16 % 2')])
mk('ring-g64-k-plus-8-both', G64, '1c', 'clean', [('let s = k % 8', 'let s = (k + 8) % 8', 'all'),
                                                  ('empty[(k + 7) % 8]', 'empty[(k + 15) % 8]')])
mk('ring-g64-release-k-minus-1-mod', G64, '1c', 'clean', [('empty[(k + 7) % 8]', 'empty[(k - 1) % 8]')])
mk('ring-g64-last-release-kt', G64, '1c', 'bug', [('empty[(kt + 7) % 8]', 'empty[kt % 8]')])
# The last k's release: to stage S instead (twin: the same stage written otherwise), or twice.
LAST_K = '          if k + 1 < kt {\n            mbarrier.arrive(empty[s])\n          } else {\n            mbarrier.arrive(empty[%s])\n          }\n'
at(RELEASE, None, [
    ('release-wrong-stage-last-k', '1', 'bug', LAST_K % '(it + 1) % 3'),
    ('release-last-k-same-stage-twin', '1', 'clean', LAST_K % 'it % 3'),
    ('overarrive-last-k', '1e', 'bug', RELEASE + '          if k + 1 == kt {\n            mbarrier.arrive(empty[s])\n          }\n')])
mk('overarrive-count-arith', GS, '1e', 'bug', [('        mbarrier.arrive(empty[(k + 5) % 6])\n      }\n    }',
    '        mbarrier.arrive(empty[(k + 5) % 6], count = 1 + k / 7)\n      }\n    }')])
mk('release-skipped-after-4-wraps', GS, '1', 'bug', [('if k > 0 && tid_in_wg == 0', 'if k > 0 && k != 24 && tid_in_wg == 0')])

# ---- expect_tx ---------------------------------------------------------------------------
# The ragged last k-block's bytes (twin: the full block's, written otherwise).
TX = '            mbarrier.arrive_expect_tx(full[s], bytes = 49152)\n'
RAGGED = '            if k * 64 + 64 <= K {\n  ' + TX + '            } else {\n              mbarrier.arrive_expect_tx(full[s], bytes = %s)\n            }\n'
at(TX, None, [
    ('txbytes-ragged-k', '1', 'bug', RAGGED % '768 * (K - k * 64)'),
    ('txbytes-ragged-k-twin', '1', 'clean', RAGGED % '768 * 64')])
mk('txbytes-ragged-m', GS, '1', 'bug', [('bytes = 16384', 'bytes = 8192 + 128 * min(64, M - m0)')])
at('bytes = 49152', None, [
    ('txbytes-arith-twin', '1', 'clean', 'bytes = (128 + 256) * 64 * 2'),
    ('txbytes-over-limit', '11', 'bug', 'bytes = 1048576')])

# ---- named barriers ----------------------------------------------------------------------
at(NAMED, 1, [('named-two-ids-twin', '2', 'clean', 'barrier.sync(2, threads = 256)')])
at(NAMED, 'all', [
    ('named-id-15-twin', '2', 'clean', 'barrier.sync(15, threads = 256)'),
    ('named-id-16', '4', 'bug', 'barrier.sync(16, threads = 256)'),
    ('named-id-0-twin', '2', 'clean', 'barrier.sync(0, threads = 256)'),
    ('named-id-per-wg', '2', 'bug', 'barrier.sync(wgid, threads = 128)'),
    ('named-id-arith-twin', '2', 'clean', 'barrier.sync(wgid - wgid + 1, threads = 256)'),
    ('named-count-plus-warp', '2', 'bug', 'barrier.sync(1, threads = 288)')])
mk('named-second-skipped-wg2', G, '2', 'bug', [('      fence.proxy.async()\n      ' + NAMED + '\n',
    '      fence.proxy.async()\n      if wgid == 1 {\n        ' + NAMED + '\n      }\n')])
mk('named-g64-count-96', G64, '2', 'bug', [('barrier.sync(1, threads = 128)', 'barrier.sync(1, threads = 96)')])

# ---- tcgen05 -----------------------------------------------------------------------------
ALLOC0, DEALLOC0 = 'if warpid == 0 {\n    tcgen05.alloc', 'if warpid == 0 {\n    tcgen05.dealloc'
mk('tmem-alloc-dealloc-warp3-twin', B, '3', 'clean', [(ALLOC0, cond(ALLOC0, 'warpid == 3')),
                                                      (DEALLOC0, cond(DEALLOC0, 'warpid == 3'))])
at(DEALLOC0, None, [
    ('tmem-dealloc-arith-same-warp-twin', '3', 'clean', cond(DEALLOC0, 'threadIdx.x < 32')),
    ('tmem-dealloc-arith-other-warp', '3', 'bug', cond(DEALLOC0, 'threadIdx.x / 32 == 1'))], base=B)
mk('tmem-alloc-256-twin', B, '3', 'clean', [('cols = 128', 'cols = 256')])
mk('tmem-commit-done-first-k', B, '3', 'bug', [('        tcgen05.commit(empty[s])\n      }\n    }\n    if elect_sync() {\n      tcgen05.commit(done)\n    }',
    '        tcgen05.commit(empty[s])\n        if k == 0 {\n          tcgen05.commit(done)\n        }\n      }\n    }')])
mk('tmem-dealloc-before-last-ld', B, '3', 'bug', [('  cta.sync()\n  if warpid == 0 {\n    tcgen05.dealloc(acc)\n  }',
    '  if warpid == 0 {\n    tcgen05.dealloc(acc)\n  }\n  cta.sync()')])
mk('tmem-mma-other-stage', B, '3', 'bug', [('tcgen05.mma(acc, As[s], Bs[s]', 'tcgen05.mma(acc, As[s], Bs[(k + 1) % 2]')])

# ---- resources ---------------------------------------------------------------------------
# The register split: consumers' setmaxnreg.inc, and with DEC the producer's setmaxnreg.dec.
for name, exp, inc, dec in (('setmaxnreg-236', 'bug', 236, None),
                            ('setmaxnreg-exact-pool-twin', 'clean', 240, 24),
                            ('setmaxnreg-pool-plus-one-step', 'bug', 240, 32)):
    edits = [('setmaxnreg.inc(232)', f'setmaxnreg.inc({inc})')]
    if dec is not None:
        edits.append(('setmaxnreg.dec(40)', f'setmaxnreg.dec({dec})'))
    mk(name, G, '4', exp, edits)
mk('setmaxnreg-in-loop', G, '4', 'bug', [('      let m0 = t / tn * 128\n      let n0 = t % tn * 256\n      reg acc',
    '      setmaxnreg.inc(232)\n      let m0 = t / tn * 128\n      let n0 = t % tn * 256\n      reg acc')])
mk('mbarrier-count-zero', G, '11', 'bug', [('empty[3](count = 2)', 'empty[3](count = 0)')])
mk('parity-mod-3', G, '11', 'bug', [(CW, 'mbarrier.wait(full[s], parity = it / 3 % 3)')])

# ---- coverage ----------------------------------------------------------------------------
at(TL, 'all', [
    ('tiles-cap-2x-ctas', '5', 'bug', 'for t in blockIdx.x .. min(tiles, 264) step 132'),
    ('tiles-cap-minus-div', '5', 'bug', 'for t in blockIdx.x .. tiles - tiles / 400 step 132')], reward=GEMM)
at(TL, 'all', [('tiles-min-twin', '5', 'clean', 'for t in blockIdx.x .. min(tiles, tiles + 1) step 132')])
mk('g64-grid-round-half', G64, '5', 'bug', [('(N + 127) / 128) threads', '(N + 63) / 128) threads')])
mk('g64-grid-plus-one', G64, '5', 'bug', [('grid((M + 63) / 64,', 'grid(M / 64 + 1,')])
mk('g64-store-guard-removed', G64, '5', 'bug', [('      if n0 + 64 < N {\n        tma.store(C[m0 : +64, n0 + 64 : +64], Cs[:, 64 : +64])\n      }',
    '      tma.store(C[m0 : +64, n0 + 64 : +64], Cs[:, 64 : +64])')])
mk('g64-store-guard-le', G64, '5', 'bug', [('if n0 + 64 < N', 'if n0 + 64 < N - 8')])

# ---- where -------------------------------------------------------------------------------
mk('where-k-mod-4', GS, '9', 'bug', [('K % 8 == 0', 'K % 4 == 0')])
mk('where-rms-512', R, '9', 'bug', [('where H % 1024 == 0', 'where H % 512 == 0')], reward=RMS)
mk('where-rms-2048-twin', R, '9', 'clean', [('where H % 1024 == 0', 'where H % 2048 == 0, H > 0')])
mk('where-gs-n-mod-4', GS, '9', 'bug', [('N % 8 == 0', 'N % 4 == 0')])

# ---- stage reads / proxies / wgmma --------------------------------------------------------
# G64's consumer loop over k (ORIG_LOOP), and with its last k-block peeled off: the last wgmma
# issued before its stage's full wait (PEEL, a bug) or after it (LOOP, the twin).
K_BODY = '''      let s = k % 8
      mbarrier.wait(full[s], parity = k / 8 % 2)
      wgmma.fence()
      wgmma.mma_async(acc, As[s], Bs[s], transpose_b = true, accumulate = k > 0)
      wgmma.commit_group()
      wgmma.wait_group(1)
      if k > 0 && tid_in_wg == 0 {
        mbarrier.arrive(empty[(k + 7) % 8])
      }
    }
'''
LAST_MMA = '    wgmma.fence()\n    wgmma.mma_async(acc, As[(kt - 1) % 8], Bs[(kt - 1) % 8], transpose_b = true, accumulate = kt > 1)\n    wgmma.commit_group()\n'
LAST_WAIT = '    mbarrier.wait(full[(kt - 1) % 8], parity = (kt - 1) / 8 % 2)\n'
ORIG_LOOP = '    for k in 0 .. kt {\n' + K_BODY + '    wgmma.wait_group(0)\n'
PEEL = '    for k in 0 .. kt - 1 {\n' + K_BODY + LAST_MMA + LAST_WAIT + '    wgmma.wait_group(0)\n'
LOOP = '    for k in 0 .. kt - 1 {\n' + K_BODY + LAST_WAIT + LAST_MMA + '    wgmma.wait_group(0)\n'
at(ORIG_LOOP, None, [('peeled-epilogue-read-before-wait', '1', 'bug', PEEL),
                     ('peeled-epilogue-twin', '1', 'clean', LOOP)], base=G64)
mk('fence-before-copy', G, '6', 'bug', [('      wg.copy(Cs[(wgid - 1) * 64 : +64, :], out)\n      // Generic-proxy writes read next by the TMA engine (the async proxy).\n      fence.proxy.async()\n',
    '      fence.proxy.async()\n      wg.copy(Cs[(wgid - 1) * 64 : +64, :], out)\n')])
mk('store-wait-not-read-final', G, '6', 'clean', [('      tma.store_wait(0)\n    }\n  }\n}', '      tma.store_wait(0, read = true)\n    }\n  }\n}')])
STORE_WAIT = '      if threadIdx.x == 128 {\n        tma.store_wait(0, read = true)\n      }'
mk('store-wait-moved-after-barrier', G, '6', 'bug', [(STORE_WAIT + '\n      ' + NAMED + '\n      wg.copy',
    '      ' + NAMED + '\n' + STORE_WAIT + '\n      wg.copy')])
mk('store-wait-by-other-thread', G, '6', 'bug', [(STORE_WAIT, STORE_WAIT.replace('128', '256'))])
mk('wgmma-wait-1-before-release-g64', G64, '1', 'bug', [('wgmma.wait_group(1)', 'wgmma.wait_group(2)')])
mk('wgmma-accumulate-k-ne-4', G64, 'h', 'bug', [('accumulate = k > 0', 'accumulate = k != 4 && k > 0')], reward=GEMM)
TILE_HEAD = '      let m0 = t / tn * 128\n      let n0 = t % tn * 256\n'
ACC = 'reg acc: f32[64, 256] layout(wgmma_acc(64, 256))\n'
mk('fill-outside-tile-loop', G, 'h', 'bug', [('    ' + TL + ' {\n' + TILE_HEAD + '      ' + ACC + '      wg.fill(acc, 0.0)\n',
    '    ' + ACC + '    wg.fill(acc, 0.0)\n    ' + TL + ' {\n' + TILE_HEAD)], reward=GEMM)

# ---- warp-uniform conditions (class 10) ---------------------------------------------------
# The producer warpgroup's or warp's condition written otherwise: uniform (clean) or not (bug).
for name, exp, place, new in (
        ('uniform-wg-by-threadidx', 'clean', WG0, 'threadIdx.x < 128'),
        ('uniform-warp-by-shift', 'clean', PRODUCER, 'threadIdx.x / 32 % 4 == 0'),
        ('uniform-warp-by-mul', 'clean', PRODUCER, 'threadIdx.x * 2 < 64'),
        ('divergent-producer-16', 'bug', PRODUCER, 'threadIdx.x < 16'),
        ('uniform-wg-warpid-lt-4', 'clean', WG0, 'warpid < 4'),
        ('divergent-setmaxnreg-wg', 'bug', WG0, 'warpid < 3')):
    mk(name, G, '10', exp, [(place, cond(place, new))])

# ---- hacks (reward) -----------------------------------------------------------------------
mk('hack-skip-k-above-256', GS, 'h', 'bug', [('for k in 0 .. kt', 'for k in 0 .. min(kt, 4)', 'all'),
    ('empty[(kt + 5) % 6]', 'empty[(min(kt, 4) + 5) % 6]')], reward=GEMM)
mk('hack-rms-ignores-eps', R, 'h', 'bug', [('f32(H) + eps)', 'f32(H) + 0.000001)')], reward=RMS)
SUMSQ = ' {\n    cta.copy(xv, X[row, c * 1024 : +1024])\n    cta.cast(xf, xv)\n    cta.mul(sq'
mk('hack-rms-sumsq-h-3072', R, 'h', 'bug', [('  for c in 0 .. H / 1024' + SUMSQ, '  for c in 0 .. min(H / 1024, 2)' + SUMSQ)], reward=RMS)
mk('hack-gs-n-above-256-zero', GS, 'h', 'bug', [('      tma.store(C[m0 : +64, n0 : +64], Cs)', '      if n0 < 256 {\n        tma.store(C[m0 : +64, n0 : +64], Cs)\n      }')], reward=GEMM)
mk('hack-gs-scale-row-block-2', GS, 'h', 'bug', [('    wg.cast(out, acc)', '    if blockIdx.y == 2 {\n      wg.fill(acc, 0.0)\n    }\n    wg.cast(out, acc)')], reward=GEMM)

# ---- batch 2 -----------------------------------------------------------------------------
AT = 'attention_fwd_sm90.tile'
# Each edits the first occurrence of its text in the attention kernel.
for name, cls, exp, old, new in (
        ('attn-both-sync-barrier-1-twin', '2', 'clean', '        barrier.arrive(1, threads = 256)\n', '        barrier.sync(1, threads = 256)\n'),
        ('attn-consumer1-sync-1-not-2', '2', 'bug', '        barrier.arrive(1, threads = 256)\n        barrier.sync(2, threads = 256)\n', '        barrier.arrive(1, threads = 256)\n        barrier.sync(1, threads = 256)\n'),
        ('attn-fullv-parity-flipped', '1', 'bug', 'mbarrier.wait(fullV[s], parity = n / 2 % 2)', 'mbarrier.wait(fullV[s], parity = (n / 2 + 1) % 2)'),
        ('attn-last-stage-not-released-twin', '1', 'clean', '      if tid_in_wg == 0 {\n        mbarrier.arrive(empty[s])', '      if tid_in_wg == 0 && n + 1 < nk {\n        mbarrier.arrive(empty[s])'),
        ('attn-shfl-under-lane-cond', '10', 'bug', '      l[h2] = l[h2] + shfl_xor(l[h2], 2)\n', '      if laneid % 4 == 0 {\n        l[h2] = l[h2] + shfl_xor(l[h2], 2)\n      }\n'),
        ('attn-ls-same-rows', '5', 'bug', 'wg.copy(Ls[r0 : +64], Lr)', 'wg.copy(Ls[0 : +64], Lr)'),
        ('attn-barrier3-id-2', '2', 'bug', '    barrier.sync(3, threads = 256)\n', '    barrier.sync(2, threads = 256)\n')):
    mk(name, AT, cls, exp, [(old, new, 0)])
mk('g-producer-four-warps', G, '1e', 'bug', [(PRODUCER, cond(PRODUCER, 'warpid < 4'))])
RELEASE0 = '        if tid_in_wg == 0 {\n          mbarrier.arrive(empty[s])'
mk('g-release-thread-127-twin', G, '1', 'clean', [(RELEASE0, cond(RELEASE0, 'tid_in_wg == 127'))])
mk('g-store-issuer-256-twin', G, '6', 'clean', [(ST128, 'threadIdx.x == 256', 'all')])
mk('g-store-issuer-256-final-wait-128', G, '6', 'bug', [(ST128, 'threadIdx.x == 256', 0), (ST128, 'threadIdx.x == 256', 1)])
mk('g-epilogue-barrier-before-wait', G, '6', 'bug', [('      fence.proxy.async()\n      ' + NAMED + '\n      if ' + ST128 + ' {\n        for j',
    '      ' + NAMED + '\n      fence.proxy.async()\n      if ' + ST128 + ' {\n        for j')])
mk('g64-elect-vote-twin', G64, '10', 'clean', [('        if elect_sync() {', '        if vote_all(true) && elect_sync() {')])

# ==== pass 2 ================================================================================
# The kernels pass 1 touched little (attention, FP8 and block-scaled FP8, sm100 GEMM, device
# scale, RMSNorm family, cluster multicast). Each mutant runs through check, race --static, sim
# and reward (scripts/redteam/stages.py). want: 'static' (a synchronisation or memory bug that
# check must not prove) or 'dynamic' (a wrong value or a hack that sim / the reward must fail).
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AT, AO, A100 = 'attention_fwd_sm90.tile', 'attention_fwd_overlap_sm90.tile', 'attention_fwd_sm100.tile'
F8, BS, B100 = 'gemm_fp8_sm90.tile', 'gemm_fp8_blockscaled_sm90.tile', 'gemm_bf16_sm100.tile'
TP, AG, AR = 'tp_gemm_bf16_sm90.tile', 'allgather_gemm_bf16_sm90.tile', 'allreduce_bf16.tile'
RF, R1, RO = 'rmsnorm_family.tile', 'rmsnorm.tile', 'rmsnorm_onepass.tile'
# Sizes: every ring wraps at least twice, a ragged edge where the clause allows one.
ATT = 'B=1,H=1,S=456,sm_scale=0.088'
ATT_R = 'B=1,H=2,S=456;B=1,H=1,S=136'


def _text(base, src=None):
    if src:
        return src
    return open(os.path.join(_ROOT, 'kernels', base)).read()


def _problem(text, kernel):
    """The `// problem:` line that precedes `kernel` (or the first kernel)."""
    pos = re.search(r'^kernel ' + (re.escape(kernel) + r'\(' if kernel else ''), text, re.M).start()
    probs = list(re.finditer(r'// problem: (.*)', text[:pos]))
    return probs[-1].group(1).strip()


# Per family, what each of its mutants runs with: the base kernel, the kernel of a multi-kernel
# file, the sim sizes (args) and the reward's (rsizes), an inline source (src), sim flags; set
# before the family's rows. A row's own keywords override them; a family not in the table is a
# kernel file of kernels/ with no defaults.
FAMILIES = {}


def r2(family, name, cls, exp, edits, want=None, **kw):
    """A pass-2 mutant `r2-NAME` of `family` (FAMILIES, or a kernel file)."""
    d = dict(FAMILIES.get(family, {'base': family}))
    d.update(kw)
    want = want or d.pop('want', 'static')
    d.pop('want', None)
    m = dict(name='r2-' + name, base=d.pop('base'), cls=cls, exp=exp, edits=edits, want=want,
             kernel=d.pop('kernel', None), args=d.pop('args', None), rsizes=d.pop('rsizes', None))
    m.update(d)
    m['problem'] = m.get('problem') or _problem(_text(m['base'], m.get('src')), m['kernel'])
    M.append(m)


# ---- attention_fwd_sm90: rings, ping-pong, online softmax, causal ------------------------
REL = '''      mbarrier.wait(fullV[s], parity = n / 2 % 2)
      wg.gemm(Oacc, P, Vs[s], accumulate = true)
      if tid_in_wg == 0 {
        mbarrier.arrive(empty[s])
      }
'''
FAMILIES['at'] = dict(base=AT, kernel='attention_fwd_sm90', args=ATT, rsizes=ATT_R)
r2('at', 'at-qfull-parity-1', '1', 'bug', [('mbarrier.wait(qfull[0], parity = 0)', 'mbarrier.wait(qfull[0], parity = 1)', 0)])
r2('at', 'at-empty-count-1', '1e', 'bug', [('empty[2](count = 2)', 'empty[2](count = 1)', 0)])
r2('at', 'at-release-before-pv', '1', 'bug', [(REL, '''      if tid_in_wg == 0 {
        mbarrier.arrive(empty[s])
      }
      mbarrier.wait(fullV[s], parity = n / 2 % 2)
      wg.gemm(Oacc, P, Vs[s], accumulate = true)
''', 0)])
r2('at', 'at-release-every-warp', '1e', 'bug', [('      if tid_in_wg == 0 {\n        mbarrier.arrive(empty[s])', '      if laneid == 0 {\n        mbarrier.arrive(empty[s])', 0)])
r2('at', 'at-barrier3-count-128', '2', 'bug', [('barrier.sync(3, threads = 256)', 'barrier.sync(3, threads = 128)', 0)])
r2('at', 'at-store-fence-dropped', '6', 'bug', [('    fence.proxy.async()\n    barrier.sync(3, threads = 256)', '    barrier.sync(3, threads = 256)', 0)])
r2('at', 'at-fence-after-barrier3', '6', 'bug', [('    fence.proxy.async()\n    barrier.sync(3, threads = 256)', '    barrier.sync(3, threads = 256)\n    fence.proxy.async()', 0)])
r2('at', 'at-no-final-store-wait', '6', 'bug', [('      tma.store_commit()\n      tma.store_wait(0)\n', '      tma.store_commit()\n', 0)])
r2('at', 'at-pingpong-arrive-id-2', '2', 'bug', [('barrier.arrive(1, threads = 256)', 'barrier.arrive(2, threads = 256)', 0)])
r2('at', 'at-s-gemm-next-stage', '1', 'bug', [('wg.gemm(Sacc, Qs[r0 : +64, :], Ks[s],', 'wg.gemm(Sacc, Qs[r0 : +64, :], Ks[(n + 1) % 2],', 0)])
r2('at', 'at-pingpong-roles-swapped', '2', 'clean', [('if w == 0 {', 'if w == 1 {', 0), ('if w == 0 {', 'if w == 1 {', 0)])
r2('at', 'at-named-ids-renumbered', '2', 'clean', [('barrier.sync(1, threads = 256)', 'barrier.sync(4, threads = 256)', 0),
                                          ('barrier.arrive(1, threads = 256)', 'barrier.arrive(4, threads = 256)', 0),
                                          ('barrier.sync(2, threads = 256)', 'barrier.sync(5, threads = 256)', 0),
                                          ('barrier.sync(2, threads = 256)', 'barrier.sync(5, threads = 256)', 0)])
r2('at', 'at-mask-p-le-s', 'v', 'bug', [('let p = select(kv0 + col < S,', 'let p = select(kv0 + col <= S,', 0)], 'dynamic',
   args='B=1,H=1,S=264,sm_scale=0.088', rsizes='B=1,H=1,S=264')
r2('at', 'at-mask-p-past-block', 'v', 'bug', [('let p = select(kv0 + col < S,', 'let p = select(kv0 + col < S + 8,', 0)], 'dynamic')
r2('at', 'at-max-unmasked', 'v', 'clean', [('mn[h2] = max(mn[h2], select(kv0 + col < S, Sacc[row, col], -3.0e38))', 'mn[h2] = max(mn[h2], Sacc[row, col])', 0)], 'dynamic')
r2('at', 'at-l-not-rescaled', 'v', 'bug', [('        l[h2] = l[h2] * alpha[h2]\n', '', 0)], 'dynamic')
r2('at', 'at-row-max-one-shuffle', 'v', 'bug', [('        mn[h2] = max(mn[h2], shfl_xor(mn[h2], 2))\n', '', 0)], 'dynamic')
r2('at', 'at-lse-base2-scale', 'v', 'bug', [('Lr[row] = fma(m[h2], sm_scale, log(l[h2]))', 'Lr[row] = fma(m[h2], sl2, log(l[h2]))', 0)], 'dynamic')
r2('at', 'at-o-rescale-after-pv', 'v', 'bug', [('          Oacc[row, col] = Oacc[row, col] * alpha[h2]\n', '', 0),
    ('      wg.gemm(Oacc, P, Vs[s], accumulate = true)\n', '      wg.gemm(Oacc, P, Vs[s], accumulate = true)\n      for h2 in 0 .. 2 unroll {\n        let row = wid_in_wg * 16 + h2 * 8 + laneid / 4\n        for j in 0 .. 32 unroll {\n          let col = j / 2 * 8 + laneid % 4 * 2 + j % 2\n          Oacc[row, col] = Oacc[row, col] * alpha[h2]\n        }\n      }\n', 0)], 'dynamic')
CK = 'attention_fwd_causal_sm90'
r2('at', 'atc-skip-diagonal', 'v', 'bug', [('let nk = blockIdx.x + 1', 'let nk = blockIdx.x', 0)], 'dynamic', kernel=CK)
r2('at', 'atc-mask-strict', 'v', 'bug', [('kv0 + col <= q0 + r0 + row', 'kv0 + col < q0 + r0 + row', 0),
                                   ('kv0 + col <= q0 + r0 + row', 'kv0 + col < q0 + r0 + row', 0)], 'dynamic', kernel=CK)
r2('at', 'atc-mask-wrong-side', 'v', 'bug', [('kv0 + col <= q0 + r0 + row', 'q0 + r0 + row <= kv0 + col', 0),
                                       ('kv0 + col <= q0 + r0 + row', 'q0 + r0 + row <= kv0 + col', 0)], 'dynamic', kernel=CK)
r2('at', 'atc-mask-no-r0', 'v', 'bug', [('kv0 + col <= q0 + r0 + row', 'kv0 + col <= q0 + row', 0),
                                  ('kv0 + col <= q0 + r0 + row', 'kv0 + col <= q0 + row', 0)], 'dynamic', kernel=CK)
r2('at', 'atc-producer-all-blocks', '1', 'bug', [('      for n in 0 .. nk {\n        let s = n % 2\n        mbarrier.wait(empty[s]',
    '      for n in 0 .. (S + 127) / 128 {\n        let s = n % 2\n        mbarrier.wait(empty[s]', 1)], kernel=CK)
r2('at', 'atc-consumer-one-block-more', '1', 'bug', [('    for n in 0 .. nk {\n      let s = n % 2\n      let kv0', '    for n in 0 .. nk + 1 {\n      let s = n % 2\n      let kv0', 1)], kernel=CK)
r2('at', 'atd64-rescale-half-columns', 'v', 'bug', [('        for j in 0 .. 16 unroll {\n          let col = j / 2 * 8 + laneid % 4 * 2 + j % 2\n          Oacc[row, col] = Oacc[row, col] * alpha[h2]',
    '        for j in 0 .. 8 unroll {\n          let col = j / 2 * 8 + laneid % 4 * 2 + j % 2\n          Oacc[row, col] = Oacc[row, col] * alpha[h2]', 0)], 'dynamic', kernel='attention_fwd_d64_sm90')

# ---- attention_fwd_overlap_sm90: two wgmma groups in flight, register-A P ------------------

P_CONV = '''      for h2 in 0 .. 2 unroll {
        let row = wid_in_wg * 16 + h2 * 8 + laneid / 4
        for j in 0 .. 32 unroll {
          let col = j / 2 * 8 + laneid % 4 * 2 + j % 2
          P[row, col] = bf16(Sacc[row, col])
          Oacc[row, col] = Oacc[row, col] * alpha[h2]
        }
      }
'''
FAMILIES['ao'] = dict(base=AO, kernel='attention_fwd_overlap_sm90', args=ATT, rsizes=ATT_R)
r2('ao', 'ao-softmax-before-wait', '1', 'bug', [('      wgmma.wait_group(1)\n', '', 0)])
r2('ao', 'ao-emptyv-count-1', '1e', 'bug', [('emptyV[2](count = 2)', 'emptyV[2](count = 1)', 0)])
r2('ao', 'ao-p-written-in-flight', '1', 'bug', [('      wgmma.wait_group(0)\n', '''      for h2 in 0 .. 2 unroll {
        let row = wid_in_wg * 16 + h2 * 8 + laneid / 4
        for j in 0 .. 32 unroll {
          let col = j / 2 * 8 + laneid % 4 * 2 + j % 2
          P[row, col] = bf16(Sacc[row, col])
        }
      }
      wgmma.wait_group(0)
''', 0), ('          P[row, col] = bf16(Sacc[row, col])\n          Oacc[row, col] = Oacc[row, col] * alpha[h2]', '          Oacc[row, col] = Oacc[row, col] * alpha[h2]', 0)])
r2('ao', 'ao-v-next-block', 'v', 'bug', [('V[b, h, i * 128 : +128, 0 : +64]', 'V[b, h, (i + 1) * 128 : +128, 0 : +64]', 0), ('V[b, h, i * 128 : +128, 64 : +64]', 'V[b, h, (i + 1) * 128 : +128, 64 : +64]', 0)], 'dynamic')
r2('ao', 'ao-unmasked-when-inside', 'v', 'bug', [('if kv0 + 128 <= S {', 'if kv0 < S {', 0)], 'dynamic')
r2('ao', 'ao-pingpong-arrive-before-issue', '2', 'clean', [
    ('      if w == 1 {\n        barrier.sync(2, threads = 256)\n      }\n      wgmma.fence()', '      if w == 1 {\n        barrier.sync(2, threads = 256)\n        barrier.arrive(1, threads = 256)\n      }\n      wgmma.fence()', 0),
    ('      if w == 0 {\n        barrier.sync(2, threads = 256)\n      } else {\n        barrier.arrive(1, threads = 256)\n      }\n', '      if w == 0 {\n        barrier.sync(2, threads = 256)\n      }\n', 0)])
OC = 'attention_fwd_overlap_causal_sm90'
# Session 15 (attn2) took the no-op first and last iterations out of the
# overlap kernels; the mutants of those iterations became these three.
r2('ao', 'aoc-mask-every-block', 'v', 'clean', [('      if i + 2 < nk {\n', '      if i + 2 < 0 {\n', 0)], 'dynamic', kernel=OC)
r2('ao', 'aoc-peeled-diagonal-unmasked', 'v', 'bug', [('    if nk > 1 {\n', '    if nk > 0 {\n', 0)], 'dynamic', kernel=OC)
r2('ao', 'aoc-diagonal-unmasked', 'v', 'bug', [('      if i + 2 < nk {\n', '      if i + 1 < nk {\n', 0)], 'dynamic', kernel=OC)

# ---- attention_fwd_sm100: tcgen05, tensor memory, four rings -------------------------------

FAMILIES['a1'] = dict(base=A100, kernel='attention_fwd_sm100', args=ATT, rsizes=ATT_R)
r2('a1', 'a100-pv-alloc-64', '3', 'bug', [('tcgen05.alloc(PVacc, cols = 128)', 'tcgen05.alloc(PVacc, cols = 64)')])
r2('a1', 'a100-pv-never-freed', '3', 'bug', [('    tcgen05.dealloc(PVacc)\n', '')])
r2('a1', 'a100-relinquish-between-allocs', '3', 'bug', [('    tcgen05.alloc(Sacc, cols = 128)\n', '    tcgen05.alloc(Sacc, cols = 128)\n    tcgen05.relinquish_alloc_permit()\n')])
r2('a1', 'a100-relinquish-after-allocs', '3', 'clean', [('    tcgen05.alloc(PVacc, cols = 128)\n', '    tcgen05.alloc(PVacc, cols = 128)\n    tcgen05.relinquish_alloc_permit()\n')])
r2('a1', 'a100-pfull-count-96', '1e', 'bug', [('pfull[1](count = 128)', 'pfull[1](count = 96)')])
r2('a1', 'a100-oempty-parity-off', '1', 'bug', [('mbarrier.wait(oempty[0], parity = (n + 1) % 2)', 'mbarrier.wait(oempty[0], parity = n % 2)')])
r2('a1', 'a100-sfull-commit-first', '3', 'bug', [('''          tcgen05.mma(Sacc, Qs[:, 0 : +64], Ks[s][:, 0 : +64], accumulate = false)
          tcgen05.mma(Sacc, Qs[:, 64 : +64], Ks[s][:, 64 : +64], accumulate = true)
          tcgen05.commit(sfull[0])
''', '''          tcgen05.commit(sfull[0])
          tcgen05.mma(Sacc, Qs[:, 0 : +64], Ks[s][:, 0 : +64], accumulate = false)
          tcgen05.mma(Sacc, Qs[:, 64 : +64], Ks[s][:, 64 : +64], accumulate = true)
''')])
r2('a1', 'a100-ld-no-wait', '3', 'bug', [('        tcgen05.wait_ld()\n        for j in 0 .. 16 unroll {\n          mn[0] = max(mn[0], select(kv0 + 0 + j < S', '        for j in 0 .. 16 unroll {\n          mn[0] = max(mn[0], select(kv0 + 0 + j < S')])
r2('a1', 'a100-mask-last-chunk-offset', 'v', 'bug', [('let p = select(kv0 + 112 + j < S,', 'let p = select(kv0 + j < S,')], 'dynamic')
r2('a1', 'a100-alpha-no-empty-wait', '1', 'bug', [('        mbarrier.wait(aempty[0], parity = (n + 1) % 2)\n', '')])
r2('a1', 'a100-alpha-released-before-read', '1', 'bug', [('        ar[0] = As[0, crow]\n        mbarrier.arrive(aempty[0])\n', '        mbarrier.arrive(aempty[0])\n        ar[0] = As[0, crow]\n')])
r2('a1', 'a100-pv-into-sacc', '3', 'bug', [('tcgen05.mma(PVacc, Ps[:, 0 : +64]', 'tcgen05.mma(Sacc, Ps[:, 0 : +64]')])
r2('a1', 'a100-o-read-no-ofull-wait', '1', 'bug', [('        mbarrier.wait(ofull[0], parity = n % 2)\n', '')])
r2('a1', 'a100-epilogue-barrier-128', '2', 'bug', [('      barrier.sync(1, threads = 256)\n      ar[0] = Ys[0, crow]', '      barrier.sync(1, threads = 128)\n      ar[0] = Ys[0, crow]')])
r2('a1', 'a100-no-done-wait-mma-warp-idle', '3', 'clean', [('  mbarrier.wait(done[0], parity = 0)\n  tcgen05.fence_before_thread_sync()\n  cta.sync()',
    '  if warpid == 8 {\n    mbarrier.wait(done[0], parity = 0)\n  }\n  tcgen05.fence_before_thread_sync()\n  cta.sync()')])

# ---- gemm_fp8_sm90 -----------------------------------------------------------------------
F8A = 'M=136,N=264,K=400,scale=0.37'
F8R = 'M=136,N=264,K=400;M=64,N=512,K=256'

FAMILIES['f8'] = dict(base=F8, args=F8A, rsizes=F8R)
r2('f8', 'f8-two-stages-parity-three', '1c', 'bug', [('f8e4m3[3, 128, 128] layout(swizzle(128B, f8e4m3, S[(3, 128, 128)', 'f8e4m3[2, 128, 128] layout(swizzle(128B, f8e4m3, S[(2, 128, 128)'),
    ('f8e4m3[3, 256, 128] layout(swizzle(128B, f8e4m3, S[(3, 256, 128)', 'f8e4m3[2, 256, 128] layout(swizzle(128B, f8e4m3, S[(2, 256, 128)'),
    ('full[3](count = 1), empty[3](count = 2)', 'full[2](count = 1), empty[2](count = 2)'), ('let s = it % 3', 'let s = it % 2', 'all')])
r2('f8', 'f8-scale-dropped', 'v', 'bug', [('      wg.mul(acc, acc, scale)\n', '')], 'dynamic')
r2('f8', 'f8-scale-each-k', 'v', 'bug', [('      wg.mul(acc, acc, scale)\n', ''),
    ('        wg.gemm(acc, As[s][(wgid - 1) * 64 : +64, :], Bs[s], transpose_b = true)\n', '        wg.gemm(acc, As[s][(wgid - 1) * 64 : +64, :], Bs[s], transpose_b = true)\n        wg.mul(acc, acc, scale)\n')], 'dynamic')
r2('f8', 'f8-tx-bytes-one-operand', '1', 'bug', [('bytes = 49152', 'bytes = 32768')])
r2('f8', 'f8-k-tail-dropped', 'v', 'bug', [('let kt = (K + 127) / 128', 'let kt = K / 128')], 'dynamic')
r2('f8', 'f8-scale-before-cast-as-bf16', 'v', 'clean', [('      wg.mul(acc, acc, scale)\n      reg out: bf16[64, 256] layout(wgmma_acc(64, 256))\n      wg.cast(out, acc)\n',
    '      reg out: bf16[64, 256] layout(wgmma_acc(64, 256))\n      wg.mul(acc, acc, scale)\n      wg.cast(out, acc)\n')], 'dynamic')

# ---- gemm_fp8_blockscaled_sm90: scales, promotion ----------------------------------------
BSA = 'M=132,N=264,K=640,KB=5,NB=3'
BSR = 'M=132,N=264,K=640,KB=5,NB=3;M=64,N=128,K=1408,KB=11,NB=1'

FAMILIES['bs'] = dict(base=BS, args=BSA, rsizes=BSR)
NB_SYNC = '''        if wgid == 1 {
          barrier.sync(2, threads = 128)
        } else {
          barrier.sync(3, threads = 128)
        }
'''
r2('bs', 'bs-sb-first-k-block', 'v', 'bug', [('sc[2] = SB[n0 / 128, k]', 'sc[2] = SB[n0 / 128, 0]')], 'dynamic')
r2('bs', 'bs-sb-next-n-block', 'v', 'bug', [('sc[2] = SB[n0 / 128, k]', 'sc[2] = SB[min(n0 / 128 + 1, NB - 1), k]')], 'dynamic')
r2('bs', 'bs-sa-row-8-missed', 'v', 'bug', [('sc[1] = SAs[s, (wgid - 1) * 64 + r + 8]', 'sc[1] = SAs[s, (wgid - 1) * 64 + r]')], 'dynamic')
r2('bs', 'bs-sa-other-warpgroup', 'v', 'bug', [('sc[0] = SAs[s, (wgid - 1) * 64 + r]', 'sc[0] = SAs[s, r]'), ('sc[1] = SAs[s, (wgid - 1) * 64 + r + 8]', 'sc[1] = SAs[s, r + 8]')], 'dynamic')
r2('bs', 'bs-release-without-wg-barrier', '1', 'bug', [(NB_SYNC, '')])
r2('bs', 'bs-wg-barriers-one-id', '2', 'bug', [('barrier.sync(3, threads = 128)', 'barrier.sync(2, threads = 128)')])
r2('bs', 'bs-part-not-reset', 'v', 'bug', [('accumulate = false)', 'accumulate = k > 0)')], 'dynamic')
r2('bs', 'bs-tx-bytes-no-scales', '1', 'bug', [('bytes = 33280', 'bytes = 32768')])
r2('bs', 'bs-sa-previous-stage', '1', 'bug', [('sc[0] = SAs[s, (wgid - 1) * 64 + r]', 'sc[0] = SAs[(it + 4) % 5, (wgid - 1) * 64 + r]')])
r2('bs', 'bs-release-after-promotion', '1', 'clean', [(NB_SYNC + '        if tid_in_wg == 0 {\n          mbarrier.arrive(empty[s])\n        }\n', ''),
    ('        }\n      }\n      reg out: bf16[64, 128]', '        }\n        if tid_in_wg == 0 {\n          mbarrier.arrive(empty[s])\n        }\n      }\n      reg out: bf16[64, 128]')], 'dynamic')
r2('bs', 'bs-scales-in-part-order', 'v', 'clean', [('(sc[j / 32] * sc[2])', '(sc[2] * sc[j / 32])')], 'dynamic')
r2('bs', 'bs-promote-acc-zero-first-k', 'v', 'bug', [('      wg.fill(acc, 0.0)\n', '')], 'dynamic')

# ---- gemm_bf16_sm100: tcgen05, TMEM ------------------------------------------------------
BA = 'M=256,N=256,K=320'
BR = 'M=256,N=256,K=320;M=128,N=384,K=512'

FAMILIES['b1'] = dict(base=B100, args=BA, rsizes=BR)
r2('b1', 'b100-commit-empty-every-lane', '1e', 'bug', [('        tcgen05.mma(acc, As[s], Bs[s], accumulate = k > 0)\n        tcgen05.commit(empty[s])\n      }\n',
    '        tcgen05.mma(acc, As[s], Bs[s], accumulate = k > 0)\n      }\n      tcgen05.commit(empty[s])\n')])
r2('b1', 'b100-done-parity-1', '1', 'bug', [('mbarrier.wait(done, parity = 0)', 'mbarrier.wait(done, parity = 1)')])
r2('b1', 'b100-wait-ld-after-use', '3', 'bug', [('    tcgen05.wait_ld()\n    warp.cast(out[warpid * 32 : +32, :], frag[warpid * 32 : +32, :])\n',
    '    warp.cast(out[warpid * 32 : +32, :], frag[warpid * 32 : +32, :])\n    tcgen05.wait_ld()\n')])
r2('b1', 'b100-alloc-64', '3', 'bug', [('tcgen05.alloc(acc, cols = 128)', 'tcgen05.alloc(acc, cols = 64)')])
r2('b1', 'b100-accumulate-k-gt-1', 'v', 'bug', [('accumulate = k > 0', 'accumulate = k > 1')], 'dynamic')
r2('b1', 'b100-fenced-dealloc', '3', 'clean', [('  cta.sync()\n  if warpid == 0 {\n    tcgen05.dealloc(acc)', '  tcgen05.fence_before_thread_sync()\n  cta.sync()\n  if warpid == 0 {\n    tcgen05.fence_after_thread_sync()\n    tcgen05.dealloc(acc)')])
r2('b1', 'b100-ld-rows-of-warp0', '3', 'bug', [('tcgen05.ld(frag[warpid * 32 : +32, :], acc[warpid * 32 : +32, c * 32 : +32]', 'tcgen05.ld(frag[warpid * 32 : +32, :], acc[0 : +32, c * 32 : +32]')])
r2('b1', 'b100-empty-parity-flipped', '1', 'bug', [('mbarrier.wait(empty[s], parity = (k / 2 + 1) % 2)', 'mbarrier.wait(empty[s], parity = k / 2 % 2)')])
r2('b1', 'b100-relinquish-after-alloc', '3', 'clean', [('    tcgen05.alloc(acc, cols = 128)\n', '    tcgen05.alloc(acc, cols = 128)\n    tcgen05.relinquish_alloc_permit()\n')])

# ---- device scale: the TP GEMM handoff, the all-gather GEMM, flag barriers ---------------
TPA = 'M=256,N=512,KD=128,D=2'
TPK = 'tp_gemm_allreduce_bf16_sm90'
r2(TP, 'tp-drained-parity-flipped', '20.3', 'bug', [('mbarrier.wait(drained[j % 2], parity = (j / 2 + 1) % 2)', 'mbarrier.wait(drained[j % 2], parity = j / 2 % 2)')], kernel=TPK, args=TPA)
r2(TP, 'tp-handoff-no-store-wait', '20.3', 'bug', [('        tma.store_wait(0)\n        fence.proxy.async(space = "global")\n        mbarrier.wait(drained', '        fence.proxy.async(space = "global")\n        mbarrier.wait(drained')], kernel=TPK, args=TPA)
r2(TP, 'tp-handoff-no-global-fence', '20.3', 'bug', [('        tma.store_wait(0)\n        fence.proxy.async(space = "global")\n        mbarrier.wait(drained', '        tma.store_wait(0)\n        mbarrier.wait(drained')], kernel=TPK, args=TPA)
r2(TP, 'tp-drained-count-2', '1e', 'bug', [('drained[2](count = 3)', 'drained[2](count = 2)')], kernel=TPK, args=TPA)
r2(TP, 'tp-warp3-rows-short', '5', 'bug', [('device.warp_allreduce(C[m0 + 96 : +32, n0 : +256], P[m0 + 96 : +32, n0 : +256]', 'device.warp_allreduce(C[m0 + 104 : +24, n0 : +256], P[m0 + 104 : +24, n0 : +256]')], 'dynamic', kernel=TPK, args=TPA)
r2(TP, 'tp-stored-slot-j', '20.3', 'bug', [('mbarrier.wait(stored[j % 2], parity = j / 2 % 2)', 'mbarrier.wait(stored[(j + 1) % 2], parity = j / 2 % 2)')], kernel=TPK, args=TPA)
TP64 = 'tp_gemm_allreduce_bf16_sm90_64x128'
r2(TP, 'tp64-stored-before-store-wait', '20.3', 'bug', [('      tma.store_wait(0)\n      fence.proxy.async(space = "global")\n      mbarrier.arrive(stored[0])', '      mbarrier.arrive(stored[0])\n      tma.store_wait(0)\n      fence.proxy.async(space = "global")')], kernel=TP64, args='M=128,N=256,KD=128,D=2')
AGA = 'M=256,MD=128,N=256,K=128,D=2'
r2(AG, 'ag-get-own-device', 'v', 'bug', [('dev = m0 / MD', 'dev = devid')], 'dynamic', args=AGA)
r2(AG, 'ag-no-global-fence', '20.3', 'bug', [('  fence.proxy.async(space = "global")\n  cta.sync()', '  cta.sync()')], args=AGA)
r2(AG, 'ag-no-cta-sync', '20.3', 'bug', [('  fence.proxy.async(space = "global")\n  cta.sync()', '  fence.proxy.async(space = "global")')], args=AGA)
# The reading thread's own global proxy fence after it observed the writes (the cta.sync) and
# before its TMA read is what docs/scales.md accepts for global memory: clean by that rule.
r2(AG, 'ag-fence-after-sync', '20.3', 'clean', [('  fence.proxy.async(space = "global")\n  cta.sync()', '  cta.sync()\n  fence.proxy.async(space = "global")')], args=AGA)
r2(AR, 'ar-one-shot-half-grid', '5', 'bug', [('launch devices(N) grid(E / 4096) threads(512)', 'launch devices(N) grid(E / 8192) threads(512)')], 'dynamic', kernel='allreduce_one_shot_bf16', args='E=16384,N=2')

FLAG = '''// problem: allreduce(X -> Y)
kernel staged_allreduce(X: global bf16[E], W: global bf16[E], Y: global bf16[E], F: global u32[2, G, 8], epoch: i32)
  where E == G * 256, G >= 1, N >= 1, N <= 8
  launch devices(N) grid(G) threads(64) target(sm_90a)
{
  let e0 = blockIdx.x * 256
  shared t: bf16[256]
  shared tf: f32[256]
  shared acc: f32[256]
  cta.copy(W[e0 : +256], X[e0 : +256])
  cta.sync()
  if threadIdx.x < ndev {
    device.fence()
    device.signal(F[0, blockIdx.x, devid], dev = threadIdx.x, value = epoch)
    device.wait(F[0, blockIdx.x, threadIdx.x], value = epoch)
  }
  cta.sync()
  cta.fill(acc, 0.0)
  for p in 0 .. ndev {
    device.get(t, W[e0 : +256], dev = p)
    cta.cast(tf, t)
    cta.add(acc, acc, tf)
  }
  cta.cast(Y[e0 : +256], acc)
  cta.sync()
  if threadIdx.x < ndev {
    device.fence()
    device.signal(F[1, blockIdx.x, devid], dev = threadIdx.x, value = epoch)
    device.wait(F[1, blockIdx.x, threadIdx.x], value = epoch)
  }
}
'''
FA = 'E=512,N=2,G=2,epoch=1'
SIG0 = 'device.signal(F[0, blockIdx.x, devid], dev = threadIdx.x, value = epoch)'
WAIT0 = 'device.wait(F[0, blockIdx.x, threadIdx.x], value = epoch)'

FAMILIES['fl'] = dict(base='flag-barrier (tests/lit/devices/missing-fence.tile, fixed)', args=FA, src=FLAG,
                      simflags=['--races'])
r2('fl', 'flag-base', '20.3', 'clean', [])
r2('fl', 'flag-signal-indices-swapped', '20.3', 'bug', [(SIG0, 'device.signal(F[0, blockIdx.x, threadIdx.x], dev = devid, value = epoch)')])
r2('fl', 'flag-wait-own-slot', '20.3', 'bug', [(WAIT0, 'device.wait(F[0, blockIdx.x, devid], value = epoch)')])
r2('fl', 'flag-one-peer-short', '20.3', 'bug', [('  if threadIdx.x < ndev {\n    device.fence()\n    ' + SIG0, '  if threadIdx.x < ndev - 1 {\n    device.fence()\n    ' + SIG0)])
r2('fl', 'flag-wait-next-epoch', '20.3', 'bug', [(WAIT0, 'device.wait(F[0, blockIdx.x, threadIdx.x], value = epoch + 1)')])
r2('fl', 'flag-value-by-device', '20.3', 'bug', [(SIG0, 'device.signal(F[0, blockIdx.x, devid], dev = threadIdx.x, value = epoch + devid)'),
                                           (WAIT0, 'device.wait(F[0, blockIdx.x, threadIdx.x], value = epoch + threadIdx.x)')])
r2('fl', 'flag-no-sync-before', '20.3', 'bug', [('  cta.copy(W[e0 : +256], X[e0 : +256])\n  cta.sync()\n', '  cta.copy(W[e0 : +256], X[e0 : +256])\n')])
r2('fl', 'flag-no-sync-after', '20.3', 'bug', [('    ' + WAIT0 + '\n  }\n  cta.sync()\n', '    ' + WAIT0 + '\n  }\n')])
r2('fl', 'flag-fence-after-signal', '20.3', 'bug', [('    device.fence()\n    ' + SIG0, '    ' + SIG0 + '\n    device.fence()')])
r2('fl', 'flag-slot-by-block-y', '20.3', 'bug', [(SIG0, 'device.signal(F[0, 0, devid], dev = threadIdx.x, value = epoch)'), (WAIT0, 'device.wait(F[0, 0, threadIdx.x], value = epoch)')])
r2('fl', 'flag-end-barrier-dropped', '20.3', 'bug', [('  cta.sync()\n  if threadIdx.x < ndev {\n    device.fence()\n    device.signal(F[1', '  cta.sync()\n  if threadIdx.x < 0 {\n    device.fence()\n    device.signal(F[1')])
r2('fl', 'flag-threads-written-le', '20.3', 'clean', [('  if threadIdx.x < ndev {\n    device.fence()\n    ' + SIG0, '  if threadIdx.x <= ndev - 1 {\n    device.fence()\n    ' + SIG0)])

# ---- RMSNorm family ----------------------------------------------------------------------

FAMILIES['rf'] = dict(base=RF, want='dynamic')  # each row names its point (set) and sizes
r2('rf', 'rmsf-next-row-not-converted', 'v', 'bug', [('      if i + 1 < NR {\n        cta.cast(xv, xn)\n      }\n', '')], set='cta_t64_n2_h512', args='R=6,H=512,eps=0.001')
r2('rf', 'rmsf-next-row-loaded-late', 'v', 'clean', [('      if i + 1 < NR {\n        cta.copy(xn, X[row0 + i + 1, 0 : +8 * V * T])\n      }\n', ''),
    ('      if i + 1 < NR {\n        cta.cast(xv, xn)\n      }\n', '      if i + 1 < NR {\n        cta.copy(xn, X[row0 + i + 1, 0 : +8 * V * T])\n        cta.cast(xv, xn)\n      }\n')], set='cta_t64_n2_h512', args='R=6,H=512,eps=0.001')
r2('rf', 'rmsf-store-row0', 'v', 'bug', [('cta.copy(Y[row0 + i, 0 : +8 * V * T], xv)', 'cta.copy(Y[row0, 0 : +8 * V * T], xv)')], set='cta_t64_n2_h512', args='R=6,H=512,eps=0.001')
r2('rf', 'rmsf-warp-rows-overlap', 'v', 'bug', [('let row = blockIdx.x * RPC + warpid', 'let row = blockIdx.x + warpid')], set='warp_r4_h512', args='R=8,H=512,eps=0.001')
r2('rf', 'rmsf-eps-inside-mean', 'v', 'clean', [('let scale = rsqrt(total[0] / f32(H) + eps)', 'let scale = rsqrt((total[0] + eps * f32(H)) / f32(H))', 1)], set='cta_t128_h1024', args='R=3,H=1024,eps=0.001')
r2('rf', 'rmsf-warp-w-from-row', 'v', 'bug', [('warp.copy(wv, W[0 : +8 * V * 32])', 'warp.copy(wv, X[row, 0 : +8 * V * 32])')], set='warp_r2_h512', args='R=4,H=512,eps=0.001')
r2(R1, 'rms-mean-over-1024', 'h', 'bug', [('total[0] / f32(H)', 'total[0] / 1024.0')], 'dynamic', args='R=3,H=2048,eps=0.001')
r2(R1, 'rms-part-not-filled', 'h', 'bug', [('  cta.fill(part, 0.0)\n', '')], 'dynamic', args='R=3,H=2048,eps=0.001')
r2(R1, 'rms-sumsq-first-chunk-twice', 'h', 'bug', [('    cta.copy(xv, X[row, c * 1024 : +1024])\n    cta.cast(xf, xv)\n    cta.mul(sq', '    cta.copy(xv, X[row, 0 : +1024])\n    cta.cast(xf, xv)\n    cta.mul(sq')], 'dynamic', args='R=3,H=2048,eps=0.001')
r2(RO, 'rmso-h-const', 'v', 'clean', [('total[0] / f32(H)', 'total[0] / 4096.0', 0)], 'dynamic', kernel='rmsnorm_bf16_h4096', args='R=3,H=4096,eps=0.001')
r2(RO, 'rmso-eps-const', 'h', 'bug', [('rsqrt(total[0] / f32(H) + eps)', 'rsqrt(total[0] / f32(H) + 0.00001)', 0)], 'dynamic', kernel='rmsnorm_bf16_h4096', args='R=3,H=4096,eps=0.5')

# ---- cluster multicast (tests/lit/lower/Inputs/gemm-cluster-multicast.tile) ---------------
MC_SRC = open(os.path.join(_ROOT, 'tests/lit/lower/Inputs/gemm-cluster-multicast.tile')).read()
MCA = 'M=256,N=256,K=832'
MCR = 'M=256,N=256,K=832;M=200,N=136,K=512'

FAMILIES['mc'] = dict(base='gemm-cluster-multicast (tests/lit/lower/Inputs)', args=MCA, rsizes=MCR, src=MC_SRC)
r2('mc', 'mc-multicast-own-only', '1', 'bug', [('multicast = 3', 'multicast = select(r == 0, 1, 2)')])
r2('mc', 'mc-no-remote-release', '1', 'bug', [('        mbarrier.arrive(empty[(k + 5) % 6], cta = 1 - r)\n', ''), ('      mbarrier.arrive(empty[(kt + 5) % 6], cta = 1 - r)\n', '')])
r2('mc', 'mc-remote-release-to-self', '1', 'bug', [('cta = 1 - r', 'cta = r', 'all')])
r2('mc', 'mc-no-exit-sync', '1', 'bug', [('  }\n  cluster.sync()\n}', '  }\n}')])
r2('mc', 'mc-no-entry-sync', '1', 'bug', [('  cluster.sync()\n  if wgid == 0 {', '  if wgid == 0 {')])
r2('mc', 'mc-same-half', '1', 'bug', [('tma.load(As[s][r * 64 : +64, :], A[ma : +64', 'tma.load(As[s][0 : +64, :], A[ma : +64')])
r2('mc', 'mc-peer-by-mod', '1', 'clean', [('cta = 1 - r', 'cta = (r + 1) % 2', 'all')])
r2('mc', 'mc-mask-sum', '1', 'clean', [('multicast = 3', 'multicast = 1 + 2')])
r2('mc', 'mc-empty-count-3', '1e', 'bug', [('empty[6](count = 4)', 'empty[6](count = 3)')])
r2('mc', 'mc-tx-own-half-only', '1', 'bug', [('bytes = 24576', 'bytes = 16384')])

MUTANTS = M
