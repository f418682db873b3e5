#!/usr/bin/env bash
# .dev/gemm9/run.sh (helper gemm9, session 22): times the GEMM family's new
# points (x09..x35, every one `proved`: BN not a multiple of 64, BM = 256, BM = 192)
# against the H100 table's point at the same shape (s00..s08) and cuBLAS, at
# the 12 sweep shapes where cuBLAS runs such tiles. The folder was made by
#   scripts/model/gen_gemm_sweep.sh build/tools/tilescope \
#     model/tables/gemm_bf16_sm90_family.h100.json .dev/gemm9/shapes.txt DIR .dev/gemm9/extra.txt
# (points.csv names each point; pairs.txt the (point, shape) pairs). As
# scripts/model/run_gemm5_dev.sh: nvcc of every NAME.cu in parallel, then
# gemm_run.py (codegen/gpu_harness.py: cold L2, 50 runs alternating with
# cuBLAS in one process, every output checked against fp32), round 1 every
# pair, rounds 2 and 3 again (round 3 in reverse order, so that a shape cut off
# by a round's budget is timed in another), each in its own process; all under
# `timeout 230`.
# Run from the repository root on the device: bash .dev/gemm9/run.sh
# (results in $OUT: log.txt, results.csv, round2.csv, round3.csv, summary.txt).
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/out}
mkdir -p "$out"
timeout 230 bash -c '
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
left=$(( 110 - ($(date +%s) - start) ))
timeout "$left" python3 "$here/gemm_run.py" "$work" "$here/pairs.txt" "$out/results.csv" \
  --reps 50 --budget $(( left - 10 )) >>"$out/log.txt" 2>&1
echo "round 1 exit $? at $(( $(date +%s) - start )) s" >>"$out/log.txt"
left=$(( 165 - ($(date +%s) - start) ))
[ "$left" -gt 15 ] && timeout "$left" python3 "$here/gemm_run.py" "$work" "$here/pairs.txt" \
  "$out/round2.csv" --reps 50 --budget $(( left - 10 )) >>"$out/log.txt" 2>&1
echo "round 2 exit $? at $(( $(date +%s) - start )) s" >>"$out/log.txt"
left=$(( 220 - ($(date +%s) - start) ))
[ "$left" -gt 15 ] && timeout "$left" python3 "$here/gemm_run.py" "$work" "$here/round3_pairs.txt" \
  "$out/round3.csv" --reps 50 --budget $(( left - 10 )) >>"$out/log.txt" 2>&1
echo "round 3 exit $? at $(( $(date +%s) - start )) s" >>"$out/log.txt"
' run "$here" "$out"
# Per pair: the point, and cuBLAS / ours in each round (ok: output checked).
python3 - "$here/points.csv" "$out" >"$out/summary.txt" 2>&1 <<'PY'
import csv, os, sys
points = {r["name"]: r["point"] for r in csv.DictReader(open(sys.argv[1]))}
rounds = []
for f in ("results.csv", "round2.csv", "round3.csv"):
    p = os.path.join(sys.argv[2], f)
    rounds.append({(r["name"], f'{r["M"]}x{r["N"]}x{r["K"]}'): r for r in csv.DictReader(open(p))} if os.path.exists(p) else {})
keys = []
for rd in rounds:
    keys += [k for k in rd if k not in keys]
print("name,shape,point,us,cublas_us,ratio_r1,ratio_r2,ratio_r3,ok")
for k in keys:
    r = next(rd[k] for rd in rounds if k in rd)
    ratios = [rd[k]["ratio"] if k in rd else "" for rd in rounds]
    print(f'{k[0]},{k[1]},"{points.get(k[0], "")}",{r["us"]},{r["cublas_us"]},{",".join(ratios)},{r["ok"]}')
PY
cat "$out/summary.txt"
