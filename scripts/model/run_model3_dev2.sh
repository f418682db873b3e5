#!/usr/bin/env bash
# Helper model3's second device run (session 16), under 115 s in all:
#   1. gemm/: the folder of run_model3_dev.sh (29 prebuilt GEMM points, 598 pairs)
#      once more, one round, with a GPU sleep of 1e6 cycles before each timed
#      call (calib.py --sleep-cycles): the first run shared the machine's CPUs
#      with a 16-way lit job and some rows carry host delays; 50 s at most.
#   2. rms/: bench/rmsnorm/s16 (bench_rms2.py, the sweep phase at the near-1.0
#      RMSNorm shapes), 50 s deadline.
# Writes $OUT/log.txt, $OUT/round1.csv (gemm), $OUT/rms/log.txt, $OUT/rms/results.json.
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/out}
mkdir -p "$out/rms"
OUT=$out ROUNDS=1 BUDGET=50 SLEEP_CYCLES=1000000 bash "$here/gemm/run.sh"
{ date -u; timeout 15 nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem \
    --format=csv; } </dev/null >>"$out/rms/log.txt" 2>&1
timeout 62 python3 "$here/rms/bench_rms2.py" "$here/rms" "$out/rms" 50 </dev/null >>"$out/rms/log.txt" 2>&1
echo "rms exit $? $(date -u)" >>"$out/log.txt"
