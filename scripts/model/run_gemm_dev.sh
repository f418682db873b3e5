#!/usr/bin/env bash
# helper gemm, device run 2: builds the lowered GEMM points of this folder
# (NAME.cu, from `tilescope lower`) with nvcc in parallel, then times them
# against cuBLAS, cold L2, alternating (gemm_run.py, codegen/gpu_harness.py's
# timing): round 1 every (NAME, shape) pair of pairs.txt (the tuning table's
# sweep, alternatives, controls), round 2 the sweep pairs again (a second
# process).
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/out}
mkdir -p "$out"
work=$(mktemp -d)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
start=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } >"$out/log.txt" 2>&1
for f in "$here"/*.cu; do
  b=$(basename "${f%.cu}")
  timeout 70 "$nvcc" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared \
    -Xcompiler -fPIC "$f" -o "$work/$b.so" >"$work/$b.nvcc.log" 2>&1 </dev/null &
done
wait
for f in "$here"/*.cu; do
  b=$(basename "${f%.cu}")
  [ -f "$work/$b.so" ] || { echo "nvcc FAILED $b"; tail -3 "$work/$b.nvcc.log"; } >>"$out/log.txt"
done
echo "nvcc done at $(( $(date +%s) - start )) s" >>"$out/log.txt"
left=$(( 75 - ($(date +%s) - start) ))
timeout "$left" python3 "$here/gemm_run.py" "$work" "$here/pairs.txt" "$out/results.csv" \
  --reps 50 --budget $(( left - 8 )) >>"$out/log.txt" 2>&1
echo "round 1 exit $? at $(( $(date +%s) - start )) s" >>"$out/log.txt"
left=$(( 114 - ($(date +%s) - start) ))
[ "$left" -gt 15 ] && timeout "$left" python3 "$here/gemm_run.py" "$work" "$here/sweep_pairs.txt" \
  "$out/sweep2.csv" --reps 50 --budget $(( left - 8 )) >>"$out/log.txt" 2>&1
echo "round 2 exit $? at $(( $(date +%s) - start )) s" >>"$out/log.txt"
