#!/usr/bin/env bash
# Regenerates tests/ptx/nvcc/*.ptx: every library kernel (kernels/*.tile)
# through `tilescope lower` and `nvcc -ptx` (sm_90a, or sm_100a for the
# Blackwell kernel), and NVCC_VERSION.txt with the compiler that made them.
#
#   tests/ptx/regenerate_nvcc.sh [TILESCOPE] [NVCC]
# defaults: build/tools/tilescope and /usr/local/cuda/bin/nvcc.
# Tests pin facts at line numbers of these files: after regenerating, rerun
# `lit tests/lit/ptx` and update the line numbers the tests name.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tilescope="${1:-$root/build/tools/tilescope}"
nvcc="${2:-/usr/local/cuda/bin/nvcc}"
out="$root/tests/ptx/nvcc"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
for tile in "$root"/kernels/*.tile; do
  name="$(basename "$tile" .tile)"
  arch=sm_90a
  grep -q 'target(sm_100a)' "$tile" && arch=sm_100a
  "$tilescope" lower "$tile" -o "$tmp/$name.cu"
  "$nvcc" -ptx -arch="$arch" "$tmp/$name.cu" -o "$out/$name.ptx"
  # ptxas's figures for --ptxas-log tests
  "$nvcc" -cubin -arch="$arch" -Xptxas -v "$tmp/$name.cu" -o "$tmp/$name.cubin" \
    2> "$out/$name.ptxas.txt"
done
"$nvcc" --version | tail -2 > "$out/NVCC_VERSION.txt"
echo "regenerated $(ls "$out"/*.ptx | wc -l) PTX files in $out"
