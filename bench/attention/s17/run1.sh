#!/usr/bin/env bash
# helper attn4 (session 17), slot 1 (05:15 UTC): causal d128 at S = 512-2048,
# the library kernel (lib) against its epilogue without shared memory (dst:
# full tiles store O and L from registers), the first loads hoisted before
# __syncthreads (libh, dsth: an edit of the lowered CUDA), and the two-CTA
# 64-row kernels (q64erk, q64dst, q64h, q64dsth, q64dstr: q64dst longest
# first inside a head), cuDNN and FA2 in one process.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:?}"
log="$out/log.txt"
w=/tmp/attn4-dev
rm -rf "$w"; mkdir -p "$w"
start=$(date +%s)
say() { echo "[$(( $(date +%s) - start )) s] $*" | tee -a "$log"; }
say "$(date -u) $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader)"
NV="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC"
for f in "$here"/*.cu; do
  n=$(basename "$f" .cu)
  timeout 60 $NV -o "$w/$n.so" "$f" > "$w/$n.nvcc.txt" 2>&1 &
done
wait
say "built: $(ls $w/*.so | xargs -n1 basename | tr '\n' ' ')"
grep -h -i "error" "$w"/*.nvcc.txt | head -10 >> "$log"
ATTN_REPS=30 timeout 80 python3 "$here/driver.py" "$w" "$here/plan.txt" < /dev/null 2>&1 | tee -a "$out/timing.jsonl"
say "timing done"
