#!/usr/bin/env bash
# Device side of the machine microbenchmarks (docs/model.md "Machine data"):
# copied as run.sh with microbench.cu and wgmma.h into a device folder
# (.dev/NAME/) and run from the repository root as `bash .dev/NAME/run.sh`.
# Builds microbench.cu with nvcc (sm_90a) and runs it (its stderr: a `key
# value` line a figure, kept if it faults later); everything under
# `timeout`, the whole under 150 s (the caller guards it: timeout 150). Writes $OUT/NAME/: microbench.json (the
# program's JSON with the card as nvidia-smi names it, its driver and clocks
# added), smi.txt (nvidia-smi -q -d CLOCK,POWER before and after), log.txt.
# MICROBENCH_ARGS=l2share runs only the L2 sharing cases (docs/model.md).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
name=$(basename "$here")
out=${OUT:-/tmp/out}/$name
mkdir -p "$out"
log=$out/log.txt
start=$(date +%s)
say() { echo "[$(( $(date +%s) - start )) s] $*" | tee -a "$log"; }
say "start $(date -u)"
smi="timeout 10 nvidia-smi"
$smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,clocks.sm,power.limit \
  --format=csv,noheader </dev/null >"$out/card.csv" 2>>"$log"
say "card: $(cat "$out/card.csv")"
$smi -q -d CLOCK,POWER </dev/null >"$out/smi.txt" 2>&1
work=$(mktemp -d)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if ! timeout 40 "$nvcc" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a \
    -I"$here" "$here/microbench.cu" -o "$work/microbench" >>"$log" 2>&1 </dev/null; then
  say "nvcc FAILED"
  exit 1
fi
say "built"
timeout 40 "$work/microbench" ${MICROBENCH_ARGS:-} >"$work/raw.json" 2>"$work/fields.txt" </dev/null
say "microbench exit $?"
cat "$work/fields.txt" >>"$log"
echo "=== after" >>"$out/smi.txt"
$smi -q -d CLOCK,POWER </dev/null >>"$out/smi.txt" 2>&1
python3 - "$work/fields.txt" "$out/card.csv" "$out/microbench.json" <<'PY' >>"$log" 2>&1
import json, sys
# One "key value" line a figure (the program's stderr: what it measured before
# a fault or a timeout is kept).
raw = {}
for line in open(sys.argv[1]):
    key, _, value = line.strip().partition(" ")
    if not key or not value or key in ("error",):
        continue
    try:
        raw[key] = float(value)
    except ValueError:
        raw[key] = value
card = [c.strip() for c in open(sys.argv[2]).read().split(",")]
keys = ["smi_name", "driver", "smi_max_sm_clock", "smi_max_mem_clock", "smi_sm_clock",
        "smi_power_limit"]
raw.update(dict(zip(keys, card)))
json.dump(raw, open(sys.argv[3], "w"), indent=1, sort_keys=True)
print("wrote", sys.argv[3])
PY
say "done"
