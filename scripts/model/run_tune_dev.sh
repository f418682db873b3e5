#!/usr/bin/env bash
# Device side of scripts/model/gen_tune_dev.sh (issue 15), copied as run.sh
# into the device folder with split_costs.cu, calib.py, codegen/gpu_harness.py,
# shapes.txt and what gen_tune_dev.sh wrote; run from the repository root as
# `bash .dev/NAME/run.sh`. In order, everything sequential, each step under
# `timeout`, the whole under 180 s:
#   1. split_costs.cu (DSMEM rates, cluster barrier, active clusters) -> log,
#      when the folder has it
#   2. nvcc of each point (skipped past 100 s)
#   3. calib.py: the table's points at the sweep shapes (20 cold-L2 runs
#      alternating with cuBLAS), the split-K points (20, a process of their
#      own: a fault there cannot take the others' rows), then the accuracy
#      set (10 runs), each while time is left; a file sets.txt in the folder
#      (lines SET:REPS, pairs_SET.txt each) replaces that list
# Writes $OUT/NAME/log.txt and $OUT/NAME/results.csv (a section "# SET" a
# set).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
name=$(basename "$here")
out=${OUT:-/tmp/out}/$name
mkdir -p "$out"
log=$out/log.txt
res=$out/results.csv
work=$(mktemp -d)
cp "$here"/*.cu "$here"/points.csv "$work"/
rm -f "$work/split_costs.cu"
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
start=$(date +%s)
left() { echo $((170 - ($(date +%s) - start))); }
echo "start $(date -u)" >"$log"
timeout 20 nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >>"$log" 2>&1 </dev/null
if [ ! -f "$here/split_costs.cu" ]; then
  echo "no split_costs.cu: microbenchmark skipped" >>"$log"
elif timeout 60 "$nvcc" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a \
    "$here/split_costs.cu" -o "$work/split_costs" >>"$log" 2>&1 </dev/null; then
  timeout 30 "$work/split_costs" >>"$log" 2>&1 </dev/null
  echo "split_costs exit $? at $(( $(date +%s) - start )) s" >>"$log"
else
  echo "nvcc FAILED split_costs.cu" >>"$log"
fi
for f in "$work"/*.cu; do
  b=${f%.cu}
  if [ $(( $(date +%s) - start )) -gt 100 ]; then
    echo "skipped $(basename "$f"): past 100 s" >>"$log"
    continue
  fi
  if timeout 40 "$nvcc" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared \
      -Xcompiler -fPIC "$f" -o "$b.so" >"$b.nvcc.log" 2>&1 </dev/null; then
    echo "nvcc ok $(basename "$f") at $(( $(date +%s) - start )) s" >>"$log"
  else
    echo "nvcc FAILED $(basename "$f")" >>"$log"
    tail -5 "$b.nvcc.log" >>"$log"
  fi
done
: >"$res"
parts="sweep:20 split:20 acc:10"
if [ -f "$here/sets.txt" ]; then
  parts=$(grep -v '^#' "$here/sets.txt")
fi
for part in $parts; do
  set=${part%%:*} reps=${part#*:}
  t=$(left)
  if [ "$t" -lt 8 ]; then
    echo "skipped $set: no time left" >>"$log"
    continue
  fi
  timeout "$t" python3 "$here/calib.py" "$work" "$here/shapes.txt" "$work/$set.csv" \
    --pairs "$here/pairs_$set.txt" --reps "$reps" </dev/null >>"$log" 2>&1
  echo "calib.py ($set) exit $? at $(( $(date +%s) - start )) s" >>"$log"
  echo "# $set" >>"$res"
  cat "$work/$set.csv" >>"$res" 2>>"$log"
done
echo "done at $(( $(date +%s) - start )) s" >>"$log"
tail -30 "$log"
