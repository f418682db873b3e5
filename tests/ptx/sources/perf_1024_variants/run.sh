#!/usr/bin/env bash
# issue 19 item 7 (ptx2), run 2: the library's RMSNorm 1024x1024 and GEMM
# 1024^3 kernels and their variants, timed with codegen/bench.py (bench.py and gpu_harness.py
# here) against Triton (RMSNorm) and cuBLAS (GEMM), two alternating rounds.
# The .cu files were lowered on the CPU machine (`tilescope lower`); the
# *_hint.cu files are hand-made cache-hint variants of lowered ones.
# Results: $OUT/ptx2/results.jsonl and $OUT/ptx2/log.txt.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dst="$OUT/ptx2"; mkdir -p "$dst"
log="$dst/log.txt"; R="$dst/results.jsonl"
say() { echo "$@" | tee -a "$log"; }
export PYTHONUNBUFFERED=1
say "start $(date -u)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader >> "$log" 2>&1
nvcc --version | tail -1 >> "$log"
so=/tmp/ptx2so; mkdir -p $so
pids=()
for f in "$here"/*.cu; do
  n=$(basename "$f" .cu)
  timeout 90 nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC "$f" -o $so/$n.so > $so/$n.log 2>&1 < /dev/null
  say "built $n rc=$? $(date -u +%T)"
done
say "built: $(ls $so/*.so | wc -l) libraries $(date -u)"
for f in $so/*.log; do [ -s "$f" ] && { say "--- $f"; head -c 400 "$f" >> "$log"; }; done
rms() { # FILE KERNEL
  say "--- rms $1 $2 $(date -u +%T)"
  timeout 40 python3 "$here/bench.py" --lib $so/$1.so --kernel $2 --args R=1024,H=1024 --scalars eps=1e-6 --ref rmsnorm --reps 300 2>> "$log" | sed "s/^/{\"variant\": \"$1\", \"r\": /; s/\$/}/" >> "$R"
}
gemm() { # FILE KERNEL
  say "--- gemm $1 $2 $(date -u +%T)"
  timeout 40 python3 "$here/bench.py" --lib $so/$1.so --kernel $2 --args M=1024,N=1024,K=1024 --ref gemm_abt --reps 300 2>> "$log" | sed "s/^/{\"variant\": \"$1\", \"r\": /; s/\$/}/" >> "$R"
}
for round in 1 2; do
  rms rms_lib rmsnorm_bf16_h1024
  rms rms_t32 rmsnorm_bf16_h1024_t32
  rms rms_t64 rmsnorm_bf16_h1024_t64
  rms rms_t256 rmsnorm_bf16_h1024_t256
  rms rms_lib_hint rmsnorm_bf16_h1024
  rms rms_t32_hint rmsnorm_bf16_h1024_t32
  rms rms_t64_hint rmsnorm_bf16_h1024_t64
  gemm gemm64x128 gemm_bf16_sm90_64x128
  gemm gemm_mc gemm_bf16_sm90_64x128_mc
  gemm gemm_mc4 gemm_bf16_sm90_64x128_mc4
done
say "end $(date -u)"
