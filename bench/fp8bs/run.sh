#!/bin/bash
# Helper fp8 (issue 18, part 2): block-scaled FP8 GEMM variants against the
# library's gemm_fp8_blockscaled_sm90_bn192 and torch._scaled_mm, and the
# per-tensor gemm_fp8_sm90_grouped against torch._scaled_mm, in one process
# per size. The .cu files were lowered on the CPU machine (tilescope lower);
# built here with nvcc in parallel. Everything under `timeout`: <= 2 minutes.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:?}"
log="$out/log.txt"
work=/tmp/fp8-dev
rm -rf "$work"
mkdir -p "$work"
start=$(date +%s)
say() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$log"; }
say "$(date -u) $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader)"
say "nvcc: $(nvcc --version | tail -2 | head -1); torch: $(python3 -c 'import torch; print(torch.__version__)')"
# name:kernel:kind
specs=$(cat "$here/specs.txt")
for spec in $specs; do
  n=${spec%%:*}
  (timeout 75 nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC \
     -Xptxas -v "$here/$n.cu" -o "$work/$n.so" >"$work/$n.nvcc.txt" 2>&1 </dev/null
   echo "rc=$?" >>"$work/$n.nvcc.txt") &
done
wait
for spec in $specs; do
  n=${spec%%:*}
  say "nvcc $n: $(grep -E 'registers|spill' "$work/$n.nvcc.txt" | tr -s ' ' | tr '\n' ' ') $(tail -1 "$work/$n.nvcc.txt")"
done
args=""
for spec in $specs; do
  n=${spec%%:*}
  rest=${spec#*:}
  [ -f "$work/$n.so" ] && args="$args $n=$work/$n.so:$rest"
done
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 250 >"$out/clocks.csv" 2>&1 </dev/null &
smi=$!
export PYTHONPATH="$here:$here/../../codegen"
for size_reps in 8192:50 4096:50 8192:50; do
  size=${size_reps%%:*}
  reps=${size_reps#*:}
  say "size $size reps $reps"
  timeout 40 python3 "$here/fp8time.py" "$size" "$reps" $args </dev/null >>"$out/times.jsonl" 2>>"$log"
  say "rc=$?"
  [ $(($(date +%s) - start)) -gt 95 ] && break
done
kill "$smi" 2>/dev/null
python3 - "$out/times.jsonl" <<'PY' | tee -a "$log"
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if "size" not in d:
        print(d)
        continue
    bits = [v for k, v in d.items() if k.startswith("same_bits")]
    print(f'{d["size"]:5d} {d["fn"]:14s} {d["tflops"]:7.1f} TF/s  {d["ms"]:.4f} ms '
          f'[{d["ms_min"]:.4f} {d["ms_q1"]:.4f} {d["ms_q3"]:.4f} {d["ms_max"]:.4f}] '
          f'err {d["rel_err"]:.4e} unwritten {d["unwritten"]} same_bits {bits}')
PY
# ncu of the first launch of the library kernel under both lowerings (ncu
# locks the SM clock at its base unless told otherwise).
if [ $(($(date +%s) - start)) -lt 70 ] && [ -f "$work/bn192.so" ] && [ -f "$work/bn192d.so" ]; then
  say "ncu"
  timeout 35 ncu --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    -k regex:gemm_fp8_blockscaled -c 2 python3 "$here/fp8time.py" 8192 1 \
    "bn192=$work/bn192.so:gemm_fp8_blockscaled_sm90_bn192:bs" \
    "bn192d=$work/bn192d.so:gemm_fp8_blockscaled_sm90_bn192:bs" </dev/null >"$out/ncu.txt" 2>&1
  say "ncu rc=$?"
fi
# Other library kernels under the new address form: correct on the GPU, and
# their speed next to their baselines (codegen/bench.py, one process each).
if [ $(($(date +%s) - start)) -lt 75 ]; then
  for x in "bf16g gemm_bf16_sm90_grouped M=4096,N=4096,K=4096 gemm_abt 20" \
           "attn attention_fwd_overlap_sm90 B=1,H=16,S=2048 attention 10" \
           "rms rmsnorm_bf16 R=16384,H=4096 rmsnorm 20"; do
    set -- $x
    (timeout 60 nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC \
       "$here/$1.cu" -o "$work/$1.so" >"$work/$1.nvcc.txt" 2>&1 </dev/null) &
  done
  wait
  for x in "bf16g gemm_bf16_sm90_grouped M=4096,N=4096,K=4096 gemm_abt 20" \
           "attn attention_fwd_overlap_sm90 B=1,H=16,S=2048 attention 10" \
           "rms rmsnorm_bf16 R=16384,H=4096 rmsnorm 20"; do
    set -- $x
    [ $(($(date +%s) - start)) -gt 105 ] && break
    timeout 25 python3 "$here/../../codegen/bench.py" --lib "$work/$1.so" --kernel "$2" --args "$3" \
      --ref "$4" --reps "$5" </dev/null >>"$out/others.jsonl" 2>>"$log"
    say "bench $1 rc=$?"
  done
fi
# SASS: an opcode histogram of each kernel (the consumer's main loop is most of
# it), and the whole SASS of the library kernel and of the first variant.
if [ $(($(date +%s) - start)) -lt 105 ]; then
  for spec in $specs; do
    n=${spec%%:*}
    [ -f "$work/$n.so" ] || continue
    timeout 10 cuobjdump -sass "$work/$n.so" >"$work/$n.sass" 2>&1 </dev/null
    echo "== $n: $(grep -cE '^ +/\*[0-9a-f]+\*/' "$work/$n.sass") instructions" >>"$out/sass.txt"
    grep -oE '^ +/\*[0-9a-f]+\*/ +(@!?U?P[0-9T] +)?[A-Z0-9_]+(\.[A-Za-z0-9_]+)*' "$work/$n.sass" |
      awk '{print $NF}' | sort | uniq -c | sort -rn | head -40 >>"$out/sass.txt"
  done
  : # (the whole SASS is not kept this run: at most 6 files)
fi
say "done"
