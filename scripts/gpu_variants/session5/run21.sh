#!/bin/bash
# Session 5, device call 10: repeats of the library GEMMs on the libraries run20's tilescope bench built.
source "$(dirname "$0")/common.sh" run21
T=/tmp/tsbench
if [ ! -f $T/gemm4096/gemm_bf16_sm90.so ]; then
  cd ../.. && bash codegen/gpu_bench.sh gpu_run/pkg gpu_run/kernels > /dev/null 2>&1; cd gpu_run/var
fi
ln -sf $T/gemm4096/gemm_bf16_sm90.so big.so && ln -sf $T/gemm1024/gemm_bf16_sm90_64x128.so wide.so
for round in 1 2 3 4; do
  g big gemm_bf16_sm90 M=8192,N=8192,K=8192 40 $round
  g big gemm_bf16_sm90 M=4096,N=4096,K=4096 100 $round
  g wide gemm_bf16_sm90_64x128 M=1024,N=1024,K=1024 300 $round
done
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
date -u
