#!/usr/bin/env bash
# Builds a device folder that times, against cuBLAS, the points a tuning
# table TABLE picks for the shapes of SHAPES (set "sweep", names sNN) and the
# points of a list LIST (lines SET:POINT@SHAPE;SHAPE;..., "sweep26" for every
# shape of SHAPES the point admits; names pNN), each distinct point lowered
# once (kernel renamed) into OUTDIR/NAME.cu. Writes OUTDIR/points.csv,
# OUTDIR/shapes.txt (every shape timed), OUTDIR/pairs_SET.txt and
# OUTDIR/sets.txt (SET:REPS, the sweep and 1024^3 sets at 20 and 50 runs,
# the others at 10) for scripts/model/run_tune_dev.sh, which is copied in as
# run.sh with calib.py.
# CPU machine. Usage: scripts/model/gen_tune5_dev.sh TILESCOPE TABLE SHAPES LIST OUTDIR
set -euo pipefail
ts=$1 table=$2 shapes=$3 list=$4 out=$5
here=$(cd "$(dirname "$0")" && pwd)
family=$here/../../kernels/gemm_bf16_sm90_family.tile
mkdir -p "$out"
rm -f "$out"/pairs_*.txt
echo "name,point" >"$out/points.csv"
declare -A names
count=0
name_of() {
  local point=$1 prefix=$2
  if [ -z "${names[$point]:-}" ]; then
    local name
    name=$(printf '%s%02d' "$prefix" "$count")
    count=$((count + 1))
    names[$point]=$name
    echo "$name,\"$point\"" >>"$out/points.csv"
    "$ts" instantiate "$family" --kernel gemm_bf16_sm90_family --set "$point" -o "$out/$name.tile"
    sed -i "s/^kernel gemm_bf16_sm90_family(/kernel $name(/" "$out/$name.tile"
    "$ts" lower "$out/$name.tile" -o "$out/$name.cu" 2>"$out/$name.lower.log"
    rm -f "$out/$name.tile" "$out/$name.lower.log"
  fi
  REPLY=${names[$point]}
}
# The family's where clause at a shape (as calib.py's admits()).
admits() {
  local point=$1 m=$2 n=$3 k=$4
  local split order bm
  split=$(sed -n 's/.*SPLIT=\([0-9]*\).*/\1/p' <<<"$point")
  order=$(sed -n 's/.*ORDER=\([a-z]*\).*/\1/p' <<<"$point")
  bm=$(sed -n 's/.*BM=\([0-9]*\).*/\1/p' <<<"$point")
  [ $((n % 8)) -eq 0 ] && [ $((k % 8)) -eq 0 ] || return 1
  [ "${split:-1}" -le 1 ] || [ $((k % (64 * split))) -eq 0 ] || return 1
  if [ "$order" = grouped ]; then
    [ "$m" -ge $((8 * bm)) ] && [ $((m % (8 * bm))) -eq 0 ] || return 1
  fi
  return 0
}
grep -v '^#' "$shapes" >"$out/shapes.txt"
for shape in $(cat "$out/shapes.txt"); do
  IFS=x read -r m n k <<<"$shape"
  point=$("$ts" lower "$family" --kernel gemm_bf16_sm90_family --auto --table "$table" \
    --args "M=$m,N=$n,K=$k" -o /dev/null 2>&1 >/dev/null | sed -n 's/.* at \(.*\) (tuning table, --auto)/\1/p')
  [ -n "$point" ] || { echo "no point for $shape"; continue; }
  name_of "$point" s
  echo "$REPLY,$shape" >>"$out/pairs_sweep.txt"
done
echo "sweep:20" >"$out/sets.txt"
for line in $(grep -v '^#' "$list"); do
  set=${line%%:*} rest=${line#*:}
  point=${rest%%@*} where=${rest#*@}
  name_of "$point" p
  if [ "$where" = sweep26 ]; then
    where=$(tr '\n' ';' <"$out/shapes.txt")
  fi
  IFS=';' read -ra list_shapes <<<"$where"
  for shape in "${list_shapes[@]}"; do
    [ -n "$shape" ] || continue
    IFS=x read -r m n k <<<"$shape"
    if admits "$point" "$m" "$n" "$k"; then
      echo "$REPLY,$shape" >>"$out/pairs_$set.txt"
      grep -qx "$shape" "$out/shapes.txt" || echo "$shape" >>"$out/shapes.txt"
    fi
  done
  if ! grep -q "^$set:" "$out/sets.txt"; then
    case $set in
      k1024) echo "$set:50" >>"$out/sets.txt" ;;
      new) echo "$set:20" >>"$out/sets.txt" ;;
      *) echo "$set:10" >>"$out/sets.txt" ;;
    esac
  fi
done
for f in "$out"/pairs_*.txt; do sort -u -o "$f" "$f"; done
echo "$count points; pairs: $(cat "$out"/pairs_*.txt | wc -l) ($(tr '\n' ' ' <"$out/sets.txt"))"
