#!/bin/bash
# `tilescope sim --json --dump` of the library GEMMs and rmsnorm at the
# reward's sizes and poisons, for two binaries, and a comparison of every
# .npy byte and of the JSON without its times (docs/reward.md, session 15).
# usage: bench/sim_dump_compare.sh BEFORE_TILESCOPE AFTER_TILESCOPE WORKDIR
# Run from the repository root; exits 1 when anything differs.
set -u
BEFORE=$1 AFTER=$2 WORK=$3
dump() { # binary outdir
  local bin=$1 out=$2
  rm -rf "$out"
  run() { # name file args poison seed ctas
    mkdir -p "$out/$1"
    nice timeout 300 "$bin" sim "kernels/$2" --args "$3" --poison "$4" --seed "$5" --ctas "$6" \
      --json --dump "$out/$1" > "$out/$1/out.json" 2>&1
  }
  run fp8 gemm_fp8_sm90.tile M=1,N=8,K=656,scale=0.5 nan 7 all
  run fp8e gemm_fp8_sm90.tile M=67,N=88,K=752,scale=0.3 random 11 all
  run fp8p gemm_fp8_sm90.tile M=16897,N=8,K=272,scale=0.4 big 7 1
  run bs gemm_fp8_blockscaled_sm90.tile M=4,N=8,K=1280,KB=10,NB=1 nan 7 all
  run bse gemm_fp8_blockscaled_sm90.tile M=76,N=88,K=1408,KB=11,NB=1 random 11 all
  run bsp gemm_fp8_blockscaled_sm90.tile M=4,N=16904,K=640,KB=5,NB=133 negbig 7 1
  run bf gemm_bf16_sm90.tile M=67,N=88,K=408 random 7 all
  run bfg gemm_bf16_sm90_grouped.tile M=1024,N=8,K=328 nan 7 all
  run rms rmsnorm.tile R=67,H=2048,eps=0.001 random 7 all
}
dump "$BEFORE" "$WORK/before"
dump "$AFTER" "$WORK/after"
exec "$(dirname "$0")/sim_dump_diff.sh" "$WORK"
