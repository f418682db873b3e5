#!/bin/bash
# Makes the flat folder that bench/devscale/run.sh runs from on a GPU machine
# without tilescope (docs/scales.md, "Lowering and the runtime"):
#   bash bench/devscale/prepare.sh TILESCOPE DEST
# DEST gets the benchmark's sources, the runtime header, the library's
# device-scale kernels as `tilescope lower` emits them (generated here, never
# kept in the repository): lowered_collectives.cu (kernels/allreduce_bf16.tile)
# and lowered_gemms.cu (the fused TP GEMMs and the all-gather GEMM lowered as
# one module, so that the benchmark includes one copy of the emitter's
# prelude), and the simulator's dumps for 2 and 4 ranks (sim_dumps.sh).
set -eu
ts=$1 dest=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$dest"
"$ts" lower "$root/kernels/allreduce_bf16.tile" -o "$dest/lowered_collectives.cu"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat "$root/kernels/tp_gemm_bf16_sm90.tile" "$root/kernels/allgather_gemm_bf16_sm90.tile" \
  > "$tmp/gemms.tile"
"$ts" lower "$tmp/gemms.tile" -o "$dest/lowered_gemms.cu"
cp "$here/run.sh" "$here/devscale_bench.cu" "$here/allgather_gemm.cuh" "$here/nccl_bench.py" \
  "$here/summarize.py" "$root/codegen/runtime/ts_devices.cuh" "$dest/"
bash "$here/sim_dumps.sh" "$ts" "$dest" 2 4
