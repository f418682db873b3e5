#!/bin/bash
# Session 5, device call 1: split-K cluster GEMM at 1024^3 and the RMSNorm occupancy variant.
source "$(dirname "$0")/common.sh" run12
for d in ../sim/sk_*; do bits ./gemm_bf16_sm90_splitk.so gemm_bf16_sm90_splitk $d gemm_abt C; done
for round in 1 2 3; do
  g small gemm_bf16_sm90_64x64 M=1024,N=1024,K=1024 300 $round
  g gemm_bf16_sm90_splitk gemm_bf16_sm90_splitk M=1024,N=1024,K=1024 300 $round
  g splitk_if splitk_if M=1024,N=1024,K=1024 300 $round
  rn rmsnorm_bf16_h4096 rmsnorm_bf16_h4096 R=4096,H=4096 300 $round
  rn rmsnorm_lb8 rmsnorm_lb8 R=4096,H=4096 300 $round
done
for s in 2048 1536 768 512; do g gemm_bf16_sm90_splitk gemm_bf16_sm90_splitk M=$s,N=$s,K=$s 100 x; g small gemm_bf16_sm90_64x64 M=$s,N=$s,K=$s 100 x; done
date -u
