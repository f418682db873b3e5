#!/bin/bash
# `tilescope sim --json --dump` of sampled runs (2 to 4 CTAs: the write
# attribution's regions), both overlap attention kernels and
# gemm_bf16_sm100, for two binaries, and the comparison of
# bench/sim_dump_diff.sh (docs/reward.md, session 21): the runs the reward's
# sizes (bench/sim_dump_reward_sizes.sh) do not cover.
# usage: bench/sim_dump_sampled.sh BEFORE_TILESCOPE AFTER_TILESCOPE WORKDIR
# Run from the repository root; exits 1 when anything differs.
set -u
BEFORE=$1 AFTER=$2 WORK=$3
dump() { # binary outdir
  local bin=$1 out=$2
  rm -rf "$out"
  run() { # name file args...
    mkdir -p "$out/$1"
    nice timeout 300 "$bin" sim "kernels/$2" "${@:3}" --json --dump "$out/$1" > "$out/$1/out.json" 2>&1
  }
  run bf3 gemm_bf16_sm90.tile --args M=300,N=600,K=64 --ctas 3 --seed 3
  run fpg2 gemm_fp8_sm90_grouped.tile --args K=272,M=2048,N=2056,scale=0.452 --ctas 2 --seed 4 \
    --poison big
  run bsg4 gemm_fp8_blockscaled_sm90_grouped.tile --args K=640,KB=5,M=2048,N=1032,NB=9 --ctas 4 \
    --seed 5
  run att attention_fwd_overlap_sm90.tile --kernel attention_fwd_overlap_causal_sm90 \
    --args B=1,H=2,S=328,sm_scale=0.08838834764831845 --seed 6 --ctas all
  run att2 attention_fwd_overlap_sm90.tile --kernel attention_fwd_overlap_sm90 \
    --args B=1,H=2,S=1000,sm_scale=0.08838834764831845 --seed 6 --ctas 3
  run rms2 rmsnorm.tile --args R=300,H=2048,eps=0.001 --ctas 2 --seed 2 --poison random
  run sm100 gemm_bf16_sm100.tile --args M=384,N=256,K=192 --ctas all --seed 9
}
dump "$BEFORE" "$WORK/before"
dump "$AFTER" "$WORK/after"
exec "$(dirname "$0")/sim_dump_diff.sh" "$WORK"
