#!/usr/bin/env bash
# helper attn5 (session 18), slot 2 (~09:00 UTC, <= 145 s): causal d128, the
# shipped choice: `tilescope lower kernels/attention_fwd_causal_family_sm90.tile
# --auto --args B=16,H=16,S=1024` (the table's q64 point, fam64.cu) and
# `--args B=8,H=16,S=2048` (q128, fam128.cu), each at the S its table entry
# covers, against the library kernel of main (lib), cuDNN and FA2 (torch SDPA
# backends) in one process, median of 30, L2 flushed before every call; then
# fam64's O and L at S = 328 (-fmad=false) against the simulator's dump
# (`tilescope sim ... --set q64 --args B=1,H=2,S=328,sm_scale=0.0884.. --seed 6
# --ctas all --dump`), bit for bit.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:?}"
log="$out/log.txt"
w=/tmp/attn5-dev
rm -rf "$w"; mkdir -p "$w"
start=$(date +%s)
say() { echo "[$(( $(date +%s) - start )) s] $*" | tee -a "$log"; }
say "$(date -u) $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | head -1)"
NV="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC"
for n in lib fam64 fam128; do
  timeout 50 $NV -Xptxas -v -o "$w/$n.so" "$here/$n.cu" > "$w/$n.nvcc.txt" 2>&1 &
done
timeout 50 $NV -fmad=false -o "$w/fam64bits.so" "$here/fam64.cu" > "$w/fam64bits.nvcc.txt" 2>&1 &
wait
say "built: $(ls $w/*.so | xargs -n1 basename | tr '\n' ' ')"
grep -h -i "error\|registers\|spill" "$w"/*.nvcc.txt | grep -v "0 bytes spill" | head -20 >> "$log"
ATTN_REPS=30 timeout 70 python3 "$here/driver.py" "$w" "$here/plan.txt" < /dev/null 2>&1 | tee -a "$out/timing.jsonl"
say "timing done"
timeout 15 python3 "$here/attention_timing.py" "$w/fam64bits.so" attention_fwd_causal_family_sm90 "$here/cases/c328" "$w/fam64bits" < /dev/null 2>&1 | tee -a "$out/bits.jsonl"
say "done"
