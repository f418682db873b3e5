#!/usr/bin/env bash
# .dev/splitk23/prep.sh (helper splitk23, session 23): run on the dev box from anywhere
# after building build/tools/tilescope. Makes this folder a device folder in the pattern of
# scripts/model/run_gemm9_dev.sh: the H100 table's point at each shape of shapes.txt (sNN)
# and the points of extra.txt (xNN) lowered to NAME.cu (scripts/model/gen_gemm_sweep.sh),
# pairs.txt, points.csv, round3_pairs.txt (pairs reversed), gemm_run.py (a copy of
# scripts/model/gemm_run.py that also compares each output with cuBLAS's) and
# gpu_harness.py; plus pNN.cu, the column-sliced reduction as first written (pulls, one
# dsmem.load a peer, and a second cluster barrier: commit f9f0bf34's family) at two
# points, against the pushes that replaced it. The device half is run.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/.dev/splitk23
ts=$root/build/tools/tilescope
rm -f "$here"/[spx][0-9][0-9].cu
bash "$root/scripts/model/gen_gemm_sweep.sh" "$ts" "$root/model/tables/gemm_bf16_sm90_family.h100.json" \
  "$here/shapes.txt" "$here" "$here/extra.txt"
# The pull variant (same points, the family text of commit f9f0bf34).
tmp=$(mktemp -d)
git -C "$root" show f9f0bf34:kernels/gemm_bf16_sm90_family.tile >"$tmp/pull.tile"
n=0
while IFS='@' read -r point at; do
  name=$(printf 'p%02d' "$n"); n=$((n + 1))
  "$ts" instantiate "$tmp/pull.tile" --kernel gemm_bf16_sm90_family --set "$point" -o "$tmp/$name.tile"
  sed -i "s/^kernel gemm_bf16_sm90_family(/kernel $name(/" "$tmp/$name.tile"
  "$ts" check "$tmp/$name.tile" | tail -1
  "$ts" lower "$tmp/$name.tile" -o "$here/$name.cu"
  echo "$name,\"$point (pull, f9f0bf34)\"" >>"$here/points.csv"
  IFS=';' read -ra shapes <<<"$at"
  for s in "${shapes[@]}"; do echo "$name,$s" >>"$here/pairs.txt"; done
done <<'PULL'
BM=128,BN=128,STAGES=3,CONSUMERS=2,ORDER=row,PERSISTENT=false,SPLIT=8@512x512x4096;512x512x8192
BM=128,BN=128,STAGES=3,CONSUMERS=2,ORDER=row,PERSISTENT=false,SPLIT=4@256x2048x8192;1024x1024x16384
PULL
rm -rf "$tmp"
tac "$here/pairs.txt" >"$here/round3_pairs.txt"
# gemm_run.py with the relative error against cuBLAS's output as well.
python3 - "$root/scripts/model/gemm_run.py" "$here/gemm_run.py" <<'PY'
import sys
s = open(sys.argv[1]).read()
edits = [
    ('"ratio", "ok", "rel_err", "gpu"]', '"ratio", "ok", "rel_err", "gpu", "rel_err_cublas"]'),
    ("            ok = unwritten == 0 and err < 1e-2\n",
     "            ok = unwritten == 0 and err < 1e-2\n"
     "            cb = cub().float()\n"
     "            err_cb = (C.float() - cb).norm().item() / cb.norm().item()\n"),
    ('f"{tb/t:.3f}", ok, f"{err:.2e}", gpu])', 'f"{tb/t:.3f}", ok, f"{err:.2e}", gpu, f"{err_cb:.2e}"])'),
]
for old, new in edits:
    assert s.count(old) == 1, old
    s = s.replace(old, new)
open(sys.argv[2], "w").write(s)
PY
cp "$root/codegen/gpu_harness.py" "$here/gpu_harness.py"
echo "$(ls "$here"/*.cu | wc -l) .cu files, $(wc -l <"$here/pairs.txt") pairs"
