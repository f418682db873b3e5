#!/usr/bin/env python3
"""helper attn6 (session 19): put a one-kernel q64 variant (bench/attention/variants/
q64*.tile) into the causal family as its q64 arm: the family's `if BQ == 64 { ... }`
body is replaced by the variant's kernel body, indented one level.
fold_q64.py FAMILY.tile VARIANT.tile OUT.tile"""
import sys

fam, var, dst = sys.argv[1:4]
f = open(fam).read().split("\n")
v = open(var).read().split("\n")
start = f.index("  if BQ == 64 {")
end = f.index("  } else {", start)
vstart = next(i for i, line in enumerate(v) if line == "{") + 1
vend = len(v) - 1 - v[::-1].index("}")
body = ["  " + line if line else line for line in v[vstart:vend]]
open(dst, "w").write("\n".join(f[:start + 1] + body + f[end:]))
