#!/bin/bash
# Session 26, helper newuser26: runs two of the new-user kernels of
# tests/lit/check/newuser-kernels.tile on the GPU against PyTorch (tilescope bench):
# the 64x192-tile Hopper GEMM (ragged N is not admitted: N % 192 == 0) and the naive
# guarded GEMM at ragged sizes. Needs a built tilescope (build/tools/tilescope) on an
# H100/H200 machine; about a minute. Usage: bash .dev/newuser26/gpu.sh
set -u
T=${TILESCOPE:-build/tools/tilescope}
F=tests/lit/check/newuser-kernels.tile
$T bench $F --kernel gemm_64x192 --args M=4096,N=4032,K=4096 --ref gemm_abt; echo "rc=$?"
$T bench $F --kernel gemm_64x192 --args M=192,N=384,K=128 --ref gemm_abt; echo "rc=$?"
$T bench $F --kernel gemm_guard --args M=1000,N=777,K=129 --ref gemm_ab; echo "rc=$?"
