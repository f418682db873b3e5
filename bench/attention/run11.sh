#!/usr/bin/env bash
# helper attn3 (session 16), slot 1: causal d128 variants at small S (the
# diagonal softmax split by consumer, the diagonal block first, heads-first
# longest-first launch order) against the library kernel, cuDNN and FA2 in one
# process; a 64-row one-consumer form launched two CTAs an SM (q64); d64 non-causal session-14 kernel vs the peeled one vs session-14
# padded to the peeled one's shared memory; the -fmad=false bit check of the
# diagonal-first kernel against the simulator; ncu of two launches.
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
timeout 50 $NV -fmad=false -o "$w/revbits.so" "$here/rev.cu" > "$w/revbits.nvcc.txt" 2>&1 &
timeout 50 $NV -fmad=false -o "$w/q64bits.so" "$here/q64.cu" > "$w/q64bits.nvcc.txt" 2>&1 &
wait
say "built: $(ls $w/*.so | xargs -n1 basename | tr '\n' ' ')"
cat "$w"/*.nvcc.txt | grep -v '^$' | head -20 >> "$log"
T="$here/attention_timing.py"
ATTN_REPS=30 timeout 65 python3 "$here/driver.py" "$w" "$here/plan.txt" < /dev/null 2>&1 | tee -a "$out/timing.jsonl"
say "timing done"
for ck in crev:rev crev1k:rev cq64:q64; do
  c=${ck%%:*}; k=${ck#*:}
  timeout 15 python3 "$T" "$w/${k}bits.so" attention_fwd_causal_${k}_sm90 "$here/cases/$c" "$w/bits/h100_$c" < /dev/null 2>&1 | tee -a "$out/bits.jsonl"
done
tar czf "$out/gpu-bits.tgz" -C "$w/bits" . 2>> "$log"
say "bits done"
NCU="ncu --clock-control none -k regex:attention_fwd --launch-skip 2 --launch-count 1 --section SpeedOfLight --section SchedulerStats --section Occupancy --section LaunchStats --metrics regex:^smsp__average_warp.*issue_stalled.*,gpu__time_duration.sum,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum,sm__cycles_active.avg"
for kv in 128:1024:lib:attention_fwd_overlap_causal_sm90 128:1024:q64:attention_fwd_causal_q64_sm90 64:8192:base64:attention_fwd_overlap_d64_sm90 64:8192:lib64:attention_fwd_overlap_d64_sm90; do
  IFS=: read d s so k <<< "$kv"
  if [ $(( $(date +%s) - start )) -gt 105 ]; then say "ncu $so skipped (time)"; continue; fi
  ATTN_D=$d timeout 20 $NCU python3 "$here/ncu_one.py" "$w/$so.so" "$k" "$s" < /dev/null > "$w/ncu_$so.txt" 2>&1
  say "ncu $so: exit $?"
  echo "=== $so $k d$d S=$s" >> "$out/ncu.txt"; cat "$w/ncu_$so.txt" >> "$out/ncu.txt"
done
say "done"
