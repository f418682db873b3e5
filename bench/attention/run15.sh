#!/usr/bin/env bash
# helper attn5 (session 18), slot 08:25 UTC (<= 145 s): causal d128, the
# library kernel (lib) against the two-CTA 64-row kernels (q64erk; q64rx =
# q64erk with each head's query blocks longest first; q64hf = q64erk launched
# heads first), cuDNN and FA2 (torch
# SDPA backends) in one process, S = 512-2048 (1536: where the 64-row form
# stops paying), median of 30, L2 flushed before every call.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:?}"
log="$out/log.txt"
w=/tmp/attn5-dev
rm -rf "$w"; mkdir -p "$w"
start=$(date +%s)
say() { echo "[$(( $(date +%s) - start )) s] $*" | tee -a "$log"; }
say "$(date -u) $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader)"
NV="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC"
for f in "$here"/*.cu; do
  n=$(basename "$f" .cu)
  timeout 50 $NV -Xptxas -v -o "$w/$n.so" "$f" > "$w/$n.nvcc.txt" 2>&1 &
done
wait
say "built: $(ls $w/*.so | xargs -n1 basename | tr '\n' ' ')"
grep -h -i "error\|registers\|spill" "$w"/*.nvcc.txt | grep -v "0 bytes spill" | head -20 >> "$log"
ATTN_REPS=30 timeout 80 python3 "$here/driver.py" "$w" "$here/plan.txt" < /dev/null 2>&1 | tee -a "$out/timing.jsonl"
say "timing done"
