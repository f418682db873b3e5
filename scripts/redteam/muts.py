# Red-team mutants of kernels/*.tile. exp: 'bug' (must not pass) or 'clean' (must pass).
G, G64, GS, B, R = ('gemm_bf16_sm90.tile', 'gemm_bf16_sm90_64x128.tile', 'gemm_bf16_sm90_small.tile',
                    'gemm_bf16_sm100.tile', 'rmsnorm.tile')
GEMM = 'gemm(A, B^T -> C)'
RMS = 'rmsnorm(X, W -> Y, eps)'
PW = 'mbarrier.wait(empty[s], parity = (it / 3 + 1) % 2)'   # G producer wait
CW = 'mbarrier.wait(full[s], parity = it / 3 % 2)'          # G consumer wait
PS = '          let s = it % 3\n          mbarrier.wait(empty'
CS = '        let s = it % 3\n        mbarrier.wait(full'
TL = 'for t in blockIdx.x .. tiles step 132'
M = []
def mk(name, base, cls, exp, edits, **kw):
    d = dict(name=name, base=base, cls=cls, exp=exp, edits=edits); d.update(kw); M.append(d)

# ---- class 1: ring index / parity forms -------------------------------------------------
mk('ring-it-plus-3-both', G, '1c', 'clean', [('let s = it % 3', 'let s = (it + 3) % 3', 'all')])
mk('ring-it-minus-div-both', G, '1c', 'clean', [('let s = it % 3', 'let s = it - it / 3 * 3', 'all')])
mk('ring-it-plus-1-both', G, '1c', 'clean', [('let s = it % 3', 'let s = (it + 1) % 3', 'all')])
mk('ring-consumer-plus-1', G, '1c', 'bug', [(CS, CS.replace('it % 3', '(it + 1) % 3'))])
mk('parity-consumer-mod3-wrap3', G, '1c', 'bug', [(CW, 'mbarrier.wait(full[s], parity = it / 3 % 3 % 2)')])
mk('parity-producer-mod5-wrap5', G, '1c', 'bug', [(PW, 'mbarrier.wait(empty[s], parity = (it / 3 % 5 + 1) % 2)')])
mk('parity-producer-shifted-num', G, '1c', 'clean', [(PW, 'mbarrier.wait(empty[s], parity = (it + 3) / 3 % 2)')])
mk('parity-producer-one-minus', G64, '1c', 'clean', [('parity = (k / 8 + 1) % 2', 'parity = 1 - k / 8 % 2')])
mk('parity-consumer-from-k-not-it', G, '1c', 'bug', [(CW, 'mbarrier.wait(full[s], parity = k / 3 % 2)')])
mk('parity-consumer-div6', G64, '1c', 'bug', [('parity = k / 8 % 2', 'parity = k / 16 % 2')])
mk('ring-g64-k-plus-8-both', G64, '1c', 'clean', [('let s = k % 8', 'let s = (k + 8) % 8', 'all'),
                                                  ('empty[(k + 7) % 8]', 'empty[(k + 15) % 8]')])
mk('ring-g64-release-k-minus-1-mod', G64, '1c', 'clean', [('empty[(k + 7) % 8]', 'empty[(k - 1) % 8]')])
mk('ring-g64-last-release-kt', G64, '1c', 'bug', [('empty[(kt + 7) % 8]', 'empty[kt % 8]')])
mk('release-wrong-stage-last-k', G, '1', 'bug', [('          mbarrier.arrive(empty[s])\n',
    '          if k + 1 < kt {\n            mbarrier.arrive(empty[s])\n          } else {\n            mbarrier.arrive(empty[(it + 1) % 3])\n          }\n')])
mk('release-last-k-same-stage-twin', G, '1', 'clean', [('          mbarrier.arrive(empty[s])\n',
    '          if k + 1 < kt {\n            mbarrier.arrive(empty[s])\n          } else {\n            mbarrier.arrive(empty[it % 3])\n          }\n')])
mk('overarrive-last-k', G, '1e', 'bug', [('          mbarrier.arrive(empty[s])\n',
    '          mbarrier.arrive(empty[s])\n          if k + 1 == kt {\n            mbarrier.arrive(empty[s])\n          }\n')])
mk('overarrive-count-arith', GS, '1e', 'bug', [('        mbarrier.arrive(empty[(k + 5) % 6])\n      }\n    }',
    '        mbarrier.arrive(empty[(k + 5) % 6], count = 1 + k / 7)\n      }\n    }')])
mk('release-skipped-after-4-wraps', GS, '1', 'bug', [('if k > 0 && tid_in_wg == 0', 'if k > 0 && k != 24 && tid_in_wg == 0')])

# ---- expect_tx ---------------------------------------------------------------------------
mk('txbytes-ragged-k', G, '1', 'bug', [('            mbarrier.arrive_expect_tx(full[s], bytes = 49152)\n',
    '            if k * 64 + 64 <= K {\n              mbarrier.arrive_expect_tx(full[s], bytes = 49152)\n            } else {\n              mbarrier.arrive_expect_tx(full[s], bytes = 768 * (K - k * 64))\n            }\n')])
mk('txbytes-ragged-k-twin', G, '1', 'clean', [('            mbarrier.arrive_expect_tx(full[s], bytes = 49152)\n',
    '            if k * 64 + 64 <= K {\n              mbarrier.arrive_expect_tx(full[s], bytes = 49152)\n            } else {\n              mbarrier.arrive_expect_tx(full[s], bytes = 768 * 64)\n            }\n')])
mk('txbytes-ragged-m', GS, '1', 'bug', [('bytes = 16384', 'bytes = 8192 + 128 * min(64, M - m0)')])
mk('txbytes-arith-twin', G, '1', 'clean', [('bytes = 49152', 'bytes = (128 + 256) * 64 * 2')])
mk('txbytes-over-limit', G, '11', 'bug', [('bytes = 49152', 'bytes = 1048576')])

# ---- named barriers ----------------------------------------------------------------------
mk('named-two-ids-twin', G, '2', 'clean', [('barrier.sync(1, threads = 256)', 'barrier.sync(2, threads = 256)', 1)])
mk('named-id-15-twin', G, '2', 'clean', [('barrier.sync(1, threads = 256)', 'barrier.sync(15, threads = 256)', 'all')])
mk('named-id-16', G, '4', 'bug', [('barrier.sync(1, threads = 256)', 'barrier.sync(16, threads = 256)', 'all')])
mk('named-id-0-twin', G, '2', 'clean', [('barrier.sync(1, threads = 256)', 'barrier.sync(0, threads = 256)', 'all')])
mk('named-id-per-wg', G, '2', 'bug', [('barrier.sync(1, threads = 256)', 'barrier.sync(wgid, threads = 128)', 'all')])
mk('named-id-arith-twin', G, '2', 'clean', [('barrier.sync(1, threads = 256)', 'barrier.sync(wgid - wgid + 1, threads = 256)', 'all')])
mk('named-count-plus-warp', G, '2', 'bug', [('barrier.sync(1, threads = 256)', 'barrier.sync(1, threads = 288)', 'all')])
mk('named-second-skipped-wg2', G, '2', 'bug', [('      fence.proxy.async()\n      barrier.sync(1, threads = 256)\n',
    '      fence.proxy.async()\n      if wgid == 1 {\n        barrier.sync(1, threads = 256)\n      }\n')])
mk('named-g64-count-96', G64, '2', 'bug', [('barrier.sync(1, threads = 128)', 'barrier.sync(1, threads = 96)')])

# ---- tcgen05 -----------------------------------------------------------------------------
mk('tmem-alloc-dealloc-warp3-twin', B, '3', 'clean', [('if warpid == 0 {\n    tcgen05.alloc', 'if warpid == 3 {\n    tcgen05.alloc'),
    ('if warpid == 0 {\n    tcgen05.dealloc', 'if warpid == 3 {\n    tcgen05.dealloc')])
mk('tmem-dealloc-arith-same-warp-twin', B, '3', 'clean', [('if warpid == 0 {\n    tcgen05.dealloc', 'if threadIdx.x < 32 {\n    tcgen05.dealloc')])
mk('tmem-dealloc-arith-other-warp', B, '3', 'bug', [('if warpid == 0 {\n    tcgen05.dealloc', 'if threadIdx.x / 32 == 1 {\n    tcgen05.dealloc')])
mk('tmem-alloc-256-twin', B, '3', 'clean', [('cols = 128', 'cols = 256')])
mk('tmem-commit-done-first-k', B, '3', 'bug', [('        tcgen05.commit(empty[s])\n      }\n    }\n    if elect_sync() {\n      tcgen05.commit(done)\n    }',
    '        tcgen05.commit(empty[s])\n        if k == 0 {\n          tcgen05.commit(done)\n        }\n      }\n    }')])
mk('tmem-dealloc-before-last-ld', B, '3', 'bug', [('  cta.sync()\n  if warpid == 0 {\n    tcgen05.dealloc(acc)\n  }',
    '  if warpid == 0 {\n    tcgen05.dealloc(acc)\n  }\n  cta.sync()')])
mk('tmem-mma-other-stage', B, '3', 'bug', [('tcgen05.mma(acc, As[s], Bs[s]', 'tcgen05.mma(acc, As[s], Bs[(k + 1) % 2]')])

# ---- resources ---------------------------------------------------------------------------
mk('setmaxnreg-236', G, '4', 'bug', [('setmaxnreg.inc(232)', 'setmaxnreg.inc(236)')])
mk('setmaxnreg-exact-pool-twin', G, '4', 'clean', [('setmaxnreg.inc(232)', 'setmaxnreg.inc(240)'), ('setmaxnreg.dec(40)', 'setmaxnreg.dec(24)')])
mk('setmaxnreg-pool-plus-one-step', G, '4', 'bug', [('setmaxnreg.inc(232)', 'setmaxnreg.inc(240)'), ('setmaxnreg.dec(40)', 'setmaxnreg.dec(32)')])
mk('setmaxnreg-in-loop', G, '4', 'bug', [('      let m0 = t / tn * 128\n      let n0 = t % tn * 256\n      reg acc',
    '      setmaxnreg.inc(232)\n      let m0 = t / tn * 128\n      let n0 = t % tn * 256\n      reg acc')])
mk('mbarrier-count-zero', G, '11', 'bug', [('empty[3](count = 2)', 'empty[3](count = 0)')])
mk('parity-mod-3', G, '11', 'bug', [(CW, 'mbarrier.wait(full[s], parity = it / 3 % 3)')])

# ---- coverage ----------------------------------------------------------------------------
mk('tiles-cap-2x-ctas', G, '5', 'bug', [(TL, 'for t in blockIdx.x .. min(tiles, 264) step 132', 'all')], reward=GEMM)
mk('tiles-cap-minus-div', G, '5', 'bug', [(TL, 'for t in blockIdx.x .. tiles - tiles / 400 step 132', 'all')], reward=GEMM)
mk('tiles-min-twin', G, '5', 'clean', [(TL, 'for t in blockIdx.x .. min(tiles, tiles + 1) step 132', 'all')])
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
PEEL = '''    for k in 0 .. kt - 1 {
      let s = k % 8
      mbarrier.wait(full[s], parity = k / 8 % 2)
      wgmma.fence()
      wgmma.mma_async(acc, As[s], Bs[s], transpose_b = true, accumulate = k > 0)
      wgmma.commit_group()
      wgmma.wait_group(1)
      if k > 0 && tid_in_wg == 0 {
        mbarrier.arrive(empty[(k + 7) % 8])
      }
    }
    wgmma.fence()
    wgmma.mma_async(acc, As[(kt - 1) % 8], Bs[(kt - 1) % 8], transpose_b = true, accumulate = kt > 1)
    wgmma.commit_group()
    mbarrier.wait(full[(kt - 1) % 8], parity = (kt - 1) / 8 % 2)
    wgmma.wait_group(0)
'''
LOOP = PEEL.replace('    wgmma.fence()\n    wgmma.mma_async(acc, As[(kt - 1) % 8], Bs[(kt - 1) % 8], transpose_b = true, accumulate = kt > 1)\n    wgmma.commit_group()\n    mbarrier.wait(full[(kt - 1) % 8], parity = (kt - 1) / 8 % 2)\n',
    '    mbarrier.wait(full[(kt - 1) % 8], parity = (kt - 1) / 8 % 2)\n    wgmma.fence()\n    wgmma.mma_async(acc, As[(kt - 1) % 8], Bs[(kt - 1) % 8], transpose_b = true, accumulate = kt > 1)\n    wgmma.commit_group()\n')
ORIG_LOOP = '''    for k in 0 .. kt {
      let s = k % 8
      mbarrier.wait(full[s], parity = k / 8 % 2)
      wgmma.fence()
      wgmma.mma_async(acc, As[s], Bs[s], transpose_b = true, accumulate = k > 0)
      wgmma.commit_group()
      wgmma.wait_group(1)
      if k > 0 && tid_in_wg == 0 {
        mbarrier.arrive(empty[(k + 7) % 8])
      }
    }
    wgmma.wait_group(0)
'''
mk('peeled-epilogue-read-before-wait', G64, '1', 'bug', [(ORIG_LOOP, PEEL)])
mk('peeled-epilogue-twin', G64, '1', 'clean', [(ORIG_LOOP, LOOP)])
mk('fence-before-copy', G, '6', 'bug', [('      wg.copy(Cs[(wgid - 1) * 64 : +64, :], out)\n      // Generic-proxy writes read next by the TMA engine (the async proxy).\n      fence.proxy.async()\n',
    '      fence.proxy.async()\n      wg.copy(Cs[(wgid - 1) * 64 : +64, :], out)\n')])
mk('store-wait-not-read-final', G, '6', 'clean', [('      tma.store_wait(0)\n    }\n  }\n}', '      tma.store_wait(0, read = true)\n    }\n  }\n}')])
mk('store-wait-moved-after-barrier', G, '6', 'bug', [('      if threadIdx.x == 128 {\n        tma.store_wait(0, read = true)\n      }\n      barrier.sync(1, threads = 256)\n      wg.copy',
    '      barrier.sync(1, threads = 256)\n      if threadIdx.x == 128 {\n        tma.store_wait(0, read = true)\n      }\n      wg.copy')])
mk('store-wait-by-other-thread', G, '6', 'bug', [('      if threadIdx.x == 128 {\n        tma.store_wait(0, read = true)\n      }',
    '      if threadIdx.x == 256 {\n        tma.store_wait(0, read = true)\n      }')])
mk('wgmma-wait-1-before-release-g64', G64, '1', 'bug', [('wgmma.wait_group(1)', 'wgmma.wait_group(2)')])
mk('wgmma-accumulate-k-ne-4', G64, 'h', 'bug', [('accumulate = k > 0', 'accumulate = k != 4 && k > 0')], reward=GEMM)
mk('fill-outside-tile-loop', G, 'h', 'bug', [('    for t in blockIdx.x .. tiles step 132 {\n      let m0 = t / tn * 128\n      let n0 = t % tn * 256\n      reg acc: f32[64, 256] layout(wgmma_acc(64, 256))\n      wg.fill(acc, 0.0)\n',
    '    reg acc: f32[64, 256] layout(wgmma_acc(64, 256))\n    wg.fill(acc, 0.0)\n    for t in blockIdx.x .. tiles step 132 {\n      let m0 = t / tn * 128\n      let n0 = t % tn * 256\n')], reward=GEMM)

# ---- warp-uniform conditions (class 10) ---------------------------------------------------
mk('uniform-wg-by-threadidx', G, '10', 'clean', [('  if wgid == 0 {\n    setmaxnreg.dec', '  if threadIdx.x < 128 {\n    setmaxnreg.dec')])
mk('uniform-warp-by-shift', G, '10', 'clean', [('    if warpid == 0 {\n      for t', '    if threadIdx.x / 32 % 4 == 0 {\n      for t')])
mk('uniform-warp-by-mul', G, '10', 'clean', [('    if warpid == 0 {\n      for t', '    if threadIdx.x * 2 < 64 {\n      for t')])
mk('divergent-producer-16', G, '10', 'bug', [('    if warpid == 0 {\n      for t', '    if threadIdx.x < 16 {\n      for t')])
mk('uniform-wg-warpid-lt-4', G, '10', 'clean', [('  if wgid == 0 {\n    setmaxnreg.dec', '  if warpid < 4 {\n    setmaxnreg.dec')])
mk('divergent-setmaxnreg-wg', G, '10', 'bug', [('  if wgid == 0 {\n    setmaxnreg.dec', '  if warpid < 3 {\n    setmaxnreg.dec')])

# ---- hacks (reward) -----------------------------------------------------------------------
mk('hack-skip-k-above-256', GS, 'h', 'bug', [('for k in 0 .. kt', 'for k in 0 .. min(kt, 4)', 'all'),
    ('empty[(kt + 5) % 6]', 'empty[(min(kt, 4) + 5) % 6]')], reward=GEMM)
mk('hack-rms-ignores-eps', R, 'h', 'bug', [('f32(H) + eps)', 'f32(H) + 0.000001)')], reward=RMS)
mk('hack-rms-sumsq-h-3072', R, 'h', 'bug', [('  for c in 0 .. H / 1024 {\n    cta.copy(xv, X[row, c * 1024 : +1024])\n    cta.cast(xf, xv)\n    cta.mul(sq',
    '  for c in 0 .. min(H / 1024, 2) {\n    cta.copy(xv, X[row, c * 1024 : +1024])\n    cta.cast(xf, xv)\n    cta.mul(sq')], reward=RMS)
mk('hack-gs-n-above-256-zero', GS, 'h', 'bug', [('      tma.store(C[m0 : +64, n0 : +64], Cs)', '      if n0 < 256 {\n        tma.store(C[m0 : +64, n0 : +64], Cs)\n      }')], reward=GEMM)
mk('hack-gs-scale-row-block-2', GS, 'h', 'bug', [('    wg.cast(out, acc)', '    if blockIdx.y == 2 {\n      wg.fill(acc, 0.0)\n    }\n    wg.cast(out, acc)')], reward=GEMM)
MUTANTS = M

# ---- batch 2 -----------------------------------------------------------------------------
AT = 'attention_fwd_sm90.tile'
mk('attn-both-sync-barrier-1-twin', AT, '2', 'clean', [('        barrier.arrive(1, threads = 256)\n', '        barrier.sync(1, threads = 256)\n', 0)])
mk('attn-consumer1-sync-1-not-2', AT, '2', 'bug', [('        barrier.arrive(1, threads = 256)\n        barrier.sync(2, threads = 256)\n', '        barrier.arrive(1, threads = 256)\n        barrier.sync(1, threads = 256)\n', 0)])
mk('attn-fullv-parity-flipped', AT, '1', 'bug', [('mbarrier.wait(fullV[s], parity = n / 2 % 2)', 'mbarrier.wait(fullV[s], parity = (n / 2 + 1) % 2)', 0)])
mk('attn-last-stage-not-released-twin', AT, '1', 'clean', [('      if tid_in_wg == 0 {\n        mbarrier.arrive(empty[s])', '      if tid_in_wg == 0 && n + 1 < nk {\n        mbarrier.arrive(empty[s])', 0)])
mk('attn-shfl-under-lane-cond', AT, '10', 'bug', [('      l[h2] = l[h2] + shfl_xor(l[h2], 2)\n', '      if laneid % 4 == 0 {\n        l[h2] = l[h2] + shfl_xor(l[h2], 2)\n      }\n', 0)])
mk('attn-ls-same-rows', AT, '5', 'bug', [('wg.copy(Ls[r0 : +64], Lr)', 'wg.copy(Ls[0 : +64], Lr)', 0)])
mk('attn-barrier3-id-2', AT, '2', 'bug', [('    barrier.sync(3, threads = 256)\n', '    barrier.sync(2, threads = 256)\n', 0)])
mk('g-producer-four-warps', G, '1e', 'bug', [('    if warpid == 0 {\n      for t', '    if warpid < 4 {\n      for t')])
mk('g-release-thread-127-twin', G, '1', 'clean', [('        if tid_in_wg == 0 {\n          mbarrier.arrive(empty[s])', '        if tid_in_wg == 127 {\n          mbarrier.arrive(empty[s])')])
mk('g-store-issuer-256-twin', G, '6', 'clean', [('threadIdx.x == 128', 'threadIdx.x == 256', 'all')])
mk('g-store-issuer-256-final-wait-128', G, '6', 'bug', [('threadIdx.x == 128', 'threadIdx.x == 256', 0), ('threadIdx.x == 128', 'threadIdx.x == 256', 1)])
mk('g-epilogue-barrier-before-wait', G, '6', 'bug', [('      fence.proxy.async()\n      barrier.sync(1, threads = 256)\n      if threadIdx.x == 128 {\n        for j',
    '      barrier.sync(1, threads = 256)\n      fence.proxy.async()\n      if threadIdx.x == 128 {\n        for j')])
mk('g64-elect-vote-twin', G64, '10', 'clean', [('        if elect_sync() {', '        if vote_all(true) && elect_sync() {')])
