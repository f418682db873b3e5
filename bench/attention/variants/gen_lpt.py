#!/usr/bin/env python3
"""helper attn3 (session 16): a causal kernel launched heads-first, longest query
blocks first. gen_lpt.py IN OUT NAME [BM]: grid (H, nq, B), head = blockIdx.x, query
block nq - 1 - blockIdx.y: the linear launch order runs all heads of a batch
row at one query block (the longest first), so each batch row's 16 heads
(K and V 8 MiB at S = 1024) stay in L2 while the work a CTA shrinks toward the
end of the grid (the last wave holds the shortest CTAs)."""
import re
import sys

src, dst, name = sys.argv[1:4]
bm = int(sys.argv[4]) if len(sys.argv) > 4 else 128  # query rows a CTA
t = open(src).read()
t = re.sub(r"kernel attention_fwd_\w+\(", "kernel %s(" % name, t, count=1)
nq = "(S + %d) / %d" % (bm - 1, bm)
for a, b in [("launch grid(%s, H, B)" % nq, "launch grid(H, %s, B)" % nq),
             ("let b = blockIdx.z, h = blockIdx.y, q0 = blockIdx.x * %d" % bm,
              "let b = blockIdx.z, h = blockIdx.x, q0 = (%s - 1 - blockIdx.y) * %d" % (nq, bm)),
             ("let nk = blockIdx.x + 1", "let nk = %s - blockIdx.y" % nq)]:
    assert t.count(a) == 1, a
    t = t.replace(a, b)
open(dst, "w").write(t)
