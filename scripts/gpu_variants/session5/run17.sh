#!/bin/bash
# Session 5, device call 6: the TMA ring alone (no MMA) for the 64x64 and 128x64 kernels; the 64x64 kernel with A multicast over clusters of two.
source "$(dirname "$0")/common.sh" run17
python3 trace.py ./tr_small_nomma.so small_nomma 1024 256
python3 trace.py ./tr_b128_nomma.so b128_nomma 1024 128
bits ./mc64.so mc64 ../sim/mc64_a gemm_abt C
for round in 1 2 3; do
  g small gemm_bf16_sm90_64x64 M=1024,N=1024,K=1024 200 $round
  g mc64 mc64 M=1024,N=1024,K=1024 200 $round
done
ncu_time mc64 mc64
date -u
