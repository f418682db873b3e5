#!/bin/bash
# Session 5, device call 9: the library benchmark with gemm_bf16_sm90_64x128 at 1024^3, then six
# more alternating rounds of the libraries tilescope bench built.
source "$(dirname "$0")/common.sh" run20
cd ../.. && bash codegen/gpu_bench.sh gpu_run/pkg gpu_run/kernels gpu_run/sim > /dev/null 2>&1
python3 scripts/gpu_variants/summary.py < $OUT/results.jsonl
grep -E "SASS|HGMMA|ceilings" $OUT/log.txt
cd gpu_run/var && ln -sf /tmp/tsbench/gemm1024/gemm_bf16_sm90_64x128.so wide.so && ln -sf /tmp/tsbench/gemm1024small/gemm_bf16_sm90_64x64.so small.so
for round in 1 2 3 4 5 6; do
  g wide gemm_bf16_sm90_64x128 M=1024,N=1024,K=1024 300 $round
  g small gemm_bf16_sm90_64x64 M=1024,N=1024,K=1024 300 $round
done
ncu_time wide gemm_bf16_sm90_64x128
cuobjdump -sass wide.so | grep -oE "HGMMA[.0-9A-Zx]*|UTMALDG|UTMASTG|LDL|STL" | sort | uniq -c
date -u
