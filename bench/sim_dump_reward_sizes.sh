#!/bin/bash
# `tilescope sim --json --dump` of every library GEMM at each size the reward
# chooses for it (its small, edge and persistent sizes with their poisons,
# the persistent one on one CTA as the reward samples it), for two binaries,
# and a comparison of every .npy byte and of the JSON without its times, plus
# the reward's own JSON (times aside) at --seed 1 (docs/reward.md, session 19).
# usage: bench/sim_dump_reward_sizes.sh BEFORE_TILESCOPE AFTER_TILESCOPE WORKDIR
# Run from the repository root; exits 1 when anything differs.
set -u
BEFORE=$1 AFTER=$2 WORK=$3
KERNELS='gemm_naive.tile|gemm(A, B -> C)
gemm_bf16_sm90.tile|gemm(A, B^T -> C)
gemm_bf16_sm90_small.tile|gemm(A, B^T -> C)
gemm_bf16_sm90_64x128.tile|gemm(A, B^T -> C)
gemm_bf16_sm100.tile|gemm(A, B^T -> C)
gemm_bf16_sm90_grouped.tile|gemm(A, B^T -> C)
gemm_fp8_sm90.tile|gemm(A, B^T -> C, alpha = scale)
gemm_fp8_sm90_grouped.tile|gemm(A, B^T -> C, alpha = scale)
gemm_fp8_blockscaled_sm90.tile|gemm(A, B^T -> C, scale_a = SA^T, scale_b = SB, block = 128, block_n = 128)
gemm_fp8_blockscaled_sm90_bn192.tile|gemm(A, B^T -> C, scale_a = SA^T, scale_b = SB, block = 128, block_n = 128)
gemm_fp8_blockscaled_sm90_grouped.tile|gemm(A, B^T -> C, scale_a = SA^T, scale_b = SB, block = 128, block_n = 128)'
mkdir -p "$WORK"
dump() { # binary outdir
  local bin=$1 out=$2
  rm -rf "$out"
  mkdir -p "$out"
  while IFS='|' read -r file problem; do
    nice "$bin" reward "kernels/$file" --problem "$problem" --seed 1 --json > "$out/$file.reward.json"
    # The sizes, poisons and CTA counts the reward ran, one run a line.
    python3 -c '
import json, sys
for s in json.load(open(sys.argv[1]))["kernels"][0]["simulated"]:
    print(s["sizes"].replace(" ", ""), s["poison"], "all" if s["ctas"] == "all" else 1, sep="|")
' "$out/$file.reward.json" | while IFS='|' read -r args poison ctas; do
      local d="$out/$file.$poison"
      mkdir -p "$d"
      nice timeout 300 "$bin" sim "kernels/$file" --args "$args" --poison "$poison" --seed 7 \
        --ctas "$ctas" --json --dump "$d" > "$d/out.json" 2>&1
    done
  done <<< "$KERNELS"
}
# REUSE_BEFORE=1 keeps an earlier run's WORK/before (the same BEFORE binary).
[ -n "${REUSE_BEFORE:-}" ] && [ -d "$WORK/before" ] || dump "$BEFORE" "$WORK/before"
dump "$AFTER" "$WORK/after"
exec "$(dirname "$0")/sim_dump_diff.sh" "$WORK"
