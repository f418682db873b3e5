#!/usr/bin/env bash
# Builds the device folder of bench_h1024.py on the CPU machine:
#   bench/rmsnorm/h1024/build.sh POINTS.txt OUTDIR [TILESCOPE] [NVCC]
# POINTS.txt: lines 'H name SET' (SET as `tilescope instantiate --set` takes it,
# a named point or NAME=V,...); each point of kernels/rmsnorm_family.tile is
# instantiated as kernel NAME, all are lowered into fam.cu and compiled into
# fam.so (fam.txt lists them); diag.cu into diag.so; with the harness and the
# device script run.sh beside them.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
points="$1"
out="$2"
tilescope="${3:-$root/build/tools/tilescope}"
nvcc="${4:-/usr/local/cuda/bin/nvcc}"
mkdir -p "$out"
tile="$root/kernels/rmsnorm_family.tile"
# instantiate POINTS TILE LIST: every point of POINTS as its named kernel,
# appended to TILE, 'H name' lines to LIST.
instantiate() {
  : > "$2"
  : > "$3"
  while read -r h name set; do
    [ -n "$h" ] || continue
    "$tilescope" instantiate "$tile" --set "$set" -o "$out/point.tile"
    sed "s/^kernel rmsnorm_bf16_family(/kernel $name(/" "$out/point.tile" >> "$2"
    echo "$h $name" >> "$3"
  done < "$1"
  rm -f "$out/point.tile"
}
instantiate "$points" "$out/all.tile" "$out/fam.txt"
"$tilescope" lower "$out/all.tile" -o "$out/fam.cu"
flags=(-std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC)
"$nvcc" "${flags[@]}" "$out/fam.cu" -o "$out/fam.so"
# POINTS2 (optional, same form): lowered with LOWER2 (default --pdl) into
# fam2.so / fam2.txt.
if [ -n "${POINTS2:-}" ]; then
  instantiate "$POINTS2" "$out/all2.tile" "$out/fam2.txt"
  # shellcheck disable=SC2086
  "$tilescope" lower "$out/all2.tile" ${LOWER2:---pdl} -o "$out/fam2.cu"
  "$nvcc" "${flags[@]}" "$out/fam2.cu" -o "$out/fam2.so"
fi
cp "$here/diag.cu" "$out/"
"$nvcc" "${flags[@]}" "$out/diag.cu" -o "$out/diag.so"
cp "$here/bench_h1024.py" "$here/ncu_h1024.py" "$here/run.sh" "$root/codegen/gpu_harness.py" "$out/"
