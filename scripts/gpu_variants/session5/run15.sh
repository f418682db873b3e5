#!/bin/bash
# Session 5, device call 4: split-K variants (deeper ring, direct stores, padded reduction buffers, batched DSMEM).
cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/run15.log) 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
python3 trace.py ./tr_sk5d.so sk5d 1024 128
p() { python3 -c "import json,sys; r=json.loads(sys.stdin.read()); b=r.get('cublas_ms', r.get('triton_ms')); print('$1 $2', 'ms %.5f base %.5f ratio %.3f ok %s err %.2e' % (r['ms'], b, r.get('ratio_vs_cublas', r.get('ratio_vs_triton')), r['ok'], r['rel_err']))"; }
B="python3 ../../codegen/bench.py"
g() { $B --lib ./$1.so --kernel $2 --args $3 --ref gemm_abt --reps $4 | p "$1 $3" $5; }
for round in 1 2; do
  g small gemm_bf16_sm90_64x64 M=1024,N=1024,K=1024 200 $round
  g sk4d sk4d M=1024,N=1024,K=1024 200 $round
  g sk5d sk5d M=1024,N=1024,K=1024 200 $round
done
for v in "sk4d sk4d" "sk5d sk5d"; do
  set -- $v
  timeout 120 ncu --clock-control none --section SpeedOfLight -k regex:"$2" --launch-count 1 $B --lib ./$1.so --kernel $2 --args M=1024,N=1024,K=1024 --ref gemm_abt --reps 1 2>&1 | grep -E "^  [a-z_0-9]+|Duration|Memory Through|Compute \(SM\)"
done
cd ../.. && for d in gpu_run/sim/sim_rmsnorm*; do case $(basename $d) in *h4096*) k=rmsnorm_bf16_h4096 f=rmsnorm_onepass;; *h1024*) k=rmsnorm_bf16_h1024 f=rmsnorm_onepass;; *) k=rmsnorm_bf16 f=rmsnorm;; esac
  ls /tmp/tsbench 2>/dev/null | head -1
  mkdir -p /tmp/rb && gpu_run/pkg/tilescope lower gpu_run/kernels/$f.tile --kernel $k -o /tmp/rb/$k.cu >/dev/null && nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC /tmp/rb/$k.cu -o /tmp/rb/$k.so
  echo "bits $d $(python3 codegen/bench.py --lib /tmp/rb/$k.so --kernel $k --args "$(cat $d/args)" --scalars eps=1e-6 --ref rmsnorm --reps 3 --load $d/ --expect $d/Y.npy | python3 -c "import json,sys; r=json.loads(sys.stdin.read()); print(r['bit_identical'], 'of', r['compared'])")"
done
date -u
