#!/usr/bin/env bash
# For each shape of SHAPES, the point `tilescope lower --auto` picks from the
# tuning table TABLE; lowers each distinct point once into OUTDIR/sNN.cu
# (kernel renamed sNN) and writes OUTDIR/points.csv (name, point) and
# OUTDIR/pairs.txt (name, shape) for calib.py --pairs. CPU machine.
# Usage: scripts/model/gen_sweep.sh TILESCOPE TABLE SHAPES OUTDIR
set -euo pipefail
ts=$1 table=$2 shapes=$3 out=$4
here=$(cd "$(dirname "$0")" && pwd)
family=$here/../../kernels/gemm_bf16_sm90_family.tile
mkdir -p "$out"
echo "name,point" >"$out/points.csv"
: >"$out/pairs.txt"
declare -A names
i=0
for shape in $(grep -v '^#' "$shapes"); do
  IFS=x read -r m n k <<<"$shape"
  point=$("$ts" lower "$family" --kernel gemm_bf16_sm90_family --auto --table "$table" \
    --args "M=$m,N=$n,K=$k" -o /dev/null 2>&1 >/dev/null | sed -n 's/.* at \(.*\) (tuning table, --auto)/\1/p')
  [ -n "$point" ] || { echo "no point for $shape"; continue; }
  if [ -z "${names[$point]:-}" ]; then
    name=$(printf 's%02d' "$i")
    i=$((i + 1))
    names[$point]=$name
    echo "$name,\"$point\"" >>"$out/points.csv"
    "$ts" instantiate "$family" --kernel gemm_bf16_sm90_family --set "$point" -o "$out/$name.tile"
    sed -i "s/^kernel gemm_bf16_sm90_family(/kernel $name(/" "$out/$name.tile"
    "$ts" lower "$out/$name.tile" -o "$out/$name.cu" 2>"$out/$name.lower.log"
  fi
  echo "${names[$point]},$shape" >>"$out/pairs.txt"
done
