#!/bin/bash
# Session 5, device call 3: timelines of the 64x64 and split-K kernels, the store-wait change, then the library benchmark.
source "$(dirname "$0")/common.sh" run14
python3 trace.py ./tr_small.so gemm_bf16_sm90_64x64 1024 256
python3 trace.py ./tr_splitk.so gemm_bf16_sm90_splitk 1024 128
for round in 1 2 3; do
  g small_full gemm_bf16_sm90_64x64 M=1024,N=1024,K=1024 300 $round
  g small gemm_bf16_sm90_64x64 M=1024,N=1024,K=1024 300 $round
done
cd ../.. && bash codegen/gpu_bench.sh gpu_run/pkg gpu_run/kernels gpu_run/sim > /dev/null 2>&1
python3 scripts/gpu_variants/summary.py < $OUT/results.jsonl
grep -E "SASS|HGMMA|ceilings" $OUT/log.txt
date -u
