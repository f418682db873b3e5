#!/usr/bin/env python3
"""helper attn6 (session 19): the q64 kernels' row maximum over a thread's 16 columns
of an unmasked block as a tree (depth 4) instead of a 16-deep chain, as the 128-row
kernel has it (max is exact: the same value). gen_tm.py IN OUT NAME"""
import sys

from genlib import write_variant

src, dst, name = sys.argv[1], sys.argv[2], sys.argv[3]
t = open(src).read()
chain = """          mn[h2] = m[h2]
          for j in 0 .. 16 unroll {
            let col = j / 2 * 8 + laneid % 4 * 2 + j % 2
            mn[h2] = max(mn[h2], Sacc[row, col])
          }
"""
assert t.count(chain) == 1
t = t.replace(chain, """          for j in 0 .. 8 unroll {
            let col = j / 2 * 8 + laneid % 4 * 2 + j % 2
            tm[j] = max(Sacc[row, col], Sacc[row, col + 32])
          }
          for j in 0 .. 4 unroll {
            tm[j] = max(tm[j], tm[j + 4])
          }
          tm[0] = max(tm[0], tm[2])
          tm[1] = max(tm[1], tm[3])
          mn[h2] = max(m[h2], max(tm[0], tm[1]))
""")
decl = "    reg alpha: f32[2]\n"
assert t.count(decl) == 1
t = t.replace(decl, decl + "    reg tm: f32[8]\n")
write_variant(t, src, dst, name, "gen_tm.py (the row maximum of an unmasked block as a tree)")
