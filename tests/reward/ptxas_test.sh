#!/bin/sh
# ptxas_test.sh TILESCOPE DIR: `tilescope reward --ptxas` lowers the
# candidate, compiles it with nvcc and checks ptxas's report (docs/reward.md):
# a kernel with 160 live accumulators per thread at 1024 threads spills and
# fails the resources stage with resources.ptxas-spills, its twin with 16
# passes with ptxas's figures in the reason, and the library GEMM for sm_90a
# stays within its budget. Exit 77 (skip) only when no nvcc can be found.
tilescope="$1"; dir="$2"
nvcc="${TILESCOPE_NVCC:-/usr/local/cuda/bin/nvcc}"
if [ ! -x "$nvcc" ] && ! command -v nvcc >/dev/null 2>&1; then
  echo "SKIP: nvcc not found (looked for $nvcc and nvcc on PATH)"
  exit 77
fi
set -e
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# reward WANT OUT FILE ARGS...: `tilescope reward FILE ARGS... --json` into $out/OUT.json,
# which must exit WANT.
reward() {
  want=$1 name=$2 file=$3
  shift 3
  set +e
  "$tilescope" reward "$file" "$@" --json > "$out/$name.json"
  rc=$?
  set -e
  [ "$rc" = "$want" ] || fail "$name: exit $rc, expected $want"
}

reward 1 spills "$dir/ptxas/spills.tile" --static --ptxas
grep -q '"code": "resources.ptxas-spills"' "$out/spills.json" || fail "spills.tile: no resources.ptxas-spills"
grep -q 'ptxas (sm_80): 64 registers/thread (budget 64)' "$out/spills.json" || fail "spills.tile: no ptxas figures"

# Without --ptxas: static only (exit 3), and ptxas does not run.
reward 3 estimate "$dir/ptxas/spills.tile" --static
if grep -q 'ptxas (' "$out/estimate.json"; then fail "ptxas ran without --ptxas"; fi

# Static only, resources passed.
reward 3 fits "$dir/ptxas/fits.tile" --static --ptxas
grep -q 'ptxas (sm_80): [0-9]* registers/thread (budget 64), 0 bytes spill stores, 0 bytes spill loads' "$out/fits.json" || fail "fits.tile: no ptxas figures"
if grep -q 'resources.ptxas' "$out/fits.json"; then fail "fits.tile: a ptxas finding"; fi

reward 3 gemm "$dir/../../kernels/gemm_bf16_sm90.tile" --static --ptxas
grep -q 'ptxas (sm_90a): [0-9]* registers/thread (budget 168), 0 bytes spill stores' "$out/gemm.json" || fail "gemm_bf16_sm90: no ptxas figures"
echo "ok"
