#!/usr/bin/env python3
"""helper attn4 (session 17): the causal d128 kernel's epilogue without shared
memory for full query tiles. gen_dst.py IN OUT NAME [BM]: where the tile lies
wholly inside S (`q0 + BM <= S`, uniform in the CTA) each consumer writes its
64 rows of O (bf16) and L straight from registers to global memory
(`wg.copy(O[...], P)`: 32-bit stores of the fragment's pairs); gone there are
the rendezvous before Os (which holds the last V block) is overwritten,
wg.copy into Os and Ls, fence.proxy.async, the second rendezvous, the TMA
stores and the wait for their reads: a consumer leaves as soon as its own last
P V retired. The ragged last tile keeps the shared-memory path (TMA clips it).
The same values: O and L bit for bit."""
import re
import sys

src, dst, name = sys.argv[1:4]
bm = int(sys.argv[4]) if len(sys.argv) > 4 else 128
t = open(src).read()
t = re.sub(r"kernel attention_fwd_\w+\(", "kernel %s(" % name, t, count=1)
if bm == 128:
    start = "    // Both consumers' last P V have read V_{nk-1} from Os.\n"
    pbuf, rows, ind = "P", "q0 + r0 : +64", "r0"
else:
    start = "    // Every warp's last P V has read V_{nk-1} from Os.\n"
    pbuf, rows, ind = "Ob", "q0 : +64", ""
i = t.index(start)
end = "      tma.store_wait(0, read = true)\n    }\n"
j = t.index(end, i) + len(end)
old = t[i:j]
body = "".join("  " + ln + "\n" if ln else "\n" for ln in old.split("\n")[:-1])
new = ("    // A full tile: O and L from registers to global memory, no rendezvous.\n"
       "    if q0 + %d <= S {\n"
       "      wg.copy(O[b, h, %s, :], %s)\n"
       "      wg.copy(L[b, h, %s], Lr)\n"
       "    } else {\n%s    }\n") % (bm, rows, pbuf, rows, body)
t = t[:i] + new + t[j:]
open(dst, "w").write(t)
