#!/bin/bash
# Session 5, device call 2: where the split-K cluster kernel's time goes.
source "$(dirname "$0")/common.sh" run13
for round in 1 2; do
  g small gemm_bf16_sm90_64x64 M=1024,N=1024,K=1024 200 $round
  g gemm_bf16_sm90_splitk gemm_bf16_sm90_splitk M=1024,N=1024,K=1024 200 $round
  g sk_nored sk_nored M=1024,N=1024,K=1024 200 $round
  g sk_noclu sk_noclu M=1024,N=1024,K=1024 200 $round
done
for v in "small gemm_bf16_sm90_64x64" "gemm_bf16_sm90_splitk gemm_bf16_sm90_splitk" "sk_nored sk_nored" "sk_noclu sk_noclu"; do
  set -- $v
  timeout 120 ncu --clock-control none --section SpeedOfLight --section LaunchStats -k regex:"$2|nvjet" --launch-count 2 $B --lib ./$1.so --kernel $2 --args M=1024,N=1024,K=1024 --ref gemm_abt --reps 1 2>&1 | grep -E "^  [a-z_0-9]+|Duration|SM Frequency|Compute \(SM\)|Memory Through|Registers|Shared Memory Config|Dynamic Shared|Cluster|Grid Size" | tee -a $OUT/ncu13.txt
done
date -u
