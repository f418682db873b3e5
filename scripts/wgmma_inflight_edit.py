#!/usr/bin/env python3
"""Experiment of docs/perf.md (run B), not part of any build: hand-edit CUDA
that `tilescope lower` made from a Hopper GEMM so that one wgmma group stays in
flight: drop the accumulator zero fill, scale-d = (k > 0) on the first wgmma,
wait_group 1, release the previous stage, wait_group 0 before the epilogue.
Usage: wgmma_inflight_edit.py IN.cu OUT.cu"""
import re, sys
src = open(sys.argv[1]).read()
lines = src.split("\n")
out = []
in_consumer = False
first_wgmma_done = False
for ln in lines:
    if "setmaxnreg.inc" in ln:
        in_consumer = True
    if in_consumer and re.match(r"\s*acc\[\d+\] = 0\.0f;", ln):
        continue
    if in_consumer and "ts_wgmma_m64n" in ln and not first_wgmma_done:
        assert ln.endswith(", 1);"), ln
        ln = ln[: -len(", 1);")] + ", (k > 0));"
        first_wgmma_done = True
    if in_consumer and "wgmma.wait_group.sync.aligned 0;" in ln:
        ln = ln.replace("aligned 0;", "aligned 1;")
    if in_consumer and "ts_mbar_arrive(ts_smem_addr(&empty[s]));" in ln:
        ln = ln.replace("ts_mbar_arrive(ts_smem_addr(&empty[s]));",
                        "if (k > 0) ts_mbar_arrive(ts_smem_addr(&empty[(k + 3) % 4]));")
    if in_consumer and re.match(r"\s*__nv_bfloat16 out\[", ln):
        out.append('    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");')
    out.append(ln)
open(sys.argv[2], "w").write("\n".join(out))
