#!/usr/bin/env bash
# Session 16's re-fit of the performance model (issue 15, docs/model.md
# "Re-measured with today's lowering"), fixed before the data came back:
#   scripts/model/s16_fit.sh TILESCOPE DATA.csv OUTDIR
# DATA.csv: the rows of one device run (scripts/model/run_model3_dev.sh, joined by
# rounds_to_calib.py). The split is session 11's: the 16 held-out shapes below;
# the other shapes (the 10 table centres of the sweep and the 8 alignment
# neighbours) train. Nine numbers are fitted (the eight of session 11's second
# fit and n256, which session 15 re-fitted), starting from the shipped machine.
# Writes OUTDIR/before.txt (shipped machine: held out, training), OUTDIR/fit.txt,
# OUTDIR/fitted.json and OUTDIR/after.txt (fitted machine: held out, training).
set -euo pipefail
ts=$1 data=$2 out=$3
family=$(cd "$(dirname "$0")/../.." && pwd)/kernels/gemm_bf16_sm90_family.tile
mkdir -p "$out"
held=1536x1536x1536,3072x3072x3072,5120x5120x5120,6144x6144x6144,8192x8192x8192,8192x512x4096,512x8192x4096,16384x1024x2048,1024x16384x2048,512x512x8192,1024x1024x16384,256x2048x8192,2048x512x16384,4104x2056x1032,8192x8192x1024,16384x16384x1024
train=512x512x512,1024x1024x1024,2048x2048x2048,4096x4096x4096,4096x8192x1024,512x512x4096,3000x5000x2000,1000x3000x7000,2000x6000x3000,5000x1000x4000,4096x2048x1024,4096x2048x1032,4104x2056x1024,2000x6000x3008,2000x6000x2992,1000x3000x7040,5000x1000x4032,3000x5000x2048
keys=misaligned_pitch16_factor,dram_exposed_fraction,wgmma_efficiency_n192,wgmma_efficiency_n256,epilogue_cycles,launch_us,l2_to_smem_tb_s,load_latency_cycles,wgmma_drain_cycles
accuracy() { # MACHINE_ARGS... -> held out, then training
  "$ts" calibrate "$family" --data "$data" --test-shapes "$held" "$@"
  "$ts" calibrate "$family" --data "$data" --test-shapes "$train" "$@"
}
accuracy >"$out/before.txt"
"$ts" calibrate "$family" --data "$data" --test-shapes "$held" --fit "$keys" \
  -o "$out/fitted.json" >"$out/fit.txt"
accuracy --machine "$out/fitted.json" >"$out/after.txt"
grep -h "shapes:" "$out/before.txt" "$out/after.txt"
