# Red-team mutants of kernels/*.tile. exp: 'bug' (must not pass) or 'clean' (must pass).
# A mutant is a list of edits (OLD, NEW[, OCCURRENCE]) of its base kernel (scripts/redteam/mutate.py
# applies them: without OCCURRENCE, OLD must occur once; 'all' or an index). Mutants that edit the
# same place are written as one table: the place once, then a row a mutant.
# tests/scripts/redteam_mutants_test.py pins the list (tests/scripts/redteam_mutants.golden.jsonl).
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
# Open (see report): check misses the TMA store stride of C.
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
MUTANTS = M
