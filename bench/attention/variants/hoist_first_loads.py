#!/usr/bin/env python3
"""helper attn4 (session 17), a timing experiment on the lowered CUDA only:
hoist_first_loads.py IN.cu OUT.cu NAME. The producer's first elected block (Q
and K block 0: arrive_expect_tx and the TMA loads) moves into thread 0's
barrier-initialisation block, right after fence.mbarrier_init, so the loads
leave before the CTA-wide __syncthreads and the setmaxnreg of the
warpgroups. The kernel's `let`s the loads use are repeated there. Not a
lowering the toolkit emits: it measures what the prologue's ordering costs."""
import re
import sys

src, dst, name = sys.argv[1:4]
t = open(src).read()
old = re.search(r"__launch_bounds__\([^)]*\) (\w+)\(", t).group(1)
t = t.replace(old, name)  # the kernel and its tilescope_abi_ / tilescope_launch_ symbols
fence = '    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");\n'
assert t.count(fence) == 1
sync = "  __syncthreads();\n"
i = t.index(fence) + len(fence)
j = t.index(sync, i) + len(sync)
# the lets between __syncthreads and the first role branch
k = t.index("  if (((ts_tid >> 7) == 0)) {\n", j)
lets = t[j:k]
# the producer's first elected block
e0 = t.index("      if (ts_elect_sync()) {\n", k)
e1 = t.index("      }\n", e0) + len("      }\n")
first = t[e0:e1]
body = "".join(ln[4:] + "\n" for ln in first.split("\n")[1:-2])
hoisted = "    {\n" + "".join("  " + ln + "\n" for ln in lets.split("\n") if ln.strip()) + body + "    }\n"
t = t[:e0] + t[e1:]
t = t[:i] + hoisted + t[i:]
open(dst, "w").write(t)
