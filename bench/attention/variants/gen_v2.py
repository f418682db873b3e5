#!/usr/bin/env python3
"""helper attn6 (session 19): V in two stages for the q64 kernels (from q64tm.tile, Q
already in registers), the 16 KiB found in one of two ways, so that two CTAs still
share an SM. V block i (but the last, still in Os) goes to stage i % 2, so V_i's load
starts an iteration before P V_i instead of right after P V_{i-1} retired. Same
operations on the same values: O and L bit for bit.
- qinos: Q lands in Os (free until the last V block), the consumer copies it to its
  registers and every thread arrives on `qfree` (count 128); the producer waits there
  before loading the last V block into Os. Qs is gone.
- k0ring: K block 0 in K's ring (stage 0, its first fill) instead of K0s. NOT PROVED:
  the check reads the ring's first fill outside the loops (before the peeled block)
  mixed with the loop's fills as parity aliasing, over-arrival and races (as it did
  session 18's q64v2s), so it was not timed.
gen_v2.py IN OUT NAME qinos|k0ring"""
import sys

from genlib import write_variant

src, dst, name, mode = sys.argv[1:5]
t = open(src).read()


def sub(old, new):
    global t
    assert t.count(old) == 1, (old, t.count(old))
    t = t.replace(old, new)


# V: two stages.
sub("shared Vs: bf16[1, 64, 128] layout(swizzle(128B, bf16, S[(1, 64, 2, 64):",
    "shared Vs: bf16[2, 64, 128] layout(swizzle(128B, bf16, S[(2, 64, 2, 64):")
sub("fullV[1](count = 1)", "fullV[2](count = 1)")
sub("emptyV[1](count = 1)", "emptyV[2](count = 1)")
sub("""        mbarrier.wait(emptyV[0], parity = (i + 1) % 2)
        if elect_sync() {
          mbarrier.arrive_expect_tx(fullV[0], bytes = 16384)
          tma.load(Vs[0][:, 0 : +64], V[b, h, i * 64 : +64, 0 : +64], mbar = fullV[0])
          tma.load(Vs[0][:, 64 : +64], V[b, h, i * 64 : +64, 64 : +64], mbar = fullV[0])
""", """        let sv = i % 2
        mbarrier.wait(emptyV[sv], parity = (i / 2 + 1) % 2)
        if elect_sync() {
          mbarrier.arrive_expect_tx(fullV[sv], bytes = 16384)
          tma.load(Vs[sv][:, 0 : +64], V[b, h, i * 64 : +64, 0 : +64], mbar = fullV[sv])
          tma.load(Vs[sv][:, 64 : +64], V[b, h, i * 64 : +64, 64 : +64], mbar = fullV[sv])
""")
sub("      let kv0 = (i + 1) * 64\n", "      let kv0 = (i + 1) * 64\n      let sv = i % 2\n")
sub("mbarrier.wait(fullV[0], parity = i % 2)", "mbarrier.wait(fullV[sv], parity = i / 2 % 2)")
sub("wgmma.mma_async(Oacc, P, Vs[0])", "wgmma.mma_async(Oacc, P, Vs[sv])")
sub("mbarrier.arrive(emptyV[0])", "mbarrier.arrive(emptyV[sv])")
if mode == "qinos":
    sub("  shared Qs: bf16[64, 128] layout(swizzle(128B, bf16, S[(64, 2, 64):(64, 4096, 1)]))\n", "")
    sub("vlast[1](count = 1), ", "vlast[1](count = 1), qfree[1](count = 128), ")
    sub("tma.load(Qs[:, 0 : +64], Q[", "tma.load(Os[:, 0 : +64], Q[")
    sub("tma.load(Qs[:, 64 : +64], Q[", "tma.load(Os[:, 64 : +64], Q[")
    sub("""      if elect_sync() {
        mbarrier.arrive_expect_tx(vlast[0], bytes = 16384)
""", """      // Every consumer thread has copied Q out of Os.
      mbarrier.wait(qfree[0], parity = 0)
      if elect_sync() {
        mbarrier.arrive_expect_tx(vlast[0], bytes = 16384)
""")
    sub("    wg.copy(Qr, Qs)\n", "    wg.copy(Qr, Os)\n    mbarrier.arrive(qfree[0])\n")
else:
    sub("  shared K0s: bf16[64, 128] layout(swizzle(128B, bf16, S[(64, 2, 64):(64, 4096, 1)]))\n", "")
    sub("k0full[1](count = 1), ", "")
    sub("""        mbarrier.arrive_expect_tx(k0full[0], bytes = 16384)
        tma.load(K0s[:, 0 : +64], K[b, h, 0 : +64, 0 : +64], mbar = k0full[0])
        tma.load(K0s[:, 64 : +64], K[b, h, 0 : +64, 64 : +64], mbar = k0full[0])
""", """        mbarrier.arrive_expect_tx(fullK[0], bytes = 16384)
        tma.load(Ks[0][:, 0 : +64], K[b, h, 0 : +64, 0 : +64], mbar = fullK[0])
        tma.load(Ks[0][:, 64 : +64], K[b, h, 0 : +64, 64 : +64], mbar = fullK[0])
""")
    sub("""        let s = i % 2
        mbarrier.wait(emptyK[s], parity = (i / 2 + 1) % 2)
""", """        let s = (i + 1) % 2
        mbarrier.wait(emptyK[s], parity = ((i + 1) / 2 + 1) % 2)
""")
    sub("""    mbarrier.wait(k0full[0], parity = 0)
    wgmma.fence()
    wgmma.mma_async(Sacc, Qr, K0s, transpose_b = true, accumulate = false)
    wgmma.commit_group()
    wgmma.wait_group(0)
""", """    mbarrier.wait(fullK[0], parity = 0)
    wgmma.fence()
    wgmma.mma_async(Sacc, Qr, Ks[0], transpose_b = true, accumulate = false)
    wgmma.commit_group()
    wgmma.wait_group(0)
    if tid_in_wg == 0 {
      mbarrier.arrive(emptyK[0])
    }
""")
    sub("      let s = i % 2\n      let kv0", "      let s = (i + 1) % 2\n      let kv0")
    sub("mbarrier.wait(fullK[s], parity = i / 2 % 2)", "mbarrier.wait(fullK[s], parity = (i + 1) / 2 % 2)")
write_variant(t, src, dst, name, "gen_v2.py " + mode + " (V in two stages)")
