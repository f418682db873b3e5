#!/usr/bin/env bash
# scripts/model/run_gemm9_dev.sh (helper gemm9, session 22): the device half of a GEMM
# timing run. Copy it as run.sh into a folder made by scripts/model/gen_gemm_sweep.sh (the
# lowered NAME.cu files, pairs.txt, points.csv), with scripts/model/gemm_run.py,
# codegen/gpu_harness.py and round3_pairs.txt (pairs.txt reversed: `tac`) beside it; on the
# device: `bash DIR/run.sh` (results in $OUT: log.txt, results.csv, round2.csv, round3.csv,
# summary.txt). nvcc of every NAME.cu in parallel, then gemm_run.py (cold L2, 50 runs
# alternating with cuBLAS in one process, every output checked against fp32), round 1 every
# pair, rounds 2 and 3 again (round 3 in reverse order, so that a shape cut off by a round's
# budget is timed in another), each in its own process; all under `timeout 230`.
# Used for helper gemm9's runs (folder: gen_gemm_sweep.sh build/tools/tilescope
# model/tables/gemm_bf16_sm90_family.h100.json tests/model/gemm9/shapes.txt DIR
# tests/model/gemm9/extra.txt; data tests/model/gemm9/run1..3) and session 22's sweep
# (tests/model/sweep22, docs/perf.md).
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
