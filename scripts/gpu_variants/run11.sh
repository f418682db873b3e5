#!/bin/bash
# Codegen of session 4 (shared-space smem pointer, where-fixed sizes as constants) against before.
cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/var11.log) 2>&1
p() { python3 -c "import json,sys; r=json.loads(sys.stdin.read()); b=r.get('cublas_ms', r.get('triton_ms')); print('$1 $2', 'ms %.5f base %.5f ratio %.3f ok %s' % (r['ms'], b, r.get('ratio_vs_cublas', r.get('ratio_vs_triton')), r['ok']))"; }
B="python3 ../../codegen/bench.py"
for round in 1 2 3; do
  for v in h4096 h4096n; do $B --lib ./$v.so --kernel rmsnorm_bf16_h4096 --args R=4096,H=4096 --ref rmsnorm --scalars eps=1e-6 --reps 300 | p $v $round; done
  for v in h1024 h1024n; do $B --lib ./$v.so --kernel rmsnorm_bf16_h1024 --args R=1024,H=1024 --ref rmsnorm --scalars eps=1e-6 --reps 300 | p $v $round; done
  for v in small smalln; do $B --lib ./$v.so --kernel gemm_bf16_sm90_64x64 --args M=1024,N=1024,K=1024 --ref gemm_abt --reps 300 | p $v $round; done
done
for round in 1 2; do $B --lib ./p_new.so --kernel gemm_bf16_sm90 --args M=4096,N=4096,K=4096 --ref gemm_abt --reps 50 | p p_new4096 $round; $B --lib ./p_new.so --kernel gemm_bf16_sm90 --args M=8192,N=8192,K=8192 --ref gemm_abt --reps 20 | p p_new8192 $round; done
