#!/bin/bash
# One device call: build the lowered kernels in gpu_run/ (made on the CPU
# machine by `tilescope lower`; the GPU image has no LLVM 14 to build tilescope
# itself), then do what `tilescope bench` does (nvcc -shared + codegen/bench.py)
# for every size, the ceilings, the SASS check, an ncu profile, and dumps of
# small GEMMs for the simulator-vs-hardware comparison. Results go to $OUT.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
log="$OUT/log.txt"
exec > >(tee "$log") 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
nvcc --version | tail -2
B=/tmp/tsb; mkdir -p $B
for k in gemm_bf16_sm90 rmsnorm; do
  nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC \
    gpu_run/$k.cu -o $B/$k.so || { echo "BUILD FAILED $k"; exit 1; }
done
cuobjdump -sass $B/gemm_bf16_sm90.so > $B/gemm.sass
echo "SASS HGMMA count: $(grep -c HGMMA $B/gemm.sass)  UTMALDG count: $(grep -c UTMALDG $B/gemm.sass)"
grep -m3 -E "HGMMA|UTMALDG" $B/gemm.sass
run() { timeout 120 python3 codegen/bench.py "$@" | tee -a "$OUT/results.jsonl"; }
export PYTHONUNBUFFERED=1
for s in 1024 4096 8192; do
  run --lib $B/gemm_bf16_sm90.so --kernel gemm_bf16_sm90 --args M=$s,N=$s,K=$s --ref gemm_abt --reps 50 --seed $s
done
run --lib $B/gemm_bf16_sm90.so --kernel gemm_bf16_sm90 --args M=4096,N=4096,K=4096 --ref gemm_abt --reps 50 --seed 7
for r in 4096 1024; do
  run --lib $B/rmsnorm.so --kernel rmsnorm_bf16 --args R=$r,H=$r --scalars eps=1e-6 --ref rmsnorm --reps 100 --seed $r
done
timeout 120 python3 codegen/ceilings.py | tee -a "$OUT/results.jsonl"
# Simulator versus hardware: inputs and the simulator's output made on the CPU
# machine by `tilescope sim --dump gpu_run/simN`; the GPU's output must equal
# the simulator's bit for bit.
for d in gpu_run/sim_*; do
  [ -d "$d" ] || continue
  args=$(cat "$d/args")
  timeout 60 python3 codegen/bench.py --lib $B/gemm_bf16_sm90.so --kernel gemm_bf16_sm90 --args "$args" \
    --ref gemm_abt --reps 3 --load "$d/" --expect "$d/C.npy" | tee -a "$OUT/results.jsonl"
done
# Profile one 4096 GEMM launch and one RMSNorm launch.
timeout 200 ncu --section SpeedOfLight --section Occupancy -k regex:gemm_bf16_sm90 -c 1 \
  python3 codegen/bench.py --lib $B/gemm_bf16_sm90.so --kernel gemm_bf16_sm90 --args M=4096,N=4096,K=4096 \
  --ref gemm_abt --reps 1 > "$OUT/ncu_gemm.txt" 2>&1
grep -E "Throughput|Duration|Registers|Achieved Occupancy|SM Frequency" "$OUT/ncu_gemm.txt" | head -20
timeout 120 ncu --section SpeedOfLight -k regex:rmsnorm -c 1 \
  python3 codegen/bench.py --lib $B/rmsnorm.so --kernel rmsnorm_bf16 --args R=4096,H=4096 --scalars eps=1e-6 \
  --ref rmsnorm --reps 1 > "$OUT/ncu_rms.txt" 2>&1
grep -E "Throughput|Duration" "$OUT/ncu_rms.txt" | head -10
echo "=== summary"
cat "$OUT/results.jsonl"
