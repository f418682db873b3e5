#!/bin/bash
# Session 5, device call 4: split-K variants (deeper ring, direct stores, padded reduction buffers, batched DSMEM).
source "$(dirname "$0")/common.sh" run15
python3 trace.py ./tr_sk5d.so sk5d 1024 128
for round in 1 2; do
  g small gemm_bf16_sm90_64x64 M=1024,N=1024,K=1024 200 $round
  g sk4d sk4d M=1024,N=1024,K=1024 200 $round
  g sk5d sk5d M=1024,N=1024,K=1024 200 $round
done
for v in "sk4d sk4d" "sk5d sk5d"; do
  set -- $v
  ncu_time $1 $2
done
cd ../.. && for d in gpu_run/sim/sim_rmsnorm*; do case $(basename $d) in *h4096*) k=rmsnorm_bf16_h4096 f=rmsnorm_onepass;; *h1024*) k=rmsnorm_bf16_h1024 f=rmsnorm_onepass;; *) k=rmsnorm_bf16 f=rmsnorm;; esac
  mkdir -p /tmp/rb && gpu_run/pkg/tilescope lower gpu_run/kernels/$f.tile --kernel $k -o /tmp/rb/$k.cu >/dev/null && nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC /tmp/rb/$k.cu -o /tmp/rb/$k.so
  B="python3 codegen/bench.py" bits /tmp/rb/$k.so $k $d rmsnorm Y
done
date -u
