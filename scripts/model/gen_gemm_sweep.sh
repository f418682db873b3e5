#!/usr/bin/env bash
# scripts/model/gen_gemm_sweep.sh TS TABLE SHAPES OUTDIR [EXTRA]: the table's point at each shape
# (sNN) plus EXTRA lines "POINT@SHAPE;SHAPE..." (xNN), lowered to OUTDIR/NAME.cu;
# OUTDIR/pairs.txt (NAME,SHAPE) and OUTDIR/points.csv (NAME,"POINT").
set -euo pipefail
ts=$1 table=$2 shapes=$3 out=$4 extra=${5:-/dev/null}
fam=$(cd "$(dirname "$0")/../.." && pwd)/kernels/gemm_bf16_sm90_family.tile
mkdir -p "$out"; : >"$out/pairs.txt"; echo "name,point" >"$out/points.csv"
declare -A names; count=0
name_of() {
  local point=$1 prefix=$2
  if [ -z "${names[$point]:-}" ]; then
    local name; name=$(printf '%s%02d' "$prefix" "$count"); count=$((count + 1))
    names[$point]=$name
    echo "$name,\"$point\"" >>"$out/points.csv"
    "$ts" instantiate "$fam" --kernel gemm_bf16_sm90_family --set "$point" -o "$out/$name.tile"
    sed -i "s/^kernel gemm_bf16_sm90_family(/kernel $name(/" "$out/$name.tile"
    "$ts" lower "$out/$name.tile" -o "$out/$name.cu" 2>/dev/null
    rm -f "$out/$name.tile"
  fi
  REPLY=${names[$point]}
}
for shape in $(grep -v '^#' "$shapes"); do
  IFS=x read -r m n k <<<"$shape"
  point=$("$ts" lower "$fam" --kernel gemm_bf16_sm90_family --auto --table "$table" \
    --args "M=$m,N=$n,K=$k" -o /dev/null 2>&1 >/dev/null | sed -n 's/.* at \(.*\) (tuning table, --auto)/\1/p')
  [ -n "$point" ] || { echo "no point for $shape"; continue; }
  name_of "$point" s
  echo "$REPLY,$shape" >>"$out/pairs.txt"
done
for line in $(grep -v '^#' "$extra"); do
  point=${line%%@*}
  name_of "$point" x
  IFS=';' read -ra at <<<"${line#*@}"
  for shape in "${at[@]}"; do echo "$REPLY,$shape" >>"$out/pairs.txt"; done
done
echo "$count points, $(wc -l <"$out/pairs.txt") pairs"
