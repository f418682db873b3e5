#!/usr/bin/env bash
# helper attn4 (session 17), the 05:50 UTC call (<= 45 s): causal d128, the
# library kernel of main (lib) against this branch's (new: full tiles store O
# and L from registers, no rendezvous, no TMA store), the first loads hoisted
# before __syncthreads (libh, an edit of lib's CUDA), the two-CTA 64-row kernels
# (q64erk, q64dst = q64erk with the register-store epilogue), cuDNN and FA2 in
# one process; then new's O and L at S = 328 (-fmad=false) against the
# simulator's dump, bit for bit.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:?}"
log="$out/log.txt"
w=/tmp/attn4-dev
rm -rf "$w"; mkdir -p "$w"
start=$(date +%s)
say() { echo "[$(( $(date +%s) - start )) s] $*" | tee -a "$log"; }
say "$(date -u) $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader)"
NV="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC"
for n in lib new libh q64erk q64dst; do
  timeout 25 $NV -o "$w/$n.so" "$here/$n.cu" > "$w/$n.nvcc.txt" 2>&1 &
done
timeout 25 $NV -fmad=false -o "$w/newbits.so" "$here/new.cu" > "$w/newbits.nvcc.txt" 2>&1 &
wait
say "built: $(ls $w/*.so | xargs -n1 basename | tr '\n' ' ')"
grep -h -i "error" "$w"/*.nvcc.txt | head -10 >> "$log"
ATTN_REPS=30 timeout 25 python3 "$here/driver.py" "$w" "$here/plan.txt" < /dev/null 2>&1 | tee -a "$out/timing.jsonl"
say "timing done"
timeout 8 python3 "$here/attention_timing.py" "$w/newbits.so" attention_fwd_overlap_causal_sm90 "$here/cases/c328" "$w/newbits" < /dev/null 2>&1 | tee -a "$out/bits.jsonl"
say "done"
