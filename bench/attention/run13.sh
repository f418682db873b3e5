#!/usr/bin/env bash
# helper attn3 (session 16), slot 3: the library causal d128 kernel as merged
# (lib) against its new form (new) and the two-CTA 64-row kernels (q64; q64erk:
# K's stage released after wait_group(1)), cuDNN and FA2 in one process, S =
# 512-2048 with repeats (run 12's baselines ran slow: repeats to see the spread).
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:?}"
log="$out/log.txt"
w=/tmp/attn3-dev
rm -rf "$w"; mkdir -p "$w"
start=$(date +%s)
say() { echo "[$(( $(date +%s) - start )) s] $*" | tee -a "$log"; }
say "$(date -u) $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader)"
NV="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC"
for f in "$here"/*.cu; do
  n=$(basename "$f" .cu)
  timeout 50 $NV -o "$w/$n.so" "$f" > "$w/$n.nvcc.txt" 2>&1 &
done
wait
say "built: $(ls $w/*.so | xargs -n1 basename | tr '\n' ' ')"
grep -h -i "error" "$w"/*.nvcc.txt | head -10 >> "$log"
ATTN_REPS=30 timeout 70 python3 "$here/driver.py" "$w" "$here/plan.txt" < /dev/null 2>&1 | tee -a "$out/timing.jsonl"
say "timing done"
