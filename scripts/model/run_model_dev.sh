#!/usr/bin/env bash
# (Copied from .dev/model/run.sh of session 15; the folder held pts/mNN.cu lowered from
# scripts/model/model_run1_points.txt (BM,BN,STAGES,CONSUMERS,ORDER,PERSISTENT; SPLIT=1) by
# `tilescope instantiate` + `tilescope lower --allow-unknown`, names in pts/points.csv, and
# shapes.txt = scripts/model/model_run1_shapes.txt.)
# helper model, device run: 11 lowered points of kernels/gemm_bf16_sm90_family.tile
# (pts/mNN.cu, names in pts/points.csv: 128x192 / 128x256 / 128x128, persistent
# or one CTA a tile, row / column / grouped order) at 4 shapes (shapes.txt),
# timed against cuBLAS by scripts/model/calib.py (cold L2, alternating), two
# rounds in two processes: does the persistent point lose to the one-CTA-a-tile
# point at 1536^3, and does the tile order matter at 3072^3 / 16384x1024x2048
# beyond run-to-run noise? Everything bounded by `timeout` (under 2 minutes).
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${OUT:-/tmp/out}
mkdir -p "$out"
work=$(mktemp -d)
cp "$here"/pts/* "$work"/
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
start=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } >"$out/log.txt" 2>&1
for f in "$work"/*.cu; do
  timeout 60 "$nvcc" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared \
    -Xcompiler -fPIC "$f" -o "${f%.cu}.so" >"${f%.cu}.nvcc.log" 2>&1 </dev/null &
done
wait
for f in "$work"/*.cu; do
  [ -f "${f%.cu}.so" ] || { echo "nvcc FAILED $f"; tail -3 "${f%.cu}.nvcc.log"; } >>"$out/log.txt"
done
echo "nvcc done at $(( $(date +%s) - start )) s" >>"$out/log.txt"
for r in 1 2; do
  left=$(( (r == 1 ? 85 : 115) - ($(date +%s) - start) ))
  [ "$left" -gt 5 ] || break
  timeout "$left" python3 "$root/scripts/model/calib.py" "$work" "$here/shapes.txt" \
    "$out/round$r.csv" --reps 20 >>"$out/log.txt" 2>&1
  echo "round $r exit $? at $(( $(date +%s) - start )) s" >>"$out/log.txt"
done
