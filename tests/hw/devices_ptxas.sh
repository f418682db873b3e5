#!/bin/sh
# CI check of the device-scale lowering and runtime (docs/scales.md): the
# library's collectives lowered by `tilescope lower` compile with the
# benchmark for sm_90a through ptxas, and the PTX holds the scoped operations
# docs/scales.md promises (a signal is fence.acq_rel.sys + a relaxed
# system-scope store, a wait an acquire system-scope load).
# usage: devices_ptxas.sh NVCC SOURCE_ROOT WORKDIR TILESCOPE
set -eu
nvcc=$1 root=$2 work=$3 tilescope=$4
mkdir -p "$work"
src=$root/bench/devscale/devscale_bench.cu
"$tilescope" lower "$root/kernels/allreduce_bf16.tile" -o "$work/lowered.cu"
flags="-std=c++17 -O3 -arch=sm_90a -I $root/codegen/runtime -I $work -DTS_LOWERED=\"lowered.cu\""
"$nvcc" $flags -ptx "$src" -o "$work/devices.ptx"
"$nvcc" $flags -cubin "$src" -o "$work/devices.cubin"
for want in '.entry allreduce_one_shot_bf16(' '.entry allreduce_two_shot_bf16(' \
  '.entry all_gather_bf16(' '.entry reduce_scatter_bf16(' \
  'fence.acq_rel.sys;' 'st.relaxed.sys.global.u32' 'ld.acquire.sys.global.u32' \
  'ld.global.cg.v4.u32' '.entry _ZN6ts_dev20allreduceOneShotBf16' \
  '.entry _ZN6ts_dev20allreduceTwoShotBf16' '.entry _ZN6ts_dev17reduceScatterBf16' \
  '.entry _ZN6ts_dev13allGatherBf16'; do
  if ! grep -q -F "$want" "$work/devices.ptx"; then
    echo "devices_ptxas: '$want' is missing from the PTX" >&2
    exit 1
  fi
done
# a weaker scope on the flags would be a bug: no .gpu-scope flag operations
if grep -q -E 'st\.(release|relaxed)\.gpu|ld\.acquire\.gpu' "$work/devices.ptx"; then
  echo "devices_ptxas: a flag operation has .gpu scope" >&2
  exit 1
fi
echo "devices_ptxas: ok"
