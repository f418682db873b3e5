#!/usr/bin/env bash
# Builds a device folder that times points of the GEMM family against cuBLAS
# (issue 15) with scripts/model/run_tune_dev.sh, which it copies in as
# run.sh with calib.py and codegen/gpu_harness.py (run it on the GPU machine
# as `bash .dev/NAME/run.sh`). Each distinct point is lowered once
# (kernel renamed NAME) into OUTDIR/NAME.cu; OUTDIR/points.csv lists them and
# OUTDIR/pairs_SET.txt the (name, shape) pairs of each set for calib.py
# --pairs. CPU machine.
#
#   scripts/model/gen_tune_dev.sh TILESCOPE TABLE SHAPES OUTDIR
#     sweep: the point the tuning table TABLE picks for each shape of SHAPES
#     (sNN; a split-K point goes to the set split); then split-K alternatives
#     (kNN, EXTRA_POINTS, default scripts/model/split_points.txt, lines
#     POINT@SHAPE;SHAPE;...) at the shapes listed, and the points of
#     ACCURACY_POINTS (aNN, default scripts/model/accuracy_points.txt) at
#     every shape of SHAPES, each where its where clause admits the shape:
#     split-K points in split, the others in acc. SWEEP_ONLY=1: the table's
#     points only.
#   scripts/model/gen_tune_dev.sh --sets LIST TILESCOPE TABLE SHAPES OUTDIR
#     sweep as above (split-K points too), then the points of LIST (pNN,
#     lines SET:POINT@SHAPE;SHAPE;..., "@sweep26" for every shape of SHAPES)
#     in set SET at the listed shapes they admit; also OUTDIR/shapes.txt
#     (every shape timed) and OUTDIR/sets.txt (SET:REPS: sweep and new 20,
#     k1024 50, the others 10), which run.sh follows.
set -euo pipefail
list=
if [ "${1:-}" = --sets ]; then
  list=$2
  shift 2
fi
ts=$1 table=$2 shapes=$3 out=$4
here=$(cd "$(dirname "$0")" && pwd)
. "$here/family_points.sh"
mkdir -p "$out"
echo "name,point" >"$out/points.csv"
cp "$here/run_tune_dev.sh" "$out/run.sh"
cp "$here/calib.py" "$here/../../codegen/gpu_harness.py" "$out/"

# The table's point at each shape of SHAPES_FILE, in pairs_sweep.txt (a
# split-K point in pairs_SPLIT_SET.txt).
sweep() {
  local shapes_file=$1 split_set=$2 shape m n k point
  for shape in $(grep -v '^#' "$shapes_file"); do
    IFS=x read -r m n k <<<"$shape"
    point=$(table_point "$table" "$m" "$n" "$k")
    [ -n "$point" ] || { echo "no point for $shape"; continue; }
    name_of "$point" s
    if [[ $point == *SPLIT=1* ]]; then
      echo "$REPLY,$shape" >>"$out/pairs_sweep.txt"
    else
      echo "$REPLY,$shape" >>"$out/pairs_$split_set.txt"
    fi
  done
}

# add_admitted POINT SHAPE...: NAME,SHAPE (NAME in REPLY) for each shape the
# point admits, in pairs_acc.txt (pairs_split.txt for a split-K point).
add_admitted() {
  local point=$1 shape m n k set=acc
  shift
  [[ $point == *SPLIT=1* ]] || set=split
  for shape in "$@"; do
    IFS=x read -r m n k <<<"$shape"
    if admits "$point" "$m" "$n" "$k"; then
      echo "$REPLY,$shape" >>"$out/pairs_$set.txt"
    fi
  done
}

if [ -z "$list" ]; then
  : >"$out/pairs_sweep.txt"
  : >"$out/pairs_split.txt"
  : >"$out/pairs_acc.txt"
  sweep "$shapes" split
  extra=${EXTRA_POINTS:-$here/split_points.txt} accuracy=${ACCURACY_POINTS:-$here/accuracy_points.txt}
  if [ "${SWEEP_ONLY:-0}" = 1 ]; then
    extra=/dev/null accuracy=/dev/null
  fi
  for p in $(grep -v '^#' "$extra"); do
    point=${p%%@*}
    name_of "$point" k
    IFS=';' read -ra at <<<"${p#*@}"
    add_admitted "$point" "${at[@]}"
  done
  for point in $(grep -v '^#' "$accuracy"); do
    name_of "$point" a
    # shellcheck disable=SC2046
    add_admitted "$point" $(grep -v '^#' "$shapes")
  done
  sort -u -o "$out/pairs_split.txt" "$out/pairs_split.txt"
  sort -u -o "$out/pairs_acc.txt" "$out/pairs_acc.txt"
  echo "$count points; pairs: $(wc -l <"$out/pairs_sweep.txt") sweep, $(wc -l <"$out/pairs_split.txt") split, $(wc -l <"$out/pairs_acc.txt") accuracy"
  exit 0
fi

rm -f "$out"/pairs_*.txt
grep -v '^#' "$shapes" >"$out/shapes.txt"
sweep "$out/shapes.txt" sweep
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
