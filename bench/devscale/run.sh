#!/bin/bash
# The device-scale hardware run (issues 20 and 21), from a flat folder that
# bench/devscale/prepare.sh made (the GPU machine has no tilescope):
#   bash bench/devscale/prepare.sh build/tools/tilescope DIR   (here, on the CPU)
#   bash DIR/run.sh                                          (on the GPU machine)
# Uses every visible GPU (G = nvidia-smi -L): G ranks, one per GPU, through
# CUDA IPC; with one GPU, 2 processes on it (correctness only). Measures, all
# checked against float64 on every rank:
#   - allreduce (bf16, 256 KiB, 1, 8, 32, 128 MiB per rank): the lowered
#     one_shot and two_shot kernels and the allreduce without impl (its
#     launcher picks by G and size) against NCCL (torch.distributed);
#   - the fused TP GEMM (8192^3 and 128 x 8192 x 8192, K split over the
#     ranks) against cuBLAS then NCCL allreduce;
#   - the fused all-gather GEMM (8192 x (8192 / G) x 8192: 8192 gathered
#     rows, a column shard per rank) against NCCL all_gather then cuBLAS;
#   - simulator = hardware bit for bit on every rank (the n<G>_*.npy dumps).
# Every step runs in the foreground under `timeout`; progress goes to
# $OUT/${DEVSCALE_OUT:-devscale3}/log.txt, results beside it (ptxas.txt,
# tilescope.jsonl, nccl.jsonl, sim_vs_hw.jsonl, table.csv: 6 files). Under 4
# minutes on 2 or 4 GPUs.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/out}/${DEVSCALE_OUT:-devscale3}
mkdir -p "$out"
log=$out/log.txt
say() { echo "$*" | tee -a "$log"; }
status=0
step() { # name, seconds, output file, command...
  local name=$1 secs=$2 file=$3 t0=$SECONDS
  shift 3
  say "== $name (limit $secs s)"
  timeout "$secs" "$@" < /dev/null > "$file" 2>> "$log"
  local rc=$?
  say "== $name: exit $rc, $((SECONDS - t0)) s"
  [ $rc -eq 0 ] || status=1
  return $rc
}
ngpu=$(timeout 20 nvidia-smi -L < /dev/null | grep -c '^GPU')
say "== $(date -u) $ngpu GPU(s)"
timeout 20 nvidia-smi -L < /dev/null >> "$log" 2>&1
timeout 20 nvidia-smi topo -m < /dev/null 2>&1 | head -12 >> "$log"
for f in lowered_collectives.cu lowered_gemms.cu ts_devices.cuh; do
  [ -f "$here/$f" ] || { say "missing $here/$f: run bench/devscale/prepare.sh first"; exit 1; }
done
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
bin=/tmp/devscale3_bench
# compute_90a: the fused kernels use wgmma and setmaxnreg
say "== nvcc (limit 180 s)"
t0=$SECONDS
timeout 180 "$nvcc" -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I "$here" \
  -DTS_LOWERED='"lowered_collectives.cu"' -DTS_LOWERED_TP='"lowered_gemms.cu"' -DTS_LOWERED_AG \
  -o "$bin" "$here/devscale_bench.cu" -lcublas \
  < /dev/null > "$out/ptxas.txt" 2>&1
rc=$?
say "== nvcc: exit $rc, $((SECONDS - t0)) s"
if [ $rc -ne 0 ]; then tail -40 "$out/ptxas.txt" >> "$log"; say "nvcc failed"; exit 1; fi
# the fused kernels: registers, no stack frame or spills, no serialized wgmma
grep -A2 -E "entry function '(tp_gemm|allgather)" "$out/ptxas.txt" >> "$log"
if grep -q C7510 "$out/ptxas.txt"; then say "ptxas serialized a wgmma pipeline"; status=1; fi
g=$ngpu
if [ "$g" -ge 2 ]; then
  sizes=0.25,1,8,32,128
  tp=8192x8192x8192,128x8192x8192
  ag=8192x$((8192 / g))x8192
  if [ -f "$here/n${g}_dev0_X.npy" ]; then
    step "simulator = hardware, $g ranks" 60 "$out/sim_vs_hw.jsonl" "$bin" --ranks "$g" --lowered \
      --sim-compare "$here" --sim-tp "$here" --sizes-mib ""
  else
    say "== no simulator dumps for $g ranks (n${g}_*.npy): sim_vs_hw skipped"
  fi
  step "tilescope lowered, $g ranks" 150 "$out/tilescope.jsonl" "$bin" --ranks "$g" --lowered \
    --fused --sizes-mib $sizes --tp $tp --ag $ag
  step "nccl, $g ranks" 150 "$out/nccl.jsonl" python3 "$here/nccl_bench.py" --ranks "$g" \
    --sizes-mib $sizes --tp $tp --ag $ag
else
  step "tilescope lowered, 1 rank" 120 "$out/tilescope.jsonl" "$bin" --ranks 1 --lowered --fused \
    --sizes-mib 1,4 --tp 1024x1024x1024 --ag 1024x1024x1024
  step "tilescope lowered, 2 ranks on 1 GPU (correctness only)" 90 "$out/two_on_one.jsonl" "$bin" \
    --ranks 2 --lowered --sizes-mib 1,4 --iters 3
  step "nccl, 1 rank" 100 "$out/nccl.jsonl" python3 "$here/nccl_bench.py" --ranks 1 \
    --sizes-mib 1,4 --tp 1024x1024x1024 --ag 1024x1024x1024
fi
timeout 30 python3 "$here/summarize.py" "$out/tilescope.jsonl" "$out/nccl.jsonl" \
  "$out/sim_vs_hw.jsonl" "$out/two_on_one.jsonl" > "$out/table.csv" 2>> "$log" < /dev/null
cat "$out/table.csv" >> "$log"
cat "$out/table.csv"
say "== status $status, $SECONDS s"
exit $status
