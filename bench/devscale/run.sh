#!/bin/bash
# The device-scale hardware run (issues 20 and 21), from the repository root:
#   bash bench/devscale/run.sh        (or a flat copy: bash .dev/devscale/run.sh)
# Times the library's collectives as `tilescope lower kernels/allreduce_bf16.tile`
# emits them (lowered here when $TILESCOPE names a tilescope binary, else the
# pre-lowered copy lowered_collectives.cu beside this script), then the
# runtime's own persistent kernels, against NCCL through torch.distributed,
# and the TP GEMM (cuBLAS) with either allreduce against cuBLAS then NCCL.
# Uses every visible GPU (nvidia-smi -L): with G >= 2 GPUs, G ranks, one per
# GPU; with one GPU, N = 1 and two processes on the same GPU through IPC
# (correctness only: two contexts time-slice one GPU). Writes under
# $OUT/devscale/: tilescope.jsonl, nccl.jsonl, sim_vs_hw.jsonl, table.csv, log.txt.
# The fused TP GEMM (kernels/tp_gemm_bf16_sm90.tile, lowered_tp_gemm.cu) runs
# with the TP rows, checked on every output against float64 after its first
# call and after the timed calls, and against the simulator's dumps
# (n<G>_dev<r>_*, n<G>_tp_dev<r>_*, n<G>_tp64_dev<r>_* beside this script,
# written by sim_dumps.sh for G ranks) bit for bit on every rank.
set -u
here=$(cd "$(dirname "$0")" && pwd)
runtime=$here
[ -f "$runtime/ts_devices.cuh" ] || runtime=$here/../../codegen/runtime
out=${OUT:-/tmp/out}/${DEVSCALE_OUT:-devscale}
mkdir -p "$out"
log=$out/log.txt
exec > >(tee -a "$log") 2>&1
ngpu=$(nvidia-smi -L | grep -c '^GPU')
echo "== $(date -u) $ngpu GPU(s)"; nvidia-smi -L; nvidia-smi topo -m 2>/dev/null | head -12
lowered=$here/lowered_collectives.cu tp=$here/lowered_tp_gemm.cu
if [ -n "${TILESCOPE:-}" ] && [ -x "$TILESCOPE" ]; then
  mkdir -p /tmp/ts_lowered
  "$TILESCOPE" lower "$here/../../kernels/allreduce_bf16.tile" -o /tmp/ts_lowered/collectives.cu &&
    lowered=/tmp/ts_lowered/collectives.cu
  "$TILESCOPE" lower "$here/../../kernels/tp_gemm_bf16_sm90.tile" -o /tmp/ts_lowered/tp.cu &&
    tp=/tmp/ts_lowered/tp.cu
fi
echo "== lowered library kernels: $lowered $tp"
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
bin=/tmp/devscale_bench
# compute_90a: the fused TP GEMM uses wgmma and setmaxnreg
"$nvcc" -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I "$runtime" \
  -I "$(dirname "$lowered")" -I "$(dirname "$tp")" -DTS_LOWERED="\"$(basename "$lowered")\"" \
  -DTS_LOWERED_TP="\"$(basename "$tp")\"" -o $bin "$here/devscale_bench.cu" -lcublas \
  2> /tmp/devscale_ptxas.txt || { cat /tmp/devscale_ptxas.txt; echo "nvcc failed"; exit 1; }
grep -A2 "entry function 'tp_gemm" /tmp/devscale_ptxas.txt
grep C7510 /tmp/devscale_ptxas.txt && { echo "ptxas serialized a wgmma pipeline"; status=1; }
shapes=8192x8192x8192,128x8192x8192,256x8192x8192
echo "== correctness: every rank draws fresh inputs per size (seed, rank), poisons its outputs"
echo "   with bf16 NaN before the checked calls, and checks every output element against the"
echo "   bf16 rounding of the float64 sum after the first call and after the timed calls;"
echo "   the TP GEMM output on 48 sampled elements against float64 (cuBLAS rounding tolerance)."
echo "   sim_vs_hw: the lowered allreduces and fused TP GEMMs on the simulator's inputs"
echo "   (sim_dumps.sh: n<G>_*.npy here) must give the simulator's output bits on every rank."
status=${status:-0}
run() { # name, seconds, command...
  local name=$1 secs=$2; shift 2
  local t0=$SECONDS
  timeout "$secs" "$@"; local rc=$?
  echo "== $name: exit $rc, $((SECONDS - t0)) s"
  [ $rc -eq 0 ] || status=1
}
if [ "$ngpu" -ge 2 ] && [ -f "$here/n${ngpu}_dev0_X.npy" ]; then
  run "simulator = hardware, $ngpu ranks" 60 $bin --ranks "$ngpu" --lowered --sim-compare "$here" --sim-tp "$here" --sizes-mib "" > "$out/sim_vs_hw.jsonl"
  cat "$out/sim_vs_hw.jsonl"
fi
if [ "$ngpu" -ge 2 ]; then
  run "tilescope lowered, $ngpu ranks" 150 $bin --ranks "$ngpu" --lowered --fused --tp $shapes > "$out/tilescope.jsonl"
  # DEVSCALE_SKIP_RUNTIME=1: only the lowered kernels (a shorter run)
  [ -n "${DEVSCALE_SKIP_RUNTIME:-}" ] ||
    run "tilescope runtime, $ngpu ranks" 120 $bin --ranks "$ngpu" --tp $shapes >> "$out/tilescope.jsonl"
  run "nccl $ngpu ranks" 150 python3 "$here/nccl_bench.py" --ranks "$ngpu" --tp $shapes > "$out/nccl.jsonl"
else
  run "tilescope lowered, 1 rank" 100 $bin --ranks 1 --lowered --fused --tp $shapes > "$out/tilescope.jsonl"
  run "tilescope lowered, 2 ranks on 1 GPU" 90 $bin --ranks 2 --lowered --sizes-mib 1,4 --iters 3 >> "$out/tilescope.jsonl"
  run "nccl 1 rank" 100 python3 "$here/nccl_bench.py" --ranks 1 --tp $shapes > "$out/nccl.jsonl"
fi
python3 "$here/summarize.py" "$out/tilescope.jsonl" "$out/nccl.jsonl" > "$out/table.csv"
cat "$out/table.csv"
echo "== status $status"
exit $status
