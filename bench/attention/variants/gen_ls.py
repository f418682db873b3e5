#!/usr/bin/env python3
"""helper attn6 (session 19): the q64 kernels' row sum of an unmasked block as a tree
(pairs, then pairs of pairs) added to l once, instead of a 16-deep chain of additions
into l. Not bit for bit the kernel it is made from: another summation order (the
simulator models it; the float64 tolerance holds). gen_ls.py IN OUT NAME"""
import sys

from genlib import write_variant

src, dst, name = sys.argv[1], sys.argv[2], sys.argv[3]
t = open(src).read()
chain = """          let ms = mn[h2] * sl2
          for j in 0 .. 16 unroll {
            let col = j / 2 * 8 + laneid % 4 * 2 + j % 2
            let p = exp2(fma(Sacc[row, col], sl2, -ms))
            l[h2] = l[h2] + p
            Sacc[row, col] = p
          }
          m[h2] = mn[h2]
        }
      } else {"""
assert t.count(chain) == 1
t = t.replace(chain, """          let ms = mn[h2] * sl2
          for j in 0 .. 16 unroll {
            let col = j / 2 * 8 + laneid % 4 * 2 + j % 2
            Sacc[row, col] = exp2(fma(Sacc[row, col], sl2, -ms))
          }
          for j in 0 .. 8 unroll {
            let col = j / 2 * 8 + laneid % 4 * 2 + j % 2
            tm[j] = Sacc[row, col] + Sacc[row, col + 32]
          }
          for j in 0 .. 4 unroll {
            tm[j] = tm[j] + tm[j + 4]
          }
          tm[0] = tm[0] + tm[2]
          tm[1] = tm[1] + tm[3]
          l[h2] = l[h2] + (tm[0] + tm[1])
          m[h2] = mn[h2]
        }
      } else {""")
write_variant(t, src, dst, name, "gen_ls.py (the row sum of an unmasked block as a tree)")
