#!/usr/bin/env bash
# Builds a device folder for one run of the GEMM family against cuBLAS
# (issue 15): the points the tuning table TABLE picks for the shapes of
# SHAPES (sNN, "sweep"), a fixed set of points for the model's rank
# correlation (aNN, scripts/model/accuracy_points.txt, timed at every shape
# their where clause admits), and split-K alternatives at the deep-K shapes
# (kNN, scripts/model/split_points.txt). Lowers each distinct point once
# (kernel renamed) into OUTDIR/NAME.cu and writes OUTDIR/points.csv and the
# pairs files pairs_sweep.txt, pairs_split.txt, pairs_acc.txt for calib.py.
# CPU machine. Usage: scripts/model/gen_tune_dev.sh TILESCOPE TABLE SHAPES OUTDIR
# With SWEEP_ONLY=1 in the environment, only the table's points;
# EXTRA_POINTS and ACCURACY_POINTS name other files of those two lists.
set -euo pipefail
ts=$1 table=$2 shapes=$3 out=$4
here=$(cd "$(dirname "$0")" && pwd)
family=$here/../../kernels/gemm_bf16_sm90_family.tile
mkdir -p "$out"
echo "name,point" >"$out/points.csv"
: >"$out/pairs_sweep.txt"
: >"$out/pairs_split.txt"
: >"$out/pairs_acc.txt"
declare -A names
count=0
# name_of POINT PREFIX: the point's name, lowering it on first use.
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
for shape in $(grep -v '^#' "$shapes"); do
  IFS=x read -r m n k <<<"$shape"
  point=$("$ts" lower "$family" --kernel gemm_bf16_sm90_family --auto --table "$table" \
    --args "M=$m,N=$n,K=$k" -o /dev/null 2>&1 >/dev/null | sed -n 's/.* at \(.*\) (tuning table, --auto)/\1/p')
  [ -n "$point" ] || { echo "no point for $shape"; continue; }
  name_of "$point" s
  if [[ $point == *SPLIT=1* ]]; then
    echo "$REPLY,$shape" >>"$out/pairs_sweep.txt"
  else
    echo "$REPLY,$shape" >>"$out/pairs_split.txt"
  fi
done
extra=${EXTRA_POINTS:-$here/split_points.txt} accuracy=${ACCURACY_POINTS:-$here/accuracy_points.txt}
if [ "${SWEEP_ONLY:-0}" = 1 ]; then
  extra=/dev/null accuracy=/dev/null
fi
for p in $(grep -v '^#' "$extra"); do
  point=${p%%@*}
  name_of "$point" k
  IFS=';' read -ra list <<<"${p#*@}"
  for shape in "${list[@]}"; do
    IFS=x read -r m n k <<<"$shape"
    if admits "$point" "$m" "$n" "$k"; then
      if [[ $point == *SPLIT=1* ]]; then
        echo "$REPLY,$shape" >>"$out/pairs_acc.txt"
      else
        echo "$REPLY,$shape" >>"$out/pairs_split.txt"
      fi
    fi
  done
done
for point in $(grep -v '^#' "$accuracy"); do
  name_of "$point" a
  for shape in $(grep -v '^#' "$shapes"); do
    IFS=x read -r m n k <<<"$shape"
    if admits "$point" "$m" "$n" "$k"; then
      if [[ $point == *SPLIT=1* ]]; then
        echo "$REPLY,$shape" >>"$out/pairs_acc.txt"
      else
        echo "$REPLY,$shape" >>"$out/pairs_split.txt"
      fi
    fi
  done
done
sort -u -o "$out/pairs_split.txt" "$out/pairs_split.txt"
sort -u -o "$out/pairs_acc.txt" "$out/pairs_acc.txt"
echo "$count points; pairs: $(wc -l <"$out/pairs_sweep.txt") sweep, $(wc -l <"$out/pairs_split.txt") split, $(wc -l <"$out/pairs_acc.txt") accuracy"
