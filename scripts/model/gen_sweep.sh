#!/usr/bin/env bash
# For each shape of SHAPES, the point `tilescope lower --auto` picks from the
# tuning table TABLE; lowers each distinct point once into OUTDIR/sNN.cu
# (kernel renamed sNN) and writes OUTDIR/points.csv (name, point) and
# OUTDIR/pairs.txt (name, shape) for calib.py --pairs. CPU machine.
# Usage: scripts/model/gen_sweep.sh TILESCOPE TABLE SHAPES OUTDIR
set -euo pipefail
ts=$1 table=$2 shapes=$3 out=$4
here=$(cd "$(dirname "$0")" && pwd)
. "$here/family_points.sh"
mkdir -p "$out"
echo "name,point" >"$out/points.csv"
: >"$out/pairs.txt"
for shape in $(grep -v '^#' "$shapes"); do
  IFS=x read -r m n k <<<"$shape"
  point=$(table_point "$table" "$m" "$n" "$k")
  [ -n "$point" ] || { echo "no point for $shape"; continue; }
  name_of "$point" s
  echo "$REPLY,$shape" >>"$out/pairs.txt"
done
