#!/usr/bin/env bash
# Issue 14's batch target: `tilescope reward --batch` on 2 pinned cores (two
# different physical cores: cpu 0 and the first cpu that is not its SMT
# sibling) with 1 job and then 2 jobs on the same mutants of the library
# kernels (bench/reward_batch.py, seed 14); then 16 jobs for information if
# time is left. Every step under `timeout`, all in the foreground; the whole
# run stays under 180 s. Writes $OUT/reward/log.txt and results.json.
#
# The folder it runs from (.dev/reward/ on the device) holds this script as
# run.sh, bench/device_common.sh as device_common.sh (the preamble it
# sources), pkg.tar.xz (bin/: `scripts/portable`'s tilescope and libraries,
# packed with `tar -cJf pkg.tar.xz bin`), bench/reward_batch.py and the three
# kernels it mutates (kernels/gemm_naive.tile, rmsnorm.tile,
# rmsnorm_onepass.tile). docs/reward.md, "Throughput", has its results.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Defines out, log, say, elapsed, work, cores, bin (device_common.sh).
. "$here/device_common.sh" reward
timeout 20 "$bin/tilescope" reward "$here/kernels/gemm_naive.tile" --problem "gemm(A, B -> C)" \
  --seed 1 < /dev/null > "$work/one.json" 2>> "$log"
say "one candidate: exit $? $(head -c 200 "$work/one.json" | tr '\n' ' ')"
# Calibrate: the first 60 mutants with 1 and then 2 jobs on the pinned cores
# (a speedup of its own, should the main run not finish).
timeout 40 taskset -c "$cores" python3 "$here/bench/reward_batch.py" "$bin/tilescope" --count 60 \
  --jobs 2 --work "$work/cal" --json "$work/cal.json" < /dev/null >> "$log" 2>&1
rc=$?
per_ms=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs'][0]; print(int(1000*r['wall_s']/r['count']))" "$work/cal.json" 2>/dev/null || echo 200)
say "calibration: exit $rc, $per_ms ms a candidate with 1 job"
# The largest count (at most 1000) whose 1-job + 2-job runs fit in the time
# left (2 x the 1-job time: later mutants cost more than the first 60).
left=$(( 180 - $(elapsed) - 20 ))
count=$(( left * 1000 / (per_ms * 2 + 1) / 10 * 10 ))
[ "$count" -gt 1000 ] && count=1000
[ "$count" -lt 30 ] && count=30
say "main run: $count candidates, 1 job then 2 jobs, taskset -c $cores"
timeout "$left" taskset -c "$cores" python3 "$here/bench/reward_batch.py" "$bin/tilescope" \
  --count "$count" --jobs 2 --work "$work/main" --json "$out/results.json" < /dev/null >> "$log" 2>&1
say "main run: exit $?"
left=$(( 180 - $(elapsed) - 5 ))
if [ "$left" -gt 12 ] && [ -f "$work/main/mutants.jsonl" ]; then
  t0=$(date +%s%N)
  timeout "$left" "$bin/tilescope" reward --batch "$work/main/mutants.jsonl" \
    -o "$work/out16.jsonl" --jobs 16 < /dev/null 2>> "$log"
  rc=$?
  t1=$(date +%s%N)
  say "16 jobs on all cpus: exit $rc, $(wc -l < "$work/out16.jsonl") results in $(( (t1 - t0) / 1000000 )) ms"
fi
say "done"
