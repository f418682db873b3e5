#!/usr/bin/env python3
"""helper attn6 (session 19): Q in registers for S = Q K^T. The warpgroup copies its
64 x 128 Q block from Qs into a register tile in the wgmma A-fragment layout once
(after qfull), and every S GEMM reads A from registers (wgmma RS) instead of shared
memory: with 64-key blocks an SS m64n64k16 reads as many shared-memory bytes for A as
for B, so this halves the S GEMM's shared-memory operand traffic.
gen_qr.py IN OUT NAME"""
import sys

from genlib import write_variant

src, dst, name = sys.argv[1], sys.argv[2], sys.argv[3]
t = open(src).read()
decl = "    reg Ob: bf16[64, 128] layout(wgmma_acc(64, 128))\n"
assert t.count(decl) == 1
t = t.replace(decl, decl + "    reg Qr: bf16[64, 128] layout(wgmma_acc(64, 128))\n")
wait = "    mbarrier.wait(qfull[0], parity = 0)\n"
assert t.count(wait) == 1
t = t.replace(wait, wait + "    wg.copy(Qr, Qs)\n")
n = t.count("wgmma.mma_async(Sacc, Qs, ")
assert n == 2, n
t = t.replace("wgmma.mma_async(Sacc, Qs, ", "wgmma.mma_async(Sacc, Qr, ")
write_variant(t, src, dst, name, "gen_qr.py (Q in registers, S by wgmma with A from registers)")
