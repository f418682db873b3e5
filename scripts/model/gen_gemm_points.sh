#!/usr/bin/env bash
# scripts/model/gen_gemm_points.sh TS FAMILY_TILE OUTDIR POINTS_FILE: for each line NAME POINT [TILE] of
# POINTS_FILE, instantiate POINT of TILE (default FAMILY_TILE), rename the
# kernel NAME, lower to OUTDIR/NAME.cu and build OUTDIR/NAME.so with nvcc.
set -euo pipefail
ts=$1 fam=$2 out=$3 list=$4
mkdir -p "$out"
while read -r name point tile; do
  [ -n "$name" ] && [ "${name:0:1}" != "#" ] || continue
  tile=${tile:-$fam}
  if [ "$point" = "-" ]; then
    sed "0,/^kernel [a-z0-9_]*(/s//kernel $name(/" "$tile" > "$out/$name.tile"
  else
    "$ts" instantiate "$tile" --kernel gemm_bf16_sm90_family --set "$point" -o "$out/$name.tile"
    sed -i "s/^kernel gemm_bf16_sm90_family(/kernel $name(/" "$out/$name.tile"
  fi
  "$ts" lower "$out/$name.tile" -o "$out/$name.cu"
done < "$list"
