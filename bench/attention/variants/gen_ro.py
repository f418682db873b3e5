#!/usr/bin/env python3
"""helper attn6 (session 19): q64erk.tile -> q64ro.tile. The rescale of O by the
block's alpha moves from the end of iteration i (after P V_i retired, on the path
to the next S GEMM's issue) to the start of iteration i + 1, between the issue of
S = Q K^T and of O += P V (FlashAttention-3's order): its 32 multiplies a thread then
run while the tensor cores compute S. The last block's rescale moves before the
last P V. Same operations on the same values in the same order: O and L bit for
bit q64erk's. gen_ro.py IN OUT NAME"""
import sys

from genlib import write_variant

src, dst, name = sys.argv[1], sys.argv[2], sys.argv[3]
t = open(src).read()
rescale = """        for j in 0 .. 32 unroll {
          let col = j / 2 * 8 + laneid % 4 * 2 + j % 2
          Oacc[row, col] = Oacc[row, col] * alpha[h2]
        }
"""
assert t.count(rescale) == 1
t = t.replace(rescale, "")


def block(indent):
    pad = " " * indent
    return (pad + "for h2 in 0 .. 2 unroll {\n" + pad + "  let row = wid_in_wg * 16 + h2 * 8 + laneid / 4\n"
            + "".join(pad + "  " + line[8:] + "\n" for line in rescale.splitlines()) + pad + "}\n")


in_loop = """      wgmma.commit_group()
      mbarrier.wait(fullV[0], parity = i % 2)
"""
assert t.count(in_loop) == 1
t = t.replace(in_loop, """      wgmma.commit_group()
      // O's rescale by block i's alpha (P V_{i-1} retired at the last wait_group(0)),
      // while the tensor cores compute S.
""" + block(6) + """      mbarrier.wait(fullV[0], parity = i % 2)
""")
last = """    mbarrier.wait(vlast[0], parity = 0)
"""
assert t.count(last) == 1
t = t.replace(last, block(4) + last)
write_variant(t, src, dst, name, "gen_ro.py (O's rescale between the S and the P V issue)")
