#!/bin/bash
# Session 5, device call 3: timelines of the 64x64 and split-K kernels, the store-wait change, then the library benchmark.
cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/run14.log) 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
python3 trace.py ./tr_small.so gemm_bf16_sm90_64x64 1024 256
python3 trace.py ./tr_splitk.so gemm_bf16_sm90_splitk 1024 128
p() { python3 -c "import json,sys; r=json.loads(sys.stdin.read()); b=r.get('cublas_ms', r.get('triton_ms')); print('$1 $2', 'ms %.5f base %.5f ratio %.3f ok %s err %.2e' % (r['ms'], b, r.get('ratio_vs_cublas', r.get('ratio_vs_triton')), r['ok'], r['rel_err']))"; }
B="python3 ../../codegen/bench.py"
g() { $B --lib ./$1.so --kernel $2 --args $3 --ref gemm_abt --reps $4 | p "$1 $3" $5; }
for round in 1 2 3; do
  g small_full gemm_bf16_sm90_64x64 M=1024,N=1024,K=1024 300 $round
  g small gemm_bf16_sm90_64x64 M=1024,N=1024,K=1024 300 $round
done
cd ../.. && bash codegen/gpu_bench.sh gpu_run/pkg gpu_run/kernels gpu_run/sim > /dev/null 2>&1
grep -vE "^\s" $OUT/results.jsonl | python3 -c "
import sys, json
for line in sys.stdin:
    name, _, rest = line.partition(' ')
    try: r = json.loads(rest)
    except Exception: print(line.strip()[:200]); continue
    keys = ['ms','cublas_ms','ratio_vs_cublas','triton_ms','ratio_vs_triton','rel_err','unwritten','bit_identical','compared','ok']
    print(name, {k: (round(r[k],5) if isinstance(r[k], float) else r[k]) for k in keys if k in r})
"
grep -E "SASS|HGMMA|ceilings" $OUT/log.txt
date -u
