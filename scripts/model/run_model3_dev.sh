#!/usr/bin/env bash
# Device side of session 16's re-measurement (helper model3, issue 15): the folder
# comes from `scripts/model/gen_tune_dev.sh --sets scripts/model/s16_points.txt ...`
# with each NAME.cu already built into NAME.so on the CPU machine (nvcc -O3
# -gencode=arch=compute_90a,code=sm_90a -shared, stripped, packed in so.tgz), so the
# device only times: calib.py over every set of sets.txt (SET:REPS, pairs_SET.txt each), in
# two rounds, each a process of its own, the whole under 115 s (a round left
# short keeps the rows it wrote). A missing .so is built here with nvcc.
# Writes $OUT/log.txt, $OUT/round1.csv and $OUT/round2.csv (a line "# SET" before
# each set's rows).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/out}
mkdir -p "$out"
log=$out/log.txt
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
{ date -u; timeout 20 nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } >"$log" 2>&1 </dev/null
work=$(mktemp -d)
cp "$here"/*.cu "$here"/points.csv "$work"/
tar xzf "$here/so.tgz" -C "$work" 2>>"$log"
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
for f in "$work"/*.cu; do
  b=${f%.cu}
  [ -f "$b.so" ] && continue
  echo "building $(basename "$f") here" >>"$log"
  timeout 40 "$nvcc" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared \
    -Xcompiler -fPIC "$f" -o "$b.so" >/dev/null 2>&1 </dev/null &
done
wait
echo "built at $(elapsed) s" >>"$log"
rounds=${ROUNDS:-2} budget=${BUDGET:-115} sleep=${SLEEP_CYCLES:-0}
for r in $(seq 1 "$rounds"); do
  res=$out/round$r.csv
  : >"$res"
  for part in $(grep -v '^#' "$here/sets.txt"); do
    set=${part%%:*} reps=${part#*:}
    left=$(( budget - $(elapsed) ))
    if [ "$left" -lt 8 ]; then
      echo "round $r: skipped $set, no time left" >>"$log"
      continue
    fi
    timeout "$left" python3 "$here/calib.py" "$work" "$here/shapes.txt" "$out/part.csv" \
      --pairs "$here/pairs_$set.txt" --reps "$reps" --sleep-cycles "$sleep" </dev/null >>"$log.tmp" 2>&1
    echo "round $r: calib.py ($set) exit $? at $(elapsed) s" >>"$log"
    echo "# $set" >>"$res"
    cat "$out/part.csv" >>"$res" 2>>"$log"
    rm -f "$out/part.csv"
  done
done
grep -v '^shape ' "$log.tmp" | tail -20 >>"$log"
rm -f "$log.tmp"
echo "done at $(elapsed) s" >>"$log"
