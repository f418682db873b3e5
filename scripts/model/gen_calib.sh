#!/usr/bin/env bash
# Instantiates and lowers the calibration points (calib_points.txt) of
# kernels/gemm_bf16_sm90_family.tile into OUTDIR/pNN.cu, each kernel renamed
# pNN so that one process can load them all, and writes OUTDIR/points.csv
# (name, point). Runs on the CPU machine (needs tilescope, not a GPU).
# Usage: scripts/model/gen_calib.sh TILESCOPE OUTDIR
set -euo pipefail
ts=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
family=$here/../../kernels/gemm_bf16_sm90_family.tile
mkdir -p "$out"
echo "name,point" >"$out/points.csv"
i=0
grep -v '^#' "$here/calib_points.txt" | while IFS=, read -r bm bn st co ord pers; do
  name=$(printf 'p%02d' "$i")
  i=$((i + 1))
  set="BM=$bm,BN=$bn,STAGES=$st,CONSUMERS=$co,ORDER=$ord,PERSISTENT=$pers"
  echo "$name,\"$set\"" >>"$out/points.csv"
  [ -s "$out/$name.cu" ] && continue
  "$ts" instantiate "$family" --kernel gemm_bf16_sm90_family --set "$set" -o "$out/$name.tile"
  sed -i "s/^kernel gemm_bf16_sm90_family(/kernel $name(/" "$out/$name.tile"
  "$ts" lower --allow-unknown "$out/$name.tile" -o "$out/$name.cu" 2>"$out/$name.lower.log" ||
    { echo "lower failed for $set"; cat "$out/$name.lower.log"; }
done
