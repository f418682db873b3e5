#!/bin/bash
# Session 5, device call 12: the library benchmark with the grouped persistent GEMM at 4096 and 8192
# and the 64x128 kernel at 1024, then repeats of the three GEMM rows.
source "$(dirname "$0")/common.sh" run23
cd ../.. && bash codegen/gpu_bench.sh gpu_run/pkg gpu_run/kernels gpu_run/sim > /dev/null 2>&1
python3 scripts/gpu_variants/summary.py < $OUT/results.jsonl
grep -E "SASS|HGMMA|ceilings" $OUT/log.txt
cd gpu_run/var && T=/tmp/tsbench
ln -sf $T/gemm4096/gemm_bf16_sm90_grouped.so grouped.so && ln -sf $T/gemm4096rm/gemm_bf16_sm90.so big.so && ln -sf $T/gemm1024/gemm_bf16_sm90_64x128.so wide.so
rounds 3 "grouped gemm_bf16_sm90_grouped M=8192,N=8192,K=8192 40" "big gemm_bf16_sm90 M=8192,N=8192,K=8192 40" \
  "grouped gemm_bf16_sm90_grouped M=4096,N=4096,K=4096 100" "wide gemm_bf16_sm90_64x128 M=1024,N=1024,K=1024 300"
cuobjdump -sass grouped.so | grep -oE "HGMMA[.0-9A-Zx]*|UTMALDG|UTMASTG|LDL|STL" | sort | uniq -c
date -u
