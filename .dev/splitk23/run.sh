#!/usr/bin/env bash
# .dev/splitk23/run.sh (helper splitk23, session 23, issue 15): the device half of a GEMM
# timing run, scripts/model/run_gemm9_dev.sh with this folder's summary. The folder is made
# on the dev box by prep.sh (lowered NAME.cu files, pairs.txt, points.csv, round3_pairs.txt,
# gemm_run.py, gpu_harness.py; tilescope is not needed here). On an H100 with nvcc, cuBLAS
# and PyTorch: `bash .dev/splitk23/run.sh` (results in $OUT: log.txt, results.csv,
# round2.csv, round3.csv, summary.txt). nvcc of every NAME.cu in parallel (ptxas spill lines
# in log.txt), then gemm_run.py (cold L2, 50 runs alternating with cuBLAS in one process,
# every output checked against fp32: ok = every element written and relative error < 1e-2;
# rel_err_cublas against cuBLAS's output), round 1 every pair, rounds 2 and 3 again (round
# 3 in reverse order), each in its own process; all under `timeout 230`.
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
  timeout 100 "$nvcc" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xptxas -v \
    -Xcompiler -fPIC "$f" -o "$work/$b.so" >"$work/$b.nvcc.log" 2>&1 </dev/null &
done
wait
for f in "$here"/*.cu; do
  b=$(basename "${f%.cu}")
  [ -f "$work/$b.so" ] || { echo "nvcc FAILED $b"; tail -3 "$work/$b.nvcc.log"; } >>"$out/log.txt"
  echo "$b: $(grep -E "spill stores" "$work/$b.nvcc.log" | sort -u | tr "\n" " ")" >>"$out/log.txt"
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
# Per shape, each pair: the point, ours and cuBLAS (round 1, us, median of 50), cuBLAS /
# ours in each round and their median, ok (checked against fp32), error against cuBLAS.
python3 - "$here/points.csv" "$out" >"$out/summary.txt" 2>&1 <<'PY'
import csv, os, statistics, sys
points = {r["name"]: r["point"] for r in csv.DictReader(open(sys.argv[1]))}
rounds = []
for f in ("results.csv", "round2.csv", "round3.csv"):
    p = os.path.join(sys.argv[2], f)
    rounds.append({(r["name"], f'{r["M"]}x{r["N"]}x{r["K"]}'): r for r in csv.DictReader(open(p))} if os.path.exists(p) else {})
keys = []
for rd in rounds:
    keys += [k for k in rd if k not in keys]
keys.sort(key=lambda k: (k[1], k[0][0] != "s", k[0]))
print("shape,name,point,us,cublas_us,ratio_r1,ratio_r2,ratio_r3,ratio_median,ok,rel_err_fp32,rel_err_cublas")
for k in keys:
    r = next(rd[k] for rd in rounds if k in rd)
    ratios = [rd[k]["ratio"] if k in rd else "" for rd in rounds]
    vals = [float(x) for x in ratios if x]
    med = f"{statistics.median(vals):.3f}" if vals else ""
    oks = all(rd[k]["ok"] == "True" for rd in rounds if k in rd)
    print(f'{k[1]},{k[0]},"{points.get(k[0], "")}",{r["us"]},{r["cublas_us"]},{",".join(ratios)},{med},{oks},{r["rel_err"]},{r.get("rel_err_cublas", "")}')
PY
cat "$out/summary.txt"
