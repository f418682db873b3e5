#!/usr/bin/env bash
# rspeed5 (session 18): issue 14's batch target on an idle host.
# 1,000 mutants of library kernels (bench/reward_batch.py --write-only, seed 14)
# through `tilescope reward --batch`, --jobs 1 and --jobs 2, each pinned to two
# cpus of distinct physical cores (taskset), under /usr/bin/time -v.
# To fit the slot (150 s) the two runs go at the same time on disjoint
# physical cores: --jobs 2 on cpus 2,3 (as asked), --jobs 1 on two other
# cpus that share no core with 2 or 3. A poller keeps each process's peak
# resident memory (VmHWM) per job. Then, if time is left, the 1-job run again
# on cpus 2,3 alone over the first mutants (same cpus as the 2-job run).
# Writes $OUT/log.txt and $OUT/results.json (docs/reward.md, "Session 18").
#
# The folder it runs from (.dev/rspeed5/ on the device) holds this script as
# run.sh, bench/reward_batch_concurrent.py as drive.py, bench/reward_batch.py
# as bench/reward_batch.py with the kernels it mutates (kernels/gemm_naive.tile,
# rmsnorm.tile, rmsnorm_onepass.tile), and pkg.tar.xz (bin/: `scripts/portable`'s
# tilescope and the libraries it lists, `tar -cJf pkg.tar.xz bin/tilescope bin/lib*`).
# RS5_COUNT (drive.py) shortens a trial run on another machine.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:?}"
log="$out/log.txt"
start=$(date +%s)
el() { echo $(($(date +%s) - start)); }
say() { echo "[$(el) s] $*" | tee -a "$log"; }
work=/tmp/rspeed5-dev
rm -rf "$work"; mkdir -p "$work"
say "host: $(nproc) cpus; $(grep -m1 'model name' /proc/cpuinfo); load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u)"
for c in 0 1 2 3 4 5 6 7 8 9 10 11; do
  echo "cpu$c core $(cat /sys/devices/system/cpu/cpu$c/topology/core_id 2>/dev/null) pkg $(cat /sys/devices/system/cpu/cpu$c/topology/physical_package_id 2>/dev/null) siblings $(cat /sys/devices/system/cpu/cpu$c/topology/thread_siblings_list 2>/dev/null)"
done >> "$log"
timeout 40 tar -xJf "$here/pkg.tar.xz" -C "$work" </dev/null || { say "unpack failed"; exit 1; }
export LD_LIBRARY_PATH="$work/bin"
bin="$work/bin/tilescope"
timeout 20 "$bin" reward "$here/kernels/gemm_naive.tile" --problem "gemm(A, B -> C)" --seed 1 \
  </dev/null >"$work/one.json" 2>>"$log"
say "one candidate: exit $? $(head -c 160 "$work/one.json" | tr '\n' ' ')"
timeout 20 python3 "$here/bench/reward_batch.py" "$bin" --count 1000 --work "$work/m" --write-only \
  </dev/null >>"$log" 2>&1
say "mutants: $(wc -l < "$work/m/mutants.jsonl")"
# Run 2 (docs/reward.md, "Session 18"): 1 job on cpus 2,3, 2 jobs on 4,5.
export RS5_JOBS1_CPUS="${RS5_JOBS1_CPUS:-2,3}" RS5_JOBS2_CPUS="${RS5_JOBS2_CPUS:-4,5}"
timeout 135 python3 "$here/drive.py" "$bin" "$work" "$out" </dev/null 2>&1 | tee -a "$log"
say "done"
