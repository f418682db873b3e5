#!/usr/bin/env bash
# Issue 14's batch target: `tilescope reward --batch` on 2 pinned cores (two
# different physical cores: cpu 0 and the first cpu that is not its SMT
# sibling) with 1 job and then 2 jobs on the same mutants of the library
# kernels (bench/reward_batch.py, seed 14); then 16 jobs for information if
# time is left. Every step under `timeout`, all in the foreground; the whole
# run stays under 180 s. Writes $OUT/reward/log.txt and results.json.
#
# The folder it runs from (.dev/reward/ on the device) holds this script as
# run.sh, pkg.tar.xz (bin/: `scripts/portable`'s tilescope and libraries,
# packed with `tar -cJf pkg.tar.xz bin`), bench/reward_batch.py and the three
# kernels it mutates (kernels/gemm_naive.tile, rmsnorm.tile,
# rmsnorm_onepass.tile). docs/reward.md, "Throughput", has its results.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:?}/reward"
mkdir -p "$out"
log="$out/log.txt"
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
say() { echo "[$(elapsed) s] $*" | tee -a "$log"; }
work=/tmp/reward-dev
rm -rf "$work"
mkdir -p "$work"
say "host: $(nproc) cpus; $(grep -m1 'model name' /proc/cpuinfo); load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u)"
sib0=$(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2>/dev/null || echo 0)
say "cpu0 siblings: $sib0; cpu1 siblings: $(cat /sys/devices/system/cpu/cpu1/topology/thread_siblings_list 2>/dev/null); $(lscpu 2>/dev/null | grep -E '^(Thread|Core|Socket)' | tr -s ' ' | tr '\n' ';')"
second=$(python3 - "$sib0" "$(nproc)" <<'PY'
import sys
sib = set()
for part in sys.argv[1].split(","):
    a, _, b = part.partition("-")
    sib.update(range(int(a), int(b or a) + 1))
print(next((c for c in range(1, int(sys.argv[2])) if c not in sib), 1))
PY
)
cores="0,$second"
say "pinned cores: $cores"
timeout 40 tar -xJf "$here/pkg.tar.xz" -C "$work" < /dev/null || { say "unpack failed"; exit 1; }
bin="$work/bin"
export LD_LIBRARY_PATH="$bin"
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
