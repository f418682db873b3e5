#!/bin/sh
# lower-nvcc.sh TILESCOPE FILE: lower FILE, compile it with nvcc for each
# kernel's target, check the PTX and ptxas's report (tilescope lower --verify-ptx).
# Exit 77 (skip) when no nvcc can be found; any failed check fails the test.
tilescope="$1"; file="$2"
nvcc="${TILESCOPE_NVCC:-/usr/local/cuda/bin/nvcc}"
if [ ! -x "$nvcc" ] && ! command -v nvcc >/dev/null 2>&1; then
  echo "SKIP: nvcc not found (looked for $nvcc and nvcc on PATH)"
  exit 77
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$tilescope" lower "$file" -o "$out/k.cu" --verify-ptx
