# Sourced by the scripts that fill a device folder with points of
# kernels/gemm_bf16_sm90_family.tile (gen_tune_dev.sh, gen_sweep.sh): the
# point a tuning table picks at a shape, a point lowered once under a short
# name, and the family's where clause. They set ts (tilescope) and out (the
# folder, with points.csv begun) before calling these.
family=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/kernels/gemm_bf16_sm90_family.tile
declare -A names
count=0

# table_point TABLE M N K: the point `tilescope lower --auto` picks from TABLE
# (empty when it picks none).
table_point() {
  "$ts" lower "$family" --kernel gemm_bf16_sm90_family --auto --table "$1" \
    --args "M=$2,N=$3,K=$4" -o /dev/null 2>&1 >/dev/null |
    sed -n 's/.* at \(.*\) (tuning table, --auto)/\1/p'
}

# name_of POINT PREFIX: the point's name in REPLY (PREFIX and a two-digit
# count over all prefixes); on first use the point is instantiated, its
# kernel renamed so that one process can load them all, lowered into
# $out/NAME.cu and added to $out/points.csv.
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

# admits POINT M N K: the family's where clause at a shape (as calib.py's
# admits()).
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
