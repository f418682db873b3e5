#!/usr/bin/env python3
"""helper attn6 (session 19): in the q64 kernels' key loop, wait for S = Q K_{i+1}^T to
retire before waiting for V_i and issuing O += P_i V_i (the softmax of block i + 1 then
overlaps P V_i as before). V has one stage, released after P V_{i-1} retired at the
end of the previous iteration: the load of V_i then has the S GEMM's time to land
before the consumer waits for it, where the earlier order waited for it right after
issuing S and the softmax could not start before V_i arrived. Same operations on the
same values: O and L bit for bit. gen_lv.py IN OUT NAME"""
import sys

from genlib import write_variant

src, dst, name = sys.argv[1], sys.argv[2], sys.argv[3]
t = open(src).read()
pv = """      mbarrier.wait(fullV[0], parity = i % 2)
      wgmma.fence()
      wgmma.mma_async(Oacc, P, Vs[0])
      wgmma.commit_group()
      wgmma.wait_group(1)
      // S = Q K_{i+1}^T has retired: K's stage goes back a softmax early.
      if tid_in_wg == 0 {
        mbarrier.arrive(emptyK[s])
      }
"""
assert t.count(pv) == 1
t = t.replace(pv, """      wgmma.wait_group(0)
      // S = Q K_{i+1}^T has retired: K's stage goes back; then P V_i.
      if tid_in_wg == 0 {
        mbarrier.arrive(emptyK[s])
      }
      mbarrier.wait(fullV[0], parity = i % 2)
      wgmma.fence()
      wgmma.mma_async(Oacc, P, Vs[0])
      wgmma.commit_group()
""")
write_variant(t, src, dst, name, "gen_lv.py (S retired before the wait for V and the P V issue)")
