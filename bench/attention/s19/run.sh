#!/usr/bin/env bash
# helper attn6 (session 19): one device slot, <= 150 s. Builds every *.cu beside this
# script (nvcc, sm_90a), times plan.txt with bench/attention's driver (s17/driver.py: torch
# SDPA cuDNN and flash (FA2) in the same process, rotating order, L2 flushed before every
# call, median of ATTN_REPS), then runs ncu on each line of ncu.txt,
# `LABEL SO|cudnn|flash KERNEL S causal|full` (a kernel of ours: -k KERNEL, the third launch;
# a backend: the one call between cudaProfilerStart and Stop), one launch, text details.
# Copied as .dev/attn6/ with driver.py, attention_timing.py, ncu_one.py, plan.txt, ncu.txt
# (and bits.txt with cases/).
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:?}"
log="$out/log.txt"
w=/tmp/attn6-dev
rm -rf "$w"; mkdir -p "$w"
start=$(date +%s)
say() { echo "[$(( $(date +%s) - start )) s] $*" | tee -a "$log"; }
say "$(date -u) $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | head -1)"
NV="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC"
for f in "$here"/*.cu; do
  n=$(basename "$f" .cu)
  timeout 40 $NV -Xptxas -v -o "$w/$n.so" "$f" > "$w/$n.nvcc.txt" 2>&1 &
done
# bits.txt (optional): `CU KERNEL CASE` lines, a -fmad=false build of CU whose O and L on
# CASE (a `tilescope sim --dump` folder beside this script, with its args file) are
# compared bit for bit with the simulator's (attention_timing.py's case mode).
bits=()
if [[ -f $here/bits.txt ]]; then
  while read -r cu kernel case; do
    [[ -z $cu || $cu == \#* ]] && continue
    timeout 40 $NV -fmad=false -o "$w/bits_$cu.so" "$here/$cu.cu" > "$w/bits_$cu.nvcc" 2>&1 &
    bits+=("$w/bits_$cu.so" "$kernel" "$here/cases/$case" "$w/bits_$cu")
  done < "$here/bits.txt"
fi
wait
say "built: $(ls $w/*.so | xargs -n1 basename | tr '\n' ' ')"
for f in "$w"/*.nvcc.txt; do
  echo "$(basename "$f" .nvcc.txt): $(grep -h -i "error\|registers\|spill\|serializ" "$f" | grep -v "0 bytes spill" | tr '\n' ' ')" >> "$log"
done
# The SASS of every kernel (an opcode histogram each in sass.txt).
cuobjdump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
for s in "$w"/*.so; do
  n=$(basename "$s" .so)
  [[ $n == bits_* ]] && continue
  timeout 10 "$cuobjdump" -sass "$s" > "$w/$n.sass" 2>&1
  echo "== $n: $(grep -c '/\*[0-9a-f]*\*/' "$w/$n.sass") instructions"
  grep -oP '/\*[0-9a-f]{4,6}\*/\s+(@!?U?P[T0-9]\s+)?\K[A-Z][A-Z0-9_]*' "$w/$n.sass" | sort | uniq -c | sort -rn | head -40
done > "$out/sass.txt"
# (listings only of the kernels ncu.txt names, to keep $OUT small)
tar czf "$out/sass.tgz" -C "$w" $(awk '$2 ~ /\.so$/ {sub(/\.so$/, ".sass", $2); print $2}' "$here/ncu.txt")
say "sass done"
ATTN_REPS=30 timeout 40 python3 "$here/driver.py" "$w" "$here/plan.txt" < /dev/null 2>&1 | tee -a "$out/timing.jsonl"
say "timing done"
if (( ${#bits[@]} )); then
  timeout 20 python3 "$here/attention_timing.py" "${bits[@]}" < /dev/null 2>&1 | tee -a "$out/timing.jsonl"
  say "bits done"
fi
# ncu-extra.txt (optional): more ncu arguments on one line (e.g. --metrics regex:...).
extra=()
[[ -f $here/ncu-extra.txt ]] && read -ra extra < "$here/ncu-extra.txt"
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
 --section SchedulerStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis"
while read -r label so kernel S mode; do
  [[ -z $label || $label == \#* ]] && continue
  case $so in
    cudnn|flash) sel=(--profile-from-start off --launch-count 2) ;;
    *) sel=(-k "regex:$kernel" --launch-skip 2 --launch-count 1); so="$w/$so" ;;
  esac
  timeout 32 ncu --clock-control none --print-summary none "${sel[@]}" $sections "${extra[@]}" \
    python3 "$here/ncu_one.py" "$so" "$kernel" "$S" "$mode" < /dev/null > "$w/ncu_$label.txt" 2>&1
  say "ncu $label ($so $kernel S = $S $mode): exit $?"
  { echo "===== ncu $label: $so $kernel S = $S $mode"; cat "$w/ncu_$label.txt"; } >> "$out/ncu.txt"
done < "$here/ncu.txt"
say "done"
