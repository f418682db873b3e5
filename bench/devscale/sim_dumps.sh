#!/bin/bash
# The simulator's inputs and outputs that bench/devscale/run.sh compares the
# hardware with, bit for bit, on every rank (docs/scales.md):
#   bash bench/devscale/sim_dumps.sh TILESCOPE DEST N...
# writes, for each device count N, DEST/n<N>_dev<r>_{X,Y}.npy (the two-shot
# allreduce), n<N>_tp_dev<r>_{A,B,C}.npy (the fused TP GEMM) and
# n<N>_tp64_dev<r>_{A,B,C}.npy (the 64x128 decode TP GEMM) and
# n<N>_ag_dev<r>_{A,B,C}.npy (the all-gather GEMM), r < N. The sizes are
# small: the device folder that carries them has a few MiB.
set -eu
ts=$1 dest=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$dest"
for n in "$@"; do
  "$ts" sim "$root/kernels/allreduce_bf16.tile" --kernel allreduce_two_shot_bf16 \
    --args E=16384,N=$n --seed 11 --dump "$tmp/ar$n"
  "$ts" sim "$root/kernels/tp_gemm_bf16_sm90.tile" --kernel tp_gemm_allreduce_bf16_sm90 \
    --args M=256,N=256,KD=72,D=$n --seed 7 --dump "$tmp/tp$n"
  "$ts" sim "$root/kernels/tp_gemm_bf16_sm90.tile" --kernel tp_gemm_allreduce_bf16_sm90_64x128 \
    --args M=128,N=256,KD=200,D=$n --seed 9 --dump "$tmp/tp64$n"
  "$ts" sim "$root/kernels/allgather_gemm_bf16_sm90.tile" \
    --args M=$((64 * n)),MD=64,N=256,K=128,D=$n --seed 13 --dump "$tmp/ag$n"
  for ((r = 0; r < n; ++r)); do
    for t in X Y; do cp "$tmp/ar$n/dev$r/$t.npy" "$dest/n${n}_dev${r}_$t.npy"; done
    for t in A B C; do
      cp "$tmp/tp$n/dev$r/$t.npy" "$dest/n${n}_tp_dev${r}_$t.npy"
      cp "$tmp/tp64$n/dev$r/$t.npy" "$dest/n${n}_tp64_dev${r}_$t.npy"
      cp "$tmp/ag$n/dev$r/$t.npy" "$dest/n${n}_ag_dev${r}_$t.npy"
    done
  done
done
