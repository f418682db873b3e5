#!/usr/bin/env bash
# Builds the device folder of bench_rms2.py on the CPU machine:
#   bench/rmsnorm/h2048/build.sh POINTS.txt SHAPES.txt OUTDIR [TILESCOPE] [NVCC]
# POINTS.txt: as bench/rmsnorm/h1024/build.sh takes it ('H name SET'), which
# lowers them into fam.so / fam.txt (and POINTS2 with LOWER2's flags into
# fam2.so / fam2.txt, where set). SHAPES.txt: lines 'R H'; for each the
# point `tilescope lower --auto` picks (the tuning table's) is looked up among
# POINTS.txt's by its parameters (POINTS2's, lowered with LOWER2, when the
# table's entry carries the evict_first hint) and written to
# OUTDIR/sweep.txt as 'R H name' (the build stops if the table picks a point
# the list lacks).
# diag2.cu into diag2.so; the harness and run.sh beside them.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
points="$1"
shapes="$2"
out="$3"
tilescope="${4:-$root/build/tools/tilescope}"
nvcc="${5:-/usr/local/cuda/bin/nvcc}"
bash "$root/bench/rmsnorm/h1024/build.sh" "$points" "$out" "$tilescope" "$nvcc"
rm -f "$out/diag.cu" "$out/diag.so" "$out/bench_h1024.py" "$out/ncu_h1024.py"
# The picks: each SHAPES line's point, named by POINTS.txt.
: > "$out/sweep.txt"
while read -r r h; do
  [ -n "$r" ] || continue
  said=$("$tilescope" lower "$root/kernels/rmsnorm_family.tile" --auto --args "R=$r,H=$h" \
           -o "$out/pick.cu" 2>&1)
  set_=$(echo "$said" | sed -n 's/.* at \([^ ]*\) .*(tuning table.*/\1/p')
  # A pick with the L2 hint (the table's "evict_first") is POINTS2's point.
  from="$points"
  case "$said" in *"with --evict-first"*) from="$POINTS2" ;; esac
  name=$(python3 "$here/point_name.py" "$root/kernels/rmsnorm_family.tile" "$from" "$h" "$set_")
  echo "$r $h $name" >> "$out/sweep.txt"
done < "$shapes"
rm -f "$out/pick.cu"
flags=(-std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC)
cp "$here/diag2.cu" "$out/"
"$nvcc" "${flags[@]}" "$out/diag2.cu" -o "$out/diag2.so"
cp "$here/bench_rms2.py" "$here/run.sh" "$out/"
