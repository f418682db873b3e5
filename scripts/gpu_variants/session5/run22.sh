#!/bin/bash
# Session 5, device call 11: the persistent GEMM with tiles taken in groups of 8 row blocks (L2 reuse of B) against the library order.
source "$(dirname "$0")/common.sh" run22
T=/tmp/tsbench
if [ ! -f $T/gemm4096/gemm_bf16_sm90.so ]; then
  mkdir -p $T/gemm4096 && ../pkg/tilescope lower ../kernels/gemm_bf16_sm90.tile -o $T/gemm4096/g.cu >/dev/null && nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC $T/gemm4096/g.cu -o $T/gemm4096/gemm_bf16_sm90.so
fi
ln -sf $T/gemm4096/gemm_bf16_sm90.so big.so
rounds 3 "big gemm_bf16_sm90 M=8192,N=8192,K=8192 40" "grp8 gemm_grp8 M=8192,N=8192,K=8192 40" \
  "big gemm_bf16_sm90 M=4096,N=4096,K=4096 100" "grp8 gemm_grp8 M=4096,N=4096,K=4096 100"
date -u
