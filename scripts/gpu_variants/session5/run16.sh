#!/bin/bash
# Session 5, device call 5: timelines of the 64x64 kernel and the 128x64 two-consumer kernel (big.py).
source "$(dirname "$0")/common.sh" run16
python3 trace.py ./tr_small.so gemm_bf16_sm90_64x64 1024 256
python3 trace.py ./tr_b128.so b128x64s8 1024 128
for round in 1 2; do
  g small gemm_bf16_sm90_64x64 M=1024,N=1024,K=1024 200 $round
  g b128x64s8 b128x64s8 M=1024,N=1024,K=1024 200 $round
done
ncu_time b128x64s8 b128x64s8
date -u
