#!/bin/bash
# Session 5, device call 7: 64x128 tiles (one consumer warpgroup, no lockstep) with a deeper ring.
source "$(dirname "$0")/common.sh" run18
for round in 1 2 3; do
  g small gemm_bf16_sm90_64x64 M=1024,N=1024,K=1024 200 $round
  g g128n_fl8 g128n_fl8 M=1024,N=1024,K=1024 200 $round
  g g128n_fl6 g128n_fl6 M=1024,N=1024,K=1024 200 $round
done
ncu_time g128n_fl8 g128n_fl8
date -u
