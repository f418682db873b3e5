#!/bin/sh
# CI check of the package `tilescope bench --devices N --package DIR` writes
# (tools/BenchDevices.h): its harness builds the bench library with nvcc
# exactly as it does on a GPU machine (python3 devbench.py --build-only), and
# the library exports the C entry points the ranks load (ts_bench_entry.cuh
# and the generated tsb_launch) and the kernel's launcher. Run on a GPU by
# `tilescope bench` itself (docs/scales.md).
# usage: devbench_package.sh NVCC SOURCE_ROOT WORKDIR TILESCOPE
set -eu
nvcc=$1 root=$2 work=$3 tilescope=$4
rm -rf "$work"
"$tilescope" bench "$root/kernels/allreduce_bf16.tile" --kernel allreduce_bf16 \
  --args E=32768 --devices 2 --package "$work" > /dev/null
python3 "$work/devbench.py" "$work/allreduce_bf16.n2.json" --build-only --nvcc "$nvcc"
for symbol in tsb_init tsb_local_data tsb_barrier tsb_error tsb_last_impl tsb_finalize \
  tsb_launch tilescope_launch_allreduce_bf16; do
  if ! nm -D --defined-only "$work/allreduce_bf16.so" | grep -q " T $symbol\$"; then
    echo "devbench_package: $work/allreduce_bf16.so does not export $symbol" >&2
    exit 1
  fi
done
echo "devbench_package: ok"
