#!/bin/bash
# Session 5, device call 8: the 64x128 kernel (library candidate w8) and three neighbours, four rounds.
source "$(dirname "$0")/common.sh" run19
for round in 1 2 3 4; do
  for v in w8 w7 w8t wk128; do g $v $v M=1024,N=1024,K=1024 300 $round; done
  g small gemm_bf16_sm90_64x64 M=1024,N=1024,K=1024 300 $round
done
for s in 768 1536 2048; do g w8 w8 M=$s,N=$s,K=$s 100 x; done
date -u
