#!/usr/bin/env bash
# Issue 14's section 5 targets on the GPU host's idle CPUs, in one run of
# under 180 s (docs/reward.md, "Throughput", has the results):
#  1. bench/bench_reward (staticReward and fullReward of every library GEMM)
#     of two builds, pinned to one core (taskset -c 0), alternately twice:
#     bench_reward_main (main's tree) and bench_reward_new (this branch);
#  2. 1,000 mutants (bench/reward_batch.py, seed 14) with `tilescope reward
#     --batch`, 1 job and then 2 jobs, pinned to two different physical
#     cores (cpu 0 and the first cpu that is not its SMT sibling).
# Every step under `timeout`, all in the foreground. Writes
# $OUT/rperf/log.txt (progress and the benchmarks' tables) and
# $OUT/rperf/results.json (reward_batch.py's figures).
#
# The folder it runs from (.dev/rperf/ on the device) holds this script as
# run.sh, bench/device_common.sh as device_common.sh (the preamble it
# sources), pkg.tar.xz (bin/: this branch's tilescope, the two bench_reward
# binaries, stripped, linked with -DTILESCOPE_PORTABLE=ON, and the shared
# libraries the GPU image lacks: libz3, libfmt, libbenchmark, cpp-httplib and
# brotli), bench/reward_batch.py and the kernels it mutates
# (kernels/gemm_naive.tile, rmsnorm.tile, rmsnorm_onepass.tile).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Defines out, log, say, elapsed, work, cores, bin (device_common.sh).
. "$here/device_common.sh" rperf
# RPERF_FILTER and RPERF_COUNT shorten a trial run on another machine.
filter="${RPERF_FILTER:-staticReward|fullReward/gemm}"
count="${RPERF_COUNT:-1000}"
for round in 1 2; do
  for which in main new; do
    say "round $round: bench_reward_$which, taskset -c 0"
    timeout 20 taskset -c 0 "$bin/bench_reward_$which" --benchmark_filter="$filter" \
      --benchmark_min_time=0.5 </dev/null >>"$log" 2>&1
    say "bench_reward_$which: exit $?"
  done
done
left=$((178 - $(elapsed)))
say "batch: $count mutants, 1 job then 2 jobs, taskset -c $cores, ${left} s left"
timeout "$left" taskset -c "$cores" python3 "$here/bench/reward_batch.py" "$bin/tilescope" \
  --count "$count" --jobs 2 --work "$work/batch" --json "$out/results.json" </dev/null >>"$log" 2>&1
say "batch: exit $?"
say "done"
