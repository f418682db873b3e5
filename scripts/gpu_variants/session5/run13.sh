#!/bin/bash
# Session 5, device call 2: where the split-K cluster kernel's time goes.
cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/run13.log) 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
p() { python3 -c "import json,sys; r=json.loads(sys.stdin.read()); b=r.get('cublas_ms', r.get('triton_ms')); print('$1 $2', 'ms %.5f base %.5f ratio %.3f ok %s err %.2e' % (r['ms'], b, r.get('ratio_vs_cublas', r.get('ratio_vs_triton')), r['ok'], r['rel_err']))"; }
B="python3 ../../codegen/bench.py"
g() { $B --lib ./$1.so --kernel $2 --args $3 --ref gemm_abt --reps $4 | p "$1 $3" $5; }
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
