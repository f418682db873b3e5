#!/bin/bash
# Session 5, device call 5: timelines of the 64x64 kernel and the 128x64 two-consumer kernel (big.py).
cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/run16.log) 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
python3 trace.py ./tr_small.so gemm_bf16_sm90_64x64 1024 256
python3 trace.py ./tr_b128.so b128x64s8 1024 128
p() { python3 -c "import json,sys; r=json.loads(sys.stdin.read()); b=r.get('cublas_ms', r.get('triton_ms')); print('$1 $2', 'ms %.5f base %.5f ratio %.3f ok %s err %.2e' % (r['ms'], b, r.get('ratio_vs_cublas', r.get('ratio_vs_triton')), r['ok'], r['rel_err']))"; }
B="python3 ../../codegen/bench.py"
g() { $B --lib ./$1.so --kernel $2 --args $3 --ref gemm_abt --reps $4 | p "$1 $3" $5; }
for round in 1 2; do
  g small gemm_bf16_sm90_64x64 M=1024,N=1024,K=1024 200 $round
  g b128x64s8 b128x64s8 M=1024,N=1024,K=1024 200 $round
done
timeout 120 ncu --clock-control none --section SpeedOfLight -k regex:"b128x64s8" --launch-count 1 $B --lib ./b128x64s8.so --kernel b128x64s8 --args M=1024,N=1024,K=1024 --ref gemm_abt --reps 1 2>&1 | grep -E "^  [a-z_0-9]+|Duration|Memory Through|Compute \(SM\)"
date -u
