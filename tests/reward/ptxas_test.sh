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

set +e
"$tilescope" reward "$dir/ptxas/spills.tile" --static --ptxas --json > "$out/spills.json"
rc=$?
set -e
[ "$rc" = 1 ] || fail "spills.tile: exit $rc, expected 1"
grep -q '"code": "resources.ptxas-spills"' "$out/spills.json" || fail "spills.tile: no resources.ptxas-spills"
grep -q 'ptxas (sm_80): 64 registers/thread (budget 64)' "$out/spills.json" || fail "spills.tile: no ptxas figures"

set +e
"$tilescope" reward "$dir/ptxas/spills.tile" --static --json > "$out/estimate.json"
rc=$?
set -e
[ "$rc" = 3 ] || fail "spills.tile without --ptxas: exit $rc, expected 3 (static only)"
if grep -q 'ptxas (' "$out/estimate.json"; then fail "ptxas ran without --ptxas"; fi

set +e
"$tilescope" reward "$dir/ptxas/fits.tile" --static --ptxas --json > "$out/fits.json"
rc=$?
set -e
[ "$rc" = 3 ] || fail "fits.tile: exit $rc, expected 3 (static only, resources passed)"
grep -q 'ptxas (sm_80): [0-9]* registers/thread (budget 64), 0 bytes spill stores, 0 bytes spill loads' "$out/fits.json" || fail "fits.tile: no ptxas figures"
if grep -q 'resources.ptxas' "$out/fits.json"; then fail "fits.tile: a ptxas finding"; fi

set +e
"$tilescope" reward "$dir/../../kernels/gemm_bf16_sm90.tile" --static --ptxas --json > "$out/gemm.json"
rc=$?
set -e
[ "$rc" = 3 ] || fail "gemm_bf16_sm90: exit $rc, expected 3 (static only)"
grep -q 'ptxas (sm_90a): [0-9]* registers/thread (budget 168), 0 bytes spill stores' "$out/gemm.json" || fail "gemm_bf16_sm90: no ptxas figures"
echo "ok"
