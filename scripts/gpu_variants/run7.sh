#!/bin/bash
cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/var7.log) 2>&1
B="python3 ../../codegen/bench.py"
g() { $B --lib ./$1.so --kernel $1 --args $2 --ref gemm_abt --reps $3 | python3 -c "import json,sys; r=json.loads(sys.stdin.read()); print('$1', '$2', 'ms %.5f cublas %.5f ratio %.3f ok %s err %.2e unwritten %d' % (r['ms'], r['cublas_ms'], r['ratio_vs_cublas'], r['ok'], r['rel_err'], r['unwritten']))"; }
for v in mc8 mcA mcB b128x64s8; do g $v M=1024,N=1024,K=1024 300; g $v M=4096,N=4096,K=4096 30; done
