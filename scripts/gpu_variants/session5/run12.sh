#!/bin/bash
# Session 5, device call 1: split-K cluster GEMM at 1024^3 and the RMSNorm occupancy variant.
cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/run12.log) 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
p() { python3 -c "import json,sys; r=json.loads(sys.stdin.read()); b=r.get('cublas_ms', r.get('triton_ms')); print('$1 $2', 'ms %.5f base %.5f ratio %.3f ok %s err %.2e' % (r['ms'], b, r.get('ratio_vs_cublas', r.get('ratio_vs_triton')), r['ok'], r['rel_err']))"; }
B="python3 ../../codegen/bench.py"
g() { $B --lib ./$1.so --kernel $2 --args $3 --ref gemm_abt --reps $4 | p "$1 $3" $5; }
rn() { $B --lib ./$1.so --kernel $2 --args $3 --ref rmsnorm --scalars eps=1e-6 --reps $4 | p "$1 $3" $5; }
for d in ../sim/sk_*; do echo "bits $d $($B --lib ./gemm_bf16_sm90_splitk.so --kernel gemm_bf16_sm90_splitk --args "$(cat $d/args)" --ref gemm_abt --reps 3 --load $d/ --expect $d/C.npy | python3 -c "import json,sys; r=json.loads(sys.stdin.read()); print(r['bit_identical'], 'of', r['compared'], 'ok', r['ok'])")"; done
for round in 1 2 3; do
  g small gemm_bf16_sm90_64x64 M=1024,N=1024,K=1024 300 $round
  g gemm_bf16_sm90_splitk gemm_bf16_sm90_splitk M=1024,N=1024,K=1024 300 $round
  g splitk_if splitk_if M=1024,N=1024,K=1024 300 $round
  rn rmsnorm_bf16_h4096 rmsnorm_bf16_h4096 R=4096,H=4096 300 $round
  rn rmsnorm_lb8 rmsnorm_lb8 R=4096,H=4096 300 $round
done
for s in 2048 1536 768 512; do g gemm_bf16_sm90_splitk gemm_bf16_sm90_splitk M=$s,N=$s,K=$s 100 x; g small gemm_bf16_sm90_64x64 M=$s,N=$s,K=$s 100 x; done
date -u
