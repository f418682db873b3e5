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
# the fused GEMMs as one module (one copy of the emitter's prelude)
cat "$root/kernels/tp_gemm_bf16_sm90.tile" "$root/kernels/allgather_gemm_bf16_sm90.tile" \
  > "$work/gemms.tile"
"$tilescope" lower "$work/gemms.tile" -o "$work/lowered_tp.cu"
flags="-std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I $root/codegen/runtime -I $work"
flags="$flags -DTS_LOWERED=\"lowered.cu\" -DTS_LOWERED_TP=\"lowered_tp.cu\" -DTS_LOWERED_AG"
"$nvcc" $flags -ptx "$src" -o "$work/devices.ptx"
"$nvcc" $flags -cubin -Xptxas -v "$src" -o "$work/devices.cubin" 2> "$work/ptxas.txt"
# The fused TP GEMM: its wgmma pipeline not serialized (no function call in
# the kernel: C7510), no spills or stack frame (its communication warp runs
# under setmaxnreg.dec).
if grep -q C7510 "$work/ptxas.txt"; then
  echo "devices_ptxas: ptxas serialized a wgmma pipeline:" >&2
  grep C7510 "$work/ptxas.txt" >&2
  exit 1
fi
for fused in tp_gemm_allreduce_bf16_sm90 tp_gemm_allreduce_bf16_sm90_64x128 \
  allgather_gemm_bf16_sm90; do
  tp=$(grep -A2 "entry function '$fused'" "$work/ptxas.txt" | tail -1)
  case "$tp" in
  *"0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"*) ;;
  *)
    echo "devices_ptxas: the fused kernel $fused spills or has a stack frame: $tp" >&2
    exit 1
    ;;
  esac
done
for want in '.entry allreduce_one_shot_bf16(' '.entry allreduce_two_shot_bf16(' \
  '.entry all_gather_bf16(' '.entry reduce_scatter_bf16(' '.entry allreduce_bf16(' \
  '.entry allgather_gemm_bf16_sm90(' \
  'fence.acq_rel.sys;' 'st.relaxed.sys.global.u32' 'ld.acquire.sys.global.u32' \
  'ld.global.cg.v4.u32' '.entry _ZN6ts_dev20allreduceOneShotBf16' \
  '.entry _ZN6ts_dev20allreduceTwoShotBf16' '.entry _ZN6ts_dev17reduceScatterBf16' \
  '.entry _ZN6ts_dev13allGatherBf16' '.entry tp_gemm_allreduce_bf16_sm90(' \
  'setmaxnreg.dec.sync.aligned.u32 72' 'wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16' \
  'cp.async.bulk.tensor.2d.global.shared::cta' 'cp.async.bulk.wait_group 0;'; do
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
