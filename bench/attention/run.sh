#!/usr/bin/env bash
# helper attn2 (session 15): attention d128 variants at small S against the
# library kernels, cuDNN and FA2 in the same process. Run from the repo root.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:?}"
log="$out/log.txt"
w=/tmp/attn2-dev
rm -rf "$w"; mkdir -p "$w"
start=$(date +%s)
say() { echo "[$(( $(date +%s) - start )) s] $*" | tee -a "$log"; }
say "$(date -u) $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader)"
for f in "$here"/*.cu; do
  n=$(basename "$f" .cu)
  timeout 35 nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC \
    -o "$w/$n.so" "$f" > "$w/$n.nvcc.txt" 2>&1 &
done
wait
say "built: $(ls $w/*.so | xargs -n1 basename | tr '\n' ' ')"
T="$here/attention_timing.py"
if [ -f "$here/plan.sh" ]; then . "$here/plan.sh"; fi
say "done"
