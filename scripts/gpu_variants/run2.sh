#!/bin/bash
cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/var2.log) 2>&1
date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
B="python3 ../../codegen/bench.py"
g() { $B --lib ./$1.so --kernel $1 --args $2 --ref gemm_abt --reps $3 | python3 -c "import json,sys; r=json.loads(sys.stdin.read()); print('$1', '$2', 'ms %.5f cublas %.5f ratio %.3f ok %s err %.2e' % (r['ms'], r['cublas_ms'], r['ratio_vs_cublas'], r['ok'], r['rel_err']))"; }
for round in 1 2 3; do
  for v in g64_base g64_fl6 sk2 sk2f sk3 sk2s6; do g $v M=1024,N=1024,K=1024 300; done
done
for v in sk2 sk2f sk3; do g $v M=1000,N=1016,K=1032 50; done
date -u
