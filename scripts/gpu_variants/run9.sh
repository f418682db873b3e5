#!/bin/bash
# Sequential (old harness) against interleaved (new harness) timing, same libraries.
cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/var9.log) 2>&1
p() { python3 -c "import json,sys; r=json.loads(sys.stdin.read()); b=r.get('cublas_ms', r.get('triton_ms')); print('$1 $2 $3', 'ms %.5f base %.5f ratio %.3f ok %s' % (r['ms'], b, r.get('ratio_vs_cublas', r.get('ratio_vs_triton')), r['ok']))"; }
for round in 1 2 3; do
  for h in old new; do
    python3 bench_$h.py --lib ./h4096.so --kernel rmsnorm_bf16_h4096 --args R=4096,H=4096 --ref rmsnorm --scalars eps=1e-6 --reps 200 | p $h rms4096 $round
    python3 bench_$h.py --lib ./h1024.so --kernel rmsnorm_bf16_h1024 --args R=1024,H=1024 --ref rmsnorm --scalars eps=1e-6 --reps 200 | p $h rms1024 $round
    python3 bench_$h.py --lib ./small.so --kernel gemm_bf16_sm90_64x64 --args M=1024,N=1024,K=1024 --ref gemm_abt --reps 200 | p $h gemm1024 $round
  done
done
