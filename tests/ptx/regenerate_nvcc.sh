#!/usr/bin/env bash
# Regenerates tests/ptx/nvcc/*.ptx: every library kernel (kernels/*.tile)
# through `tilescope lower` and `nvcc -ptx` (sm_90a, or sm_100a for the
# Blackwell kernel), and NVCC_VERSION.txt with the compiler that made them.
# A family (kernel parameters) is lowered at its named points, each an
# instance named FAMILY_POINT, all in one file -- except the GEMM family,
# whose named points are gemm_bf16_sm90 and gemm_bf16_sm90_grouped (the same
# canonical text, name aside: `tilescope check` says so), lowered from their
# own files. Device-scale kernels include codegen/runtime/ts_devices.cuh.
#
#   [ONLY="name ..."] [OUT_DIR=DIR] tests/ptx/regenerate_nvcc.sh [TILESCOPE] [NVCC]
# defaults: build/tools/tilescope and /usr/local/cuda/bin/nvcc; ONLY names
# the kernel files (without .tile) to regenerate, all when unset; OUT_DIR
# writes them there instead of tests/ptx/nvcc (to compare with the corpus).
# Tests pin facts at line numbers of these files: after regenerating, rerun
# `lit tests/lit/ptx` and update the line numbers the tests name.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tilescope="${1:-$root/build/tools/tilescope}"
nvcc="${2:-/usr/local/cuda/bin/nvcc}"
out="${OUT_DIR:-$root/tests/ptx/nvcc}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
for tile in "$root"/kernels/*.tile; do
  name="$(basename "$tile" .tile)"
  [ "$name" = gemm_bf16_sm90_family ] && continue
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then
    continue
  fi
  arch=sm_90a
  grep -q 'target(sm_100a)' "$tile" && arch=sm_100a
  src="$tile"
  points="$(sed -n 's/^  point \([A-Za-z0-9_]*\)(.*/\1/p' "$tile")"
  if [ -n "$points" ]; then
    family="$(sed -n 's/^kernel \([A-Za-z0-9_]*\)(.*/\1/p' "$tile" | head -1)"
    src="$tmp/$name.points.tile"
    : > "$src"
    for p in $points; do
      "$tilescope" instantiate "$tile" --set "$p" -o "$tmp/point.tile"
      sed "s/^kernel $family(/kernel ${family}_$p(/" "$tmp/point.tile" >> "$src"
    done
  fi
  "$tilescope" lower "$src" -o "$tmp/$name.cu"
  "$nvcc" -ptx -arch="$arch" -I "$root/codegen/runtime" "$tmp/$name.cu" -o "$out/$name.ptx"
  # ptxas's figures for --ptxas-log tests
  "$nvcc" -cubin -arch="$arch" -Xptxas -v -I "$root/codegen/runtime" "$tmp/$name.cu" \
    -o "$tmp/$name.cubin" 2> "$out/$name.ptxas.txt"
done
"$nvcc" --version | tail -2 > "$out/NVCC_VERSION.txt"
echo "regenerated $(ls "$out"/*.ptx | wc -l) PTX files in $out"
