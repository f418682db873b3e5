#!/usr/bin/env python3
"""helper attn3 (session 16): make a lowered 256-thread kernel launch two CTAs an
SM (the experiment of q64.tile; the IR has no way yet to say so, and the resource
check takes one CTA an SM: 255 registers a thread at launch, so the tile says
setmaxnreg.inc(256)). patch2cta.py IN.cu OUT.cu KERNEL: __launch_bounds__(256, 2)
(128 registers a thread at launch), the consumer's setmaxnreg.inc to 232 (the 104
a thread the producer's setmaxnreg.dec(24) gives back, 13312 registers either
way), and the shared-memory carveout at its maximum before the launch."""
import re
import sys

src, dst, k = sys.argv[1:4]
s = open(src).read()
for a, b in [("__launch_bounds__(256, 1) " + k, "__launch_bounds__(256, 2) " + k),
             ("setmaxnreg.inc.sync.aligned.u32 256;", "setmaxnreg.inc.sync.aligned.u32 232;")]:
    assert s.count(a) == 1, a
    s = s.replace(a, b)
m = re.search(r"  cudaError_t e = cudaFuncSetAttribute\(%s, cudaFuncAttributeMaxDynamicSharedMemorySize, \d+\);\n"
              r"  if \(e != cudaSuccess\) return \(int\)e;\n" % k, s)
assert m
s = s[:m.end()] + ("  e = cudaFuncSetAttribute(%s, cudaFuncAttributePreferredSharedMemoryCarveout, 100);\n"
                   "  if (e != cudaSuccess) return (int)e;\n" % k) + s[m.end():]
open(dst, "w").write(s)
