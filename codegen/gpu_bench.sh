#!/bin/bash
# One device call (docs/perf.md, "GPU"): `tilescope bench` itself, run on the
# GPU machine from a portable package (scripts/portable), for every library
# size; the two ceilings; the SASS check; and the simulator-versus-hardware
# comparison of dumps made on the CPU machine by `tilescope sim --dump`.
#
#   bash codegen/gpu_bench.sh PKG KERNELS [SIMDUMPS]
#
# PKG: the portable package; KERNELS: a copy of kernels/; SIMDUMPS: folders
# made by `tilescope sim --dump DIR`, each with a file `args` (the shape
# symbols), optionally `scalars` (scale=0.375; eps=1e-6 when absent), and
# named sim_<kernel file stem>_*. Results: $OUT/log.txt and $OUT/results.jsonl.
set -u
PKG=$(cd "$1" && pwd); KDIR=$(cd "$2" && pwd); SIM=${3:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
export LD_LIBRARY_PATH=$PKG PYTHONUNBUFFERED=1
T=$PKG/tilescope; B=/tmp/tsbench; mkdir -p $B; R=$OUT/results.jsonl
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
nvcc --version | tail -1; grep PRETTY_NAME /etc/os-release; ldd --version | head -1
for f in $KDIR/*.tile; do $T check "$f"; done
# bench NAME FILE KERNEL ARGS REF REPS [SCALARS]
bench() {
  echo "--- tilescope bench $2 --kernel $3 --args $4 --ref $5 --reps $6 ${7:+--scalars $7}"
  (cd $B && timeout 150 $T bench "$2" --kernel "$3" --args "$4" --ref "$5" --reps "$6" \
     ${7:+--scalars "$7"} --keep "$B/$1") | sed "s/^/$1 /" | tee -a $R
}
# 4096^3 and 8192^3: the persistent kernel with the grouped tile order (M % 1024 == 0),
# and the general one (row-major tile order) for comparison.
bench gemm4096 $KDIR/gemm_bf16_sm90_grouped.tile gemm_bf16_sm90_grouped M=4096,N=4096,K=4096 gemm_abt 50
bench gemm8192 $KDIR/gemm_bf16_sm90_grouped.tile gemm_bf16_sm90_grouped M=8192,N=8192,K=8192 gemm_abt 30
bench gemm4096rm $KDIR/gemm_bf16_sm90.tile gemm_bf16_sm90 M=4096,N=4096,K=4096 gemm_abt 50
bench gemm8192rm $KDIR/gemm_bf16_sm90.tile gemm_bf16_sm90 M=8192,N=8192,K=8192 gemm_abt 30
# Per-shape kernel choice: at 1024^3 the 64x128-tile kernel (128 CTAs, one per SM, an
# 8-stage ring); the 64x64 kernel and the persistent 128x256 kernel are timed there too.
bench gemm1024 $KDIR/gemm_bf16_sm90_64x128.tile gemm_bf16_sm90_64x128 M=1024,N=1024,K=1024 gemm_abt 300
bench gemm1024small $KDIR/gemm_bf16_sm90_small.tile gemm_bf16_sm90_64x64 M=1024,N=1024,K=1024 gemm_abt 100
bench gemm1024big $KDIR/gemm_bf16_sm90.tile gemm_bf16_sm90 M=1024,N=1024,K=1024 gemm_abt 100
# Edge tiles (no dimension a multiple of the tile).
bench gemmedge $KDIR/gemm_bf16_sm90.tile gemm_bf16_sm90 M=4000,N=4040,K=4104 gemm_abt 30
# FP8 (e4m3, bf16 out) against torch._scaled_mm: per-tensor and block-scaled.
bench fp8pt4096 $KDIR/gemm_fp8_sm90.tile gemm_fp8_sm90 M=4096,N=4096,K=4096 fp8_gemm 50 scale=1.0
bench fp8pt8192 $KDIR/gemm_fp8_sm90.tile gemm_fp8_sm90 M=8192,N=8192,K=8192 fp8_gemm 30 scale=1.0
bench fp8bs4096 $KDIR/gemm_fp8_blockscaled_sm90.tile gemm_fp8_blockscaled_sm90 M=4096,N=4096,K=4096 fp8_gemm_blockscaled 50
bench fp8bs8192 $KDIR/gemm_fp8_blockscaled_sm90.tile gemm_fp8_blockscaled_sm90 M=8192,N=8192,K=8192 fp8_gemm_blockscaled 30
bench rms4096 $KDIR/rmsnorm.tile rmsnorm_bf16 R=4096,H=4096 rmsnorm 100 eps=1e-6
bench rms1024 $KDIR/rmsnorm.tile rmsnorm_bf16 R=1024,H=1024 rmsnorm 100 eps=1e-6
bench rms1p4096 $KDIR/rmsnorm_onepass.tile rmsnorm_bf16_h4096 R=4096,H=4096 rmsnorm 100 eps=1e-6
bench rms1p1024 $KDIR/rmsnorm_onepass.tile rmsnorm_bf16_h1024 R=1024,H=1024 rmsnorm 100 eps=1e-6
timeout 60 python3 $PKG/ceilings.py | sed "s/^/ceilings /" | tee -a $R
so=$B/gemm4096rm/gemm_bf16_sm90.so
cuobjdump -sass $so > $B/gemm.sass
echo "SASS of $so: HGMMA $(grep -c HGMMA $B/gemm.sass), UTMALDG $(grep -c UTMALDG $B/gemm.sass), UTMASTG $(grep -c UTMASTG $B/gemm.sass), STS $(grep -c "STS" $B/gemm.sass), LDL/STL $(grep -cE 'LDL|STL' $B/gemm.sass)"
grep -m1 -oE "HGMMA[.0-9A-Zx]*" $B/gemm.sass
# Simulator versus hardware, on the libraries bench built.
for d in ${SIM:+$SIM/sim_*}; do
  [ -d "$d" ] || continue
  case $(basename $d) in
    sim_rmsnorm_onepass_h4096_*) lib=$B/rms1p4096/rmsnorm_bf16_h4096.so k=rmsnorm_bf16_h4096 ref=rmsnorm out=Y ;;
    sim_rmsnorm_onepass_h1024_*) lib=$B/rms1p1024/rmsnorm_bf16_h1024.so k=rmsnorm_bf16_h1024 ref=rmsnorm out=Y ;;
    sim_rmsnorm_*) lib=$B/rms4096/rmsnorm_bf16.so k=rmsnorm_bf16 ref=rmsnorm out=Y ;;
    sim_gemm_fp8_blockscaled_sm90_*) lib=$B/fp8bs4096/gemm_fp8_blockscaled_sm90.so k=gemm_fp8_blockscaled_sm90 ref=fp8_gemm_blockscaled out=C ;;
    sim_gemm_fp8_sm90_*) lib=$B/fp8pt4096/gemm_fp8_sm90.so k=gemm_fp8_sm90 ref=fp8_gemm out=C ;;
    sim_gemm_bf16_sm90_small_*) lib=$B/gemm1024small/gemm_bf16_sm90_64x64.so k=gemm_bf16_sm90_64x64 ref=gemm_abt out=C ;;
    sim_gemm_bf16_sm90_grouped_*) lib=$B/gemm4096/gemm_bf16_sm90_grouped.so k=gemm_bf16_sm90_grouped ref=gemm_abt out=C ;;
    sim_gemm_bf16_sm90_64x128_*) lib=$B/gemm1024/gemm_bf16_sm90_64x128.so k=gemm_bf16_sm90_64x128 ref=gemm_abt out=C ;;
    *) lib=$so k=gemm_bf16_sm90 ref=gemm_abt out=C ;;
  esac
  echo "$(basename $d) $(timeout 60 python3 $PKG/bench.py --lib $lib --kernel $k --args "$(cat $d/args)" \
    --scalars "$(cat $d/scalars 2>/dev/null || echo eps=1e-6)" --ref $ref --reps 3 --load $d/ \
    --expect $d/$out.npy)" | tee -a $R
done
date -u
