#!/usr/bin/env bash
# Device side of the calibration (GPU machine): compiles every DIR/*.cu with
# nvcc in parallel, then times them against cuBLAS (calib.py).
# Usage: scripts/model/run_calib.sh DIR SHAPES OUT.csv [--pairs FILE]
set -uo pipefail
dir=$1 shapes=$2 csv=$3
here=$(cd "$(dirname "$0")" && pwd)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
start=$(date +%s)
ls "$dir"/*.cu | xargs -P 16 -I{} sh -c \
  'f={}; '"$nvcc"' -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC "$f" -o "${f%.cu}.so" 2>"${f%.cu}.nvcc.log" || echo "nvcc failed: $f"'
echo "compiled in $(( $(date +%s) - start )) s"
python3 "$here/calib.py" "$dir" "$shapes" "$csv" "${@:4}"
echo "total $(( $(date +%s) - start )) s"
