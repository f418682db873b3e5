#!/usr/bin/env bash
# scripts/model/run_gemm5_dev.sh, copied as run.sh into a folder made by
# scripts/model/gen_gemm_sweep.sh (with gemm_run.py and codegen/gpu_harness.py;
# helper gemm5, session 18). On the device: nvcc of the lowered GEMM points of this
# folder (NAME.cu from `tilescope lower`, every one proved) in parallel, then
# gemm_run.py (codegen/gpu_harness.py's timing: cold L2, 50 runs alternating
# with cuBLAS, every output checked against fp32): round 1 every pair of
# pairs.txt, round 2 those of round2_pairs.txt (if there, else pairs.txt) in a second
# process, round 3 those of round3_pairs.txt (if there) in a third. All of it under `timeout 230`.
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/out}
mkdir -p "$out"
exec timeout 230 bash -c '
here=$1 out=$2
work=$(mktemp -d)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
start=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; nproc; } >"$out/log.txt" 2>&1
for f in "$here"/*.cu; do
  b=$(basename "${f%.cu}")
  timeout 100 "$nvcc" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared \
    -Xcompiler -fPIC "$f" -o "$work/$b.so" >"$work/$b.nvcc.log" 2>&1 </dev/null &
done
wait
for f in "$here"/*.cu; do
  b=$(basename "${f%.cu}")
  [ -f "$work/$b.so" ] || { echo "nvcc FAILED $b"; tail -3 "$work/$b.nvcc.log"; } >>"$out/log.txt"
done
echo "nvcc done at $(( $(date +%s) - start )) s" >>"$out/log.txt"
left=$(( 155 - ($(date +%s) - start) ))
timeout "$left" python3 "$here/gemm_run.py" "$work" "$here/pairs.txt" "$out/results.csv" \
  --reps 50 --budget $(( left - 10 )) >>"$out/log.txt" 2>&1
echo "round 1 exit $? at $(( $(date +%s) - start )) s" >>"$out/log.txt"
r2=$here/pairs.txt; [ -f "$here/round2_pairs.txt" ] && r2=$here/round2_pairs.txt
end2=225; [ -f "$here/round3_pairs.txt" ] && end2=190
left=$(( end2 - ($(date +%s) - start) ))
[ "$left" -gt 15 ] && timeout "$left" python3 "$here/gemm_run.py" "$work" "$r2" \
  "$out/round2.csv" --reps 50 --budget $(( left - 10 )) >>"$out/log.txt" 2>&1
echo "round 2 exit $? at $(( $(date +%s) - start )) s" >>"$out/log.txt"
if [ -f "$here/round3_pairs.txt" ]; then
  left=$(( 225 - ($(date +%s) - start) ))
  [ "$left" -gt 15 ] && timeout "$left" python3 "$here/gemm_run.py" "$work" "$here/round3_pairs.txt" \
    "$out/round3.csv" --reps 50 --budget $(( left - 10 )) >>"$out/log.txt" 2>&1
  echo "round 3 exit $? at $(( $(date +%s) - start )) s" >>"$out/log.txt"
fi
' run "$here" "$out"
