# Second red-team pass (attention, FP8 and block-scaled FP8, sm100 GEMM, device scale, RMSNorm
# family, cluster multicast). Each mutant runs through check, race --static, sim and reward
# (scripts/redteam/stages.py). want: 'static' (a synchronisation or memory bug that check must
# not prove) or 'dynamic' (a wrong value or a hack that sim / the reward must fail).
import os
import re

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


M2 = []


def mk(name, base, cls, exp, edits, want='static', kernel=None, args=None, rsizes=None, **kw):
    d = dict(name='r2-' + name, base=base, cls=cls, exp=exp, edits=edits, want=want, kernel=kernel,
             args=args, rsizes=rsizes)
    d.update(kw)
    d['problem'] = d.get('problem') or _problem(_text(base, d.get('src')), kernel)
    M2.append(d)


def at(name, cls, exp, edits, want='static', kernel='attention_fwd_sm90', **kw):
    kw.setdefault('args', ATT)
    kw.setdefault('rsizes', ATT_R)
    mk(name, AT, cls, exp, edits, want, kernel, **kw)


# ---- attention_fwd_sm90: rings, ping-pong, online softmax, causal ------------------------
REL = '''      mbarrier.wait(fullV[s], parity = n / 2 % 2)
      wg.gemm(Oacc, P, Vs[s], accumulate = true)
      if tid_in_wg == 0 {
        mbarrier.arrive(empty[s])
      }
'''
at('at-qfull-parity-1', '1', 'bug', [('mbarrier.wait(qfull[0], parity = 0)', 'mbarrier.wait(qfull[0], parity = 1)', 0)])
at('at-empty-count-1', '1e', 'bug', [('empty[2](count = 2)', 'empty[2](count = 1)', 0)])
at('at-release-before-pv', '1', 'bug', [(REL, '''      if tid_in_wg == 0 {
        mbarrier.arrive(empty[s])
      }
      mbarrier.wait(fullV[s], parity = n / 2 % 2)
      wg.gemm(Oacc, P, Vs[s], accumulate = true)
''', 0)])
at('at-release-every-warp', '1e', 'bug', [('      if tid_in_wg == 0 {\n        mbarrier.arrive(empty[s])', '      if laneid == 0 {\n        mbarrier.arrive(empty[s])', 0)])
at('at-barrier3-count-128', '2', 'bug', [('barrier.sync(3, threads = 256)', 'barrier.sync(3, threads = 128)', 0)])
at('at-store-fence-dropped', '6', 'bug', [('    fence.proxy.async()\n    barrier.sync(3, threads = 256)', '    barrier.sync(3, threads = 256)', 0)])
at('at-fence-after-barrier3', '6', 'bug', [('    fence.proxy.async()\n    barrier.sync(3, threads = 256)', '    barrier.sync(3, threads = 256)\n    fence.proxy.async()', 0)])
at('at-no-final-store-wait', '6', 'bug', [('      tma.store_commit()\n      tma.store_wait(0)\n', '      tma.store_commit()\n', 0)])
at('at-pingpong-arrive-id-2', '2', 'bug', [('barrier.arrive(1, threads = 256)', 'barrier.arrive(2, threads = 256)', 0)])
at('at-s-gemm-next-stage', '1', 'bug', [('wg.gemm(Sacc, Qs[r0 : +64, :], Ks[s],', 'wg.gemm(Sacc, Qs[r0 : +64, :], Ks[(n + 1) % 2],', 0)])
at('at-pingpong-roles-swapped', '2', 'clean', [('if w == 0 {', 'if w == 1 {', 0), ('if w == 0 {', 'if w == 1 {', 0)])
at('at-named-ids-renumbered', '2', 'clean', [('barrier.sync(1, threads = 256)', 'barrier.sync(4, threads = 256)', 0),
                                          ('barrier.arrive(1, threads = 256)', 'barrier.arrive(4, threads = 256)', 0),
                                          ('barrier.sync(2, threads = 256)', 'barrier.sync(5, threads = 256)', 0),
                                          ('barrier.sync(2, threads = 256)', 'barrier.sync(5, threads = 256)', 0)])
at('at-mask-p-le-s', 'v', 'bug', [('let p = select(kv0 + col < S,', 'let p = select(kv0 + col <= S,', 0)], 'dynamic',
   args='B=1,H=1,S=264,sm_scale=0.088', rsizes='B=1,H=1,S=264')
at('at-mask-p-past-block', 'v', 'bug', [('let p = select(kv0 + col < S,', 'let p = select(kv0 + col < S + 8,', 0)], 'dynamic')
at('at-max-unmasked', 'v', 'clean', [('mn[h2] = max(mn[h2], select(kv0 + col < S, Sacc[row, col], -3.0e38))', 'mn[h2] = max(mn[h2], Sacc[row, col])', 0)], 'dynamic')
at('at-l-not-rescaled', 'v', 'bug', [('        l[h2] = l[h2] * alpha[h2]\n', '', 0)], 'dynamic')
at('at-row-max-one-shuffle', 'v', 'bug', [('        mn[h2] = max(mn[h2], shfl_xor(mn[h2], 2))\n', '', 0)], 'dynamic')
at('at-lse-base2-scale', 'v', 'bug', [('Lr[row] = fma(m[h2], sm_scale, log(l[h2]))', 'Lr[row] = fma(m[h2], sl2, log(l[h2]))', 0)], 'dynamic')
at('at-o-rescale-after-pv', 'v', 'bug', [('          Oacc[row, col] = Oacc[row, col] * alpha[h2]\n', '', 0),
    ('      wg.gemm(Oacc, P, Vs[s], accumulate = true)\n', '      wg.gemm(Oacc, P, Vs[s], accumulate = true)\n      for h2 in 0 .. 2 unroll {\n        let row = wid_in_wg * 16 + h2 * 8 + laneid / 4\n        for j in 0 .. 32 unroll {\n          let col = j / 2 * 8 + laneid % 4 * 2 + j % 2\n          Oacc[row, col] = Oacc[row, col] * alpha[h2]\n        }\n      }\n', 0)], 'dynamic')
CK = 'attention_fwd_causal_sm90'
at('atc-skip-diagonal', 'v', 'bug', [('let nk = blockIdx.x + 1', 'let nk = blockIdx.x', 0)], 'dynamic', kernel=CK)
at('atc-mask-strict', 'v', 'bug', [('kv0 + col <= q0 + r0 + row', 'kv0 + col < q0 + r0 + row', 0),
                                   ('kv0 + col <= q0 + r0 + row', 'kv0 + col < q0 + r0 + row', 0)], 'dynamic', kernel=CK)
at('atc-mask-wrong-side', 'v', 'bug', [('kv0 + col <= q0 + r0 + row', 'q0 + r0 + row <= kv0 + col', 0),
                                       ('kv0 + col <= q0 + r0 + row', 'q0 + r0 + row <= kv0 + col', 0)], 'dynamic', kernel=CK)
at('atc-mask-no-r0', 'v', 'bug', [('kv0 + col <= q0 + r0 + row', 'kv0 + col <= q0 + row', 0),
                                  ('kv0 + col <= q0 + r0 + row', 'kv0 + col <= q0 + row', 0)], 'dynamic', kernel=CK)
at('atc-producer-all-blocks', '1', 'bug', [('      for n in 0 .. nk {\n        let s = n % 2\n        mbarrier.wait(empty[s]',
    '      for n in 0 .. (S + 127) / 128 {\n        let s = n % 2\n        mbarrier.wait(empty[s]', 1)], kernel=CK)
at('atc-consumer-one-block-more', '1', 'bug', [('    for n in 0 .. nk {\n      let s = n % 2\n      let kv0', '    for n in 0 .. nk + 1 {\n      let s = n % 2\n      let kv0', 1)], kernel=CK)
at('atd64-rescale-half-columns', 'v', 'bug', [('        for j in 0 .. 16 unroll {\n          let col = j / 2 * 8 + laneid % 4 * 2 + j % 2\n          Oacc[row, col] = Oacc[row, col] * alpha[h2]',
    '        for j in 0 .. 8 unroll {\n          let col = j / 2 * 8 + laneid % 4 * 2 + j % 2\n          Oacc[row, col] = Oacc[row, col] * alpha[h2]', 0)], 'dynamic', kernel='attention_fwd_d64_sm90')

# ---- attention_fwd_overlap_sm90: two wgmma groups in flight, register-A P ------------------


def ao(name, cls, exp, edits, want='static', kernel='attention_fwd_overlap_sm90', **kw):
    mk(name, AO, cls, exp, edits, want, kernel, ATT, ATT_R, **kw)


P_CONV = '''      for h2 in 0 .. 2 unroll {
        let row = wid_in_wg * 16 + h2 * 8 + laneid / 4
        for j in 0 .. 32 unroll {
          let col = j / 2 * 8 + laneid % 4 * 2 + j % 2
          P[row, col] = bf16(Sacc[row, col])
          Oacc[row, col] = Oacc[row, col] * alpha[h2]
        }
      }
'''
ao('ao-softmax-before-wait', '1', 'bug', [('      wgmma.wait_group(1)\n', '', 0)])
ao('ao-emptyv-count-1', '1e', 'bug', [('emptyV[2](count = 2)', 'emptyV[2](count = 1)', 0)])
ao('ao-p-written-in-flight', '1', 'bug', [('      wgmma.wait_group(0)\n', '''      for h2 in 0 .. 2 unroll {
        let row = wid_in_wg * 16 + h2 * 8 + laneid / 4
        for j in 0 .. 32 unroll {
          let col = j / 2 * 8 + laneid % 4 * 2 + j % 2
          P[row, col] = bf16(Sacc[row, col])
        }
      }
      wgmma.wait_group(0)
''', 0), ('          P[row, col] = bf16(Sacc[row, col])\n          Oacc[row, col] = Oacc[row, col] * alpha[h2]', '          Oacc[row, col] = Oacc[row, col] * alpha[h2]', 0)])
ao('ao-v-current-block', 'v', 'bug', [('max(n - 1, 0) * 128', 'min(n, nk - 1) * 128', 0), ('max(n - 1, 0) * 128', 'min(n, nk - 1) * 128', 0)], 'dynamic')
ao('ao-unmasked-when-inside', 'v', 'bug', [('if kv0 + 128 <= S {', 'if kv0 < S {', 0)], 'dynamic')
ao('ao-pingpong-arrive-before-issue', '2', 'clean', [
    ('      if w == 1 {\n        barrier.sync(2, threads = 256)\n      }\n      wgmma.fence()', '      if w == 1 {\n        barrier.sync(2, threads = 256)\n        barrier.arrive(1, threads = 256)\n      }\n      wgmma.fence()', 0),
    ('      if w == 0 {\n        barrier.sync(2, threads = 256)\n      } else {\n        barrier.arrive(1, threads = 256)\n      }\n', '      if w == 0 {\n        barrier.sync(2, threads = 256)\n      }\n', 0)])
OC = 'attention_fwd_overlap_causal_sm90'
ao('aoc-noop-softmax-runs', 'v', 'clean', [('      } else if n < nk {\n', '      } else {\n', 0)], 'dynamic', kernel=OC)
ao('aoc-rescale-in-noop', 'v', 'bug', [('      if n < nk {\n        for h2 in 0 .. 2 unroll {\n          let row = wid_in_wg * 16 + h2 * 8 + laneid / 4\n          for j in 0 .. 32 unroll {\n            let col = j / 2 * 8 + laneid % 4 * 2 + j % 2\n            P[row, col]',
    '      if n <= nk {\n        for h2 in 0 .. 2 unroll {\n          let row = wid_in_wg * 16 + h2 * 8 + laneid / 4\n          for j in 0 .. 32 unroll {\n            let col = j / 2 * 8 + laneid % 4 * 2 + j % 2\n            P[row, col]', 0)], 'dynamic', kernel=OC)
ao('aoc-diagonal-unmasked', 'v', 'bug', [('      if n + 1 < nk {\n', '      if n < nk {\n', 0)], 'dynamic', kernel=OC)

# ---- attention_fwd_sm100: tcgen05, tensor memory, four rings -------------------------------


def a1(name, cls, exp, edits, want='static', **kw):
    mk(name, A100, cls, exp, edits, want, 'attention_fwd_sm100', ATT, ATT_R, **kw)


a1('a100-pv-alloc-64', '3', 'bug', [('tcgen05.alloc(PVacc, cols = 128)', 'tcgen05.alloc(PVacc, cols = 64)')])
a1('a100-pv-never-freed', '3', 'bug', [('    tcgen05.dealloc(PVacc)\n', '')])
a1('a100-relinquish-between-allocs', '3', 'bug', [('    tcgen05.alloc(Sacc, cols = 128)\n', '    tcgen05.alloc(Sacc, cols = 128)\n    tcgen05.relinquish_alloc_permit()\n')])
a1('a100-relinquish-after-allocs', '3', 'clean', [('    tcgen05.alloc(PVacc, cols = 128)\n', '    tcgen05.alloc(PVacc, cols = 128)\n    tcgen05.relinquish_alloc_permit()\n')])
a1('a100-pfull-count-96', '1e', 'bug', [('pfull[1](count = 128)', 'pfull[1](count = 96)')])
a1('a100-oempty-parity-off', '1', 'bug', [('mbarrier.wait(oempty[0], parity = (n + 1) % 2)', 'mbarrier.wait(oempty[0], parity = n % 2)')])
a1('a100-sfull-commit-first', '3', 'bug', [('''          tcgen05.mma(Sacc, Qs[:, 0 : +64], Ks[s][:, 0 : +64], accumulate = false)
          tcgen05.mma(Sacc, Qs[:, 64 : +64], Ks[s][:, 64 : +64], accumulate = true)
          tcgen05.commit(sfull[0])
''', '''          tcgen05.commit(sfull[0])
          tcgen05.mma(Sacc, Qs[:, 0 : +64], Ks[s][:, 0 : +64], accumulate = false)
          tcgen05.mma(Sacc, Qs[:, 64 : +64], Ks[s][:, 64 : +64], accumulate = true)
''')])
a1('a100-ld-no-wait', '3', 'bug', [('        tcgen05.wait_ld()\n        for j in 0 .. 16 unroll {\n          mn[0] = max(mn[0], select(kv0 + 0 + j < S', '        for j in 0 .. 16 unroll {\n          mn[0] = max(mn[0], select(kv0 + 0 + j < S')])
a1('a100-mask-last-chunk-offset', 'v', 'bug', [('let p = select(kv0 + 112 + j < S,', 'let p = select(kv0 + j < S,')], 'dynamic')
a1('a100-alpha-no-empty-wait', '1', 'bug', [('        mbarrier.wait(aempty[0], parity = (n + 1) % 2)\n', '')])
a1('a100-alpha-released-before-read', '1', 'bug', [('        ar[0] = As[0, crow]\n        mbarrier.arrive(aempty[0])\n', '        mbarrier.arrive(aempty[0])\n        ar[0] = As[0, crow]\n')])
a1('a100-pv-into-sacc', '3', 'bug', [('tcgen05.mma(PVacc, Ps[:, 0 : +64]', 'tcgen05.mma(Sacc, Ps[:, 0 : +64]')])
a1('a100-o-read-no-ofull-wait', '1', 'bug', [('        mbarrier.wait(ofull[0], parity = n % 2)\n', '')])
a1('a100-epilogue-barrier-128', '2', 'bug', [('      barrier.sync(1, threads = 256)\n      ar[0] = Ys[0, crow]', '      barrier.sync(1, threads = 128)\n      ar[0] = Ys[0, crow]')])
a1('a100-no-done-wait-mma-warp-idle', '3', 'clean', [('  mbarrier.wait(done[0], parity = 0)\n  tcgen05.fence_before_thread_sync()\n  cta.sync()',
    '  if warpid == 8 {\n    mbarrier.wait(done[0], parity = 0)\n  }\n  tcgen05.fence_before_thread_sync()\n  cta.sync()')])

# ---- gemm_fp8_sm90 -----------------------------------------------------------------------
F8A = 'M=136,N=264,K=400,scale=0.37'
F8R = 'M=136,N=264,K=400;M=64,N=512,K=256'


def f8(name, cls, exp, edits, want='static', **kw):
    kw.setdefault('args', F8A)
    kw.setdefault('rsizes', F8R)
    mk(name, F8, cls, exp, edits, want, None, **kw)


f8('f8-two-stages-parity-three', '1c', 'bug', [('f8e4m3[3, 128, 128] layout(swizzle(128B, f8e4m3, S[(3, 128, 128)', 'f8e4m3[2, 128, 128] layout(swizzle(128B, f8e4m3, S[(2, 128, 128)'),
    ('f8e4m3[3, 256, 128] layout(swizzle(128B, f8e4m3, S[(3, 256, 128)', 'f8e4m3[2, 256, 128] layout(swizzle(128B, f8e4m3, S[(2, 256, 128)'),
    ('full[3](count = 1), empty[3](count = 2)', 'full[2](count = 1), empty[2](count = 2)'), ('let s = it % 3', 'let s = it % 2', 'all')])
f8('f8-scale-dropped', 'v', 'bug', [('      wg.mul(acc, acc, scale)\n', '')], 'dynamic')
f8('f8-scale-each-k', 'v', 'bug', [('      wg.mul(acc, acc, scale)\n', ''),
    ('        wg.gemm(acc, As[s][(wgid - 1) * 64 : +64, :], Bs[s], transpose_b = true)\n', '        wg.gemm(acc, As[s][(wgid - 1) * 64 : +64, :], Bs[s], transpose_b = true)\n        wg.mul(acc, acc, scale)\n')], 'dynamic')
f8('f8-tx-bytes-one-operand', '1', 'bug', [('bytes = 49152', 'bytes = 32768')])
f8('f8-k-tail-dropped', 'v', 'bug', [('let kt = (K + 127) / 128', 'let kt = K / 128')], 'dynamic')
f8('f8-scale-before-cast-as-bf16', 'v', 'clean', [('      wg.mul(acc, acc, scale)\n      reg out: bf16[64, 256] layout(wgmma_acc(64, 256))\n      wg.cast(out, acc)\n',
    '      reg out: bf16[64, 256] layout(wgmma_acc(64, 256))\n      wg.mul(acc, acc, scale)\n      wg.cast(out, acc)\n')], 'dynamic')

# ---- gemm_fp8_blockscaled_sm90: scales, promotion ----------------------------------------
BSA = 'M=132,N=264,K=640,KB=5,NB=3'
BSR = 'M=132,N=264,K=640,KB=5,NB=3;M=64,N=128,K=1408,KB=11,NB=1'


def bs(name, cls, exp, edits, want='static', **kw):
    kw.setdefault('args', BSA)
    kw.setdefault('rsizes', BSR)
    mk(name, BS, cls, exp, edits, want, None, **kw)


NB_SYNC = '''        if wgid == 1 {
          barrier.sync(2, threads = 128)
        } else {
          barrier.sync(3, threads = 128)
        }
'''
bs('bs-sb-first-k-block', 'v', 'bug', [('sc[2] = SB[n0 / 128, k]', 'sc[2] = SB[n0 / 128, 0]')], 'dynamic')
bs('bs-sb-next-n-block', 'v', 'bug', [('sc[2] = SB[n0 / 128, k]', 'sc[2] = SB[min(n0 / 128 + 1, NB - 1), k]')], 'dynamic')
bs('bs-sa-row-8-missed', 'v', 'bug', [('sc[1] = SAs[s, (wgid - 1) * 64 + r + 8]', 'sc[1] = SAs[s, (wgid - 1) * 64 + r]')], 'dynamic')
bs('bs-sa-other-warpgroup', 'v', 'bug', [('sc[0] = SAs[s, (wgid - 1) * 64 + r]', 'sc[0] = SAs[s, r]'), ('sc[1] = SAs[s, (wgid - 1) * 64 + r + 8]', 'sc[1] = SAs[s, r + 8]')], 'dynamic')
bs('bs-release-without-wg-barrier', '1', 'bug', [(NB_SYNC, '')])
bs('bs-wg-barriers-one-id', '2', 'bug', [('barrier.sync(3, threads = 128)', 'barrier.sync(2, threads = 128)')])
bs('bs-part-not-reset', 'v', 'bug', [('accumulate = false)', 'accumulate = k > 0)')], 'dynamic')
bs('bs-tx-bytes-no-scales', '1', 'bug', [('bytes = 33280', 'bytes = 32768')])
bs('bs-sa-previous-stage', '1', 'bug', [('sc[0] = SAs[s, (wgid - 1) * 64 + r]', 'sc[0] = SAs[(it + 4) % 5, (wgid - 1) * 64 + r]')])
bs('bs-release-after-promotion', '1', 'clean', [(NB_SYNC + '        if tid_in_wg == 0 {\n          mbarrier.arrive(empty[s])\n        }\n', ''),
    ('        }\n      }\n      reg out: bf16[64, 128]', '        }\n        if tid_in_wg == 0 {\n          mbarrier.arrive(empty[s])\n        }\n      }\n      reg out: bf16[64, 128]')], 'dynamic')
bs('bs-scales-in-part-order', 'v', 'clean', [('(sc[j / 32] * sc[2])', '(sc[2] * sc[j / 32])')], 'dynamic')
bs('bs-promote-acc-zero-first-k', 'v', 'bug', [('      wg.fill(acc, 0.0)\n', '')], 'dynamic')

# ---- gemm_bf16_sm100: tcgen05, TMEM ------------------------------------------------------
BA = 'M=256,N=256,K=320'
BR = 'M=256,N=256,K=320;M=128,N=384,K=512'


def b1(name, cls, exp, edits, want='static', **kw):
    mk(name, B100, cls, exp, edits, want, None, BA, BR, **kw)


b1('b100-commit-empty-every-lane', '1e', 'bug', [('        tcgen05.mma(acc, As[s], Bs[s], accumulate = k > 0)\n        tcgen05.commit(empty[s])\n      }\n',
    '        tcgen05.mma(acc, As[s], Bs[s], accumulate = k > 0)\n      }\n      tcgen05.commit(empty[s])\n')])
b1('b100-done-parity-1', '1', 'bug', [('mbarrier.wait(done, parity = 0)', 'mbarrier.wait(done, parity = 1)')])
b1('b100-wait-ld-after-use', '3', 'bug', [('    tcgen05.wait_ld()\n    warp.cast(out[warpid * 32 : +32, :], frag[warpid * 32 : +32, :])\n',
    '    warp.cast(out[warpid * 32 : +32, :], frag[warpid * 32 : +32, :])\n    tcgen05.wait_ld()\n')])
b1('b100-alloc-64', '3', 'bug', [('tcgen05.alloc(acc, cols = 128)', 'tcgen05.alloc(acc, cols = 64)')])
b1('b100-accumulate-k-gt-1', 'v', 'bug', [('accumulate = k > 0', 'accumulate = k > 1')], 'dynamic')
b1('b100-fenced-dealloc', '3', 'clean', [('  cta.sync()\n  if warpid == 0 {\n    tcgen05.dealloc(acc)', '  tcgen05.fence_before_thread_sync()\n  cta.sync()\n  if warpid == 0 {\n    tcgen05.fence_after_thread_sync()\n    tcgen05.dealloc(acc)')])
b1('b100-ld-rows-of-warp0', '3', 'bug', [('tcgen05.ld(frag[warpid * 32 : +32, :], acc[warpid * 32 : +32, c * 32 : +32]', 'tcgen05.ld(frag[warpid * 32 : +32, :], acc[0 : +32, c * 32 : +32]')])
b1('b100-empty-parity-flipped', '1', 'bug', [('mbarrier.wait(empty[s], parity = (k / 2 + 1) % 2)', 'mbarrier.wait(empty[s], parity = k / 2 % 2)')])
b1('b100-relinquish-after-alloc', '3', 'clean', [('    tcgen05.alloc(acc, cols = 128)\n', '    tcgen05.alloc(acc, cols = 128)\n    tcgen05.relinquish_alloc_permit()\n')])

# ---- device scale: the TP GEMM handoff, the all-gather GEMM, flag barriers ---------------
TPA = 'M=256,N=512,KD=128,D=2'
TPK = 'tp_gemm_allreduce_bf16_sm90'
mk('tp-drained-parity-flipped', TP, '20.3', 'bug', [('mbarrier.wait(drained[j % 2], parity = (j / 2 + 1) % 2)', 'mbarrier.wait(drained[j % 2], parity = j / 2 % 2)')], kernel=TPK, args=TPA)
mk('tp-handoff-no-store-wait', TP, '20.3', 'bug', [('        tma.store_wait(0)\n        fence.proxy.async(space = "global")\n        mbarrier.wait(drained', '        fence.proxy.async(space = "global")\n        mbarrier.wait(drained')], kernel=TPK, args=TPA)
mk('tp-handoff-no-global-fence', TP, '20.3', 'bug', [('        tma.store_wait(0)\n        fence.proxy.async(space = "global")\n        mbarrier.wait(drained', '        tma.store_wait(0)\n        mbarrier.wait(drained')], kernel=TPK, args=TPA)
mk('tp-drained-count-2', TP, '1e', 'bug', [('drained[2](count = 3)', 'drained[2](count = 2)')], kernel=TPK, args=TPA)
mk('tp-warp3-rows-short', TP, '5', 'bug', [('device.warp_allreduce(C[m0 + 96 : +32, n0 : +256], P[m0 + 96 : +32, n0 : +256]', 'device.warp_allreduce(C[m0 + 104 : +24, n0 : +256], P[m0 + 104 : +24, n0 : +256]')], 'dynamic', kernel=TPK, args=TPA)
mk('tp-stored-slot-j', TP, '20.3', 'bug', [('mbarrier.wait(stored[j % 2], parity = j / 2 % 2)', 'mbarrier.wait(stored[(j + 1) % 2], parity = j / 2 % 2)')], kernel=TPK, args=TPA)
TP64 = 'tp_gemm_allreduce_bf16_sm90_64x128'
mk('tp64-stored-before-store-wait', TP, '20.3', 'bug', [('      tma.store_wait(0)\n      fence.proxy.async(space = "global")\n      mbarrier.arrive(stored[0])', '      mbarrier.arrive(stored[0])\n      tma.store_wait(0)\n      fence.proxy.async(space = "global")')], kernel=TP64, args='M=128,N=256,KD=128,D=2')
AGA = 'M=256,MD=128,N=256,K=128,D=2'
mk('ag-get-own-device', AG, 'v', 'bug', [('dev = m0 / MD', 'dev = devid')], 'dynamic', args=AGA)
mk('ag-no-global-fence', AG, '20.3', 'bug', [('  fence.proxy.async(space = "global")\n  cta.sync()', '  cta.sync()')], args=AGA)
mk('ag-no-cta-sync', AG, '20.3', 'bug', [('  fence.proxy.async(space = "global")\n  cta.sync()', '  fence.proxy.async(space = "global")')], args=AGA)
# The reading thread's own global proxy fence after it observed the writes (the cta.sync) and
# before its TMA read is what docs/scales.md accepts for global memory: clean by that rule.
mk('ag-fence-after-sync', AG, '20.3', 'clean', [('  fence.proxy.async(space = "global")\n  cta.sync()', '  cta.sync()\n  fence.proxy.async(space = "global")')], args=AGA)
mk('ar-one-shot-half-grid', AR, '5', 'bug', [('launch devices(N) grid(E / 4096) threads(512)', 'launch devices(N) grid(E / 8192) threads(512)')], 'dynamic', kernel='allreduce_one_shot_bf16', args='E=16384,N=2')

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


def fl(name, cls, exp, edits, want='static', **kw):
    mk(name, 'flag-barrier (tests/lit/devices/missing-fence.tile, fixed)', cls, exp, edits, want, None, FA,
       src=FLAG, simflags=['--races'], **kw)


fl('flag-base', '20.3', 'clean', [])
fl('flag-signal-indices-swapped', '20.3', 'bug', [(SIG0, 'device.signal(F[0, blockIdx.x, threadIdx.x], dev = devid, value = epoch)')])
fl('flag-wait-own-slot', '20.3', 'bug', [(WAIT0, 'device.wait(F[0, blockIdx.x, devid], value = epoch)')])
fl('flag-one-peer-short', '20.3', 'bug', [('  if threadIdx.x < ndev {\n    device.fence()\n    ' + SIG0, '  if threadIdx.x < ndev - 1 {\n    device.fence()\n    ' + SIG0)])
fl('flag-wait-next-epoch', '20.3', 'bug', [(WAIT0, 'device.wait(F[0, blockIdx.x, threadIdx.x], value = epoch + 1)')])
fl('flag-value-by-device', '20.3', 'bug', [(SIG0, 'device.signal(F[0, blockIdx.x, devid], dev = threadIdx.x, value = epoch + devid)'),
                                           (WAIT0, 'device.wait(F[0, blockIdx.x, threadIdx.x], value = epoch + threadIdx.x)')])
fl('flag-no-sync-before', '20.3', 'bug', [('  cta.copy(W[e0 : +256], X[e0 : +256])\n  cta.sync()\n', '  cta.copy(W[e0 : +256], X[e0 : +256])\n')])
fl('flag-no-sync-after', '20.3', 'bug', [('    ' + WAIT0 + '\n  }\n  cta.sync()\n', '    ' + WAIT0 + '\n  }\n')])
fl('flag-fence-after-signal', '20.3', 'bug', [('    device.fence()\n    ' + SIG0, '    ' + SIG0 + '\n    device.fence()')])
fl('flag-slot-by-block-y', '20.3', 'bug', [(SIG0, 'device.signal(F[0, 0, devid], dev = threadIdx.x, value = epoch)'), (WAIT0, 'device.wait(F[0, 0, threadIdx.x], value = epoch)')])
fl('flag-end-barrier-dropped', '20.3', 'bug', [('  cta.sync()\n  if threadIdx.x < ndev {\n    device.fence()\n    device.signal(F[1', '  cta.sync()\n  if threadIdx.x < 0 {\n    device.fence()\n    device.signal(F[1')])
fl('flag-threads-written-le', '20.3', 'clean', [('  if threadIdx.x < ndev {\n    device.fence()\n    ' + SIG0, '  if threadIdx.x <= ndev - 1 {\n    device.fence()\n    ' + SIG0)])

# ---- RMSNorm family ----------------------------------------------------------------------


def rf(name, cls, exp, edits, point, args, want='dynamic', **kw):
    mk(name, RF, cls, exp, edits, want, None, args, None, set=point, **kw)


rf('rmsf-next-row-not-converted', 'v', 'bug', [('      if i + 1 < NR {\n        cta.cast(xv, xn)\n      }\n', '')], 'cta_t64_n2_h512', 'R=6,H=512,eps=0.001')
rf('rmsf-next-row-loaded-late', 'v', 'clean', [('      if i + 1 < NR {\n        cta.copy(xn, X[row0 + i + 1, 0 : +8 * V * T])\n      }\n', ''),
    ('      if i + 1 < NR {\n        cta.cast(xv, xn)\n      }\n', '      if i + 1 < NR {\n        cta.copy(xn, X[row0 + i + 1, 0 : +8 * V * T])\n        cta.cast(xv, xn)\n      }\n')], 'cta_t64_n2_h512', 'R=6,H=512,eps=0.001')
rf('rmsf-store-row0', 'v', 'bug', [('cta.copy(Y[row0 + i, 0 : +8 * V * T], xv)', 'cta.copy(Y[row0, 0 : +8 * V * T], xv)')], 'cta_t64_n2_h512', 'R=6,H=512,eps=0.001')
rf('rmsf-warp-rows-overlap', 'v', 'bug', [('let row = blockIdx.x * RPC + warpid', 'let row = blockIdx.x + warpid')], 'warp_r4_h512', 'R=8,H=512,eps=0.001')
rf('rmsf-eps-inside-mean', 'v', 'clean', [('let scale = rsqrt(total[0] / f32(H) + eps)', 'let scale = rsqrt((total[0] + eps * f32(H)) / f32(H))', 1)], 'cta_t128_h1024', 'R=3,H=1024,eps=0.001')
rf('rmsf-warp-w-from-row', 'v', 'bug', [('warp.copy(wv, W[0 : +8 * V * 32])', 'warp.copy(wv, X[row, 0 : +8 * V * 32])')], 'warp_r2_h512', 'R=4,H=512,eps=0.001')
mk('rms-mean-over-1024', R1, 'h', 'bug', [('total[0] / f32(H)', 'total[0] / 1024.0')], 'dynamic', args='R=3,H=2048,eps=0.001')
mk('rms-part-not-filled', R1, 'h', 'bug', [('  cta.fill(part, 0.0)\n', '')], 'dynamic', args='R=3,H=2048,eps=0.001')
mk('rms-sumsq-first-chunk-twice', R1, 'h', 'bug', [('    cta.copy(xv, X[row, c * 1024 : +1024])\n    cta.cast(xf, xv)\n    cta.mul(sq', '    cta.copy(xv, X[row, 0 : +1024])\n    cta.cast(xf, xv)\n    cta.mul(sq')], 'dynamic', args='R=3,H=2048,eps=0.001')
mk('rmso-h-const', RO, 'v', 'clean', [('total[0] / f32(H)', 'total[0] / 4096.0', 0)], 'dynamic', kernel='rmsnorm_bf16_h4096', args='R=3,H=4096,eps=0.001')
mk('rmso-eps-const', RO, 'h', 'bug', [('rsqrt(total[0] / f32(H) + eps)', 'rsqrt(total[0] / f32(H) + 0.00001)', 0)], 'dynamic', kernel='rmsnorm_bf16_h4096', args='R=3,H=4096,eps=0.5')

# ---- cluster multicast (tests/lit/lower/Inputs/gemm-cluster-multicast.tile) ---------------
MC_SRC = open(os.path.join(_ROOT, 'tests/lit/lower/Inputs/gemm-cluster-multicast.tile')).read()
MCA = 'M=256,N=256,K=832'
MCR = 'M=256,N=256,K=832;M=200,N=136,K=512'


def mc(name, cls, exp, edits, want='static', **kw):
    mk(name, 'gemm-cluster-multicast (tests/lit/lower/Inputs)', cls, exp, edits, want, None, MCA, MCR, src=MC_SRC, **kw)


mc('mc-multicast-own-only', '1', 'bug', [('multicast = 3', 'multicast = select(r == 0, 1, 2)')])
mc('mc-no-remote-release', '1', 'bug', [('        mbarrier.arrive(empty[(k + 5) % 6], cta = 1 - r)\n', ''), ('      mbarrier.arrive(empty[(kt + 5) % 6], cta = 1 - r)\n', '')])
mc('mc-remote-release-to-self', '1', 'bug', [('cta = 1 - r', 'cta = r', 'all')])
mc('mc-no-exit-sync', '1', 'bug', [('  }\n  cluster.sync()\n}', '  }\n}')])
mc('mc-no-entry-sync', '1', 'bug', [('  cluster.sync()\n  if wgid == 0 {', '  if wgid == 0 {')])
mc('mc-same-half', '1', 'bug', [('tma.load(As[s][r * 64 : +64, :], A[ma : +64', 'tma.load(As[s][0 : +64, :], A[ma : +64')])
mc('mc-peer-by-mod', '1', 'clean', [('cta = 1 - r', 'cta = (r + 1) % 2', 'all')])
mc('mc-mask-sum', '1', 'clean', [('multicast = 3', 'multicast = 1 + 2')])
mc('mc-empty-count-3', '1e', 'bug', [('empty[6](count = 4)', 'empty[6](count = 3)')])
mc('mc-tx-own-half-only', '1', 'bug', [('bytes = 24576', 'bytes = 16384')])

MUTANTS2 = M2
