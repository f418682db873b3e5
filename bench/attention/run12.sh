#!/usr/bin/env bash
# helper attn3 (session 16), slot 2: the library causal d128 kernel as merged
# (lib) against its new form (new: the diagonal softmax split by consumer and
# the heads-first longest-first grid) and the 64-row one-consumer kernels at
# two CTAs an SM (q64: K in two stages, V in one; q64v2: K in one, released
# after wait_group(1), V in two), cuDNN and FA2 in one process; the -fmad=false
# bit check of q64v2 against the simulator; ncu of q64v2 and new at S = 1024.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:?}"
log="$out/log.txt"
w=/tmp/attn3-dev
rm -rf "$w"; mkdir -p "$w/bits"
start=$(date +%s)
say() { echo "[$(( $(date +%s) - start )) s] $*" | tee -a "$log"; }
say "$(date -u) $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader)"
NV="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC"
for f in "$here"/*.cu; do
  n=$(basename "$f" .cu)
  timeout 50 $NV -o "$w/$n.so" "$f" > "$w/$n.nvcc.txt" 2>&1 &
done
timeout 50 $NV -fmad=false -o "$w/q64v2bits.so" "$here/q64v2.cu" > "$w/q64v2bits.nvcc.txt" 2>&1 &
wait
say "built: $(ls $w/*.so | xargs -n1 basename | tr '\n' ' ')"
grep -h -i "error" "$w"/*.nvcc.txt | head -10 >> "$log"
T="$here/attention_timing.py"
ATTN_REPS=30 timeout 60 python3 "$here/driver.py" "$w" "$here/plan.txt" < /dev/null 2>&1 | tee -a "$out/timing.jsonl"
say "timing done"
timeout 15 python3 "$T" "$w/q64v2bits.so" attention_fwd_causal_q64v2_sm90 "$here/cases/cq64v2" "$w/bits/h100_cq64v2" < /dev/null 2>&1 | tee -a "$out/bits.jsonl"
say "bits done"
NCU="ncu --clock-control none -k regex:attention_fwd --launch-skip 2 --launch-count 1 --section SpeedOfLight --section SchedulerStats --section Occupancy --section LaunchStats --metrics regex:^smsp__average_warp.*issue_stalled.*,gpu__time_duration.sum,lts__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active"
for kv in 128:1024:q64v2:attention_fwd_causal_q64v2_sm90 128:1024:newlib:attention_fwd_overlap_causal_sm90; do
  IFS=: read d s so k <<< "$kv"
  if [ $(( $(date +%s) - start )) -gt 100 ]; then say "ncu $so skipped (time)"; continue; fi
  ATTN_D=$d timeout 15 $NCU python3 "$here/ncu_one.py" "$w/$so.so" "$k" "$s" < /dev/null > "$w/ncu_$so.txt" 2>&1
  say "ncu $so: exit $?"
  echo "=== $so $k d$d S=$s" >> "$out/ncu.txt"; cat "$w/ncu_$so.txt" >> "$out/ncu.txt"
done
say "done"
