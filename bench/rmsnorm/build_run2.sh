#!/usr/bin/env bash
# Builds run 2's libraries (run2.sh): every named point of
# kernels/rmsnorm_family.tile as kernel rf_POINT (libplain.so) and its
# evict-first twin (libef.so, make_ef.py), on the CPU machine.
#   bench/rmsnorm/build_run2.sh OUTDIR [TILESCOPE] [NVCC]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$1"
tilescope="${2:-$root/build/tools/tilescope}"
nvcc="${3:-/usr/local/cuda/bin/nvcc}"
mkdir -p "$out"
tile="$root/kernels/rmsnorm_family.tile"
: > "$out/all.tile"
: > "$out/kernels.txt"
for p in $(sed -n 's/^  point \([A-Za-z0-9_]*\)(.*/\1/p' "$tile"); do
  "$tilescope" instantiate "$tile" --set "$p" -o "$out/point.tile"
  sed "s/^kernel rmsnorm_bf16_family(/kernel rf_$p(/" "$out/point.tile" >> "$out/all.tile"
  echo "${p##*_h} rf_$p" >> "$out/kernels.txt"
done
"$tilescope" lower "$out/all.tile" -o "$out/plain.cu"
python3 "$root/bench/rmsnorm/make_ef.py" "$out/plain.cu" "$out/ef.cu"
for f in plain ef; do
  "$nvcc" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC \
    "$out/$f.cu" -o "$out/lib$f.so"
done
cp "$root/bench/rmsnorm/bench_rms.py" "$root/codegen/gpu_harness.py" "$root/bench/rmsnorm/run2.sh" \
  "$out/"
