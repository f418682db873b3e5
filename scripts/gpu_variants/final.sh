#!/bin/bash
# Session 4 final device run: the library benchmark, then RMSNorm barrier variant and the cluster kernel.
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
bash codegen/gpu_bench.sh gpu_run/pkg gpu_run/kernels gpu_run/sim > /dev/null 2>&1
cp $OUT/log.txt $OUT/gpu_bench_log.txt 2>/dev/null
cd gpu_run/var
export PYTHONUNBUFFERED=1
B="python3 ../../codegen/bench.py"
r() { $B --lib ./$1.so --kernel $1 --args $2 --ref rmsnorm --scalars eps=1e-6 --reps $3 | python3 -c "import json,sys; r=json.loads(sys.stdin.read()); print('$1', '$2', 'ms %.5f triton %.5f ratio %.3f ok %s' % (r['ms'], r['triton_ms'], r['ratio_vs_triton'], r['ok']))"; }
for round in 1 2 3; do r rms_base R=4096,H=4096 300; r rms_nb R=4096,H=4096 300; done | tee $OUT/rms_variants.txt
echo "cluster $($B --lib ./gemm_cluster_mc.so --kernel gemm_cluster_mc --args "$(cat ../sim/simc_cluster_a/args)" --ref gemm_abt --reps 3 --load ../sim/simc_cluster_a/ --expect ../sim/simc_cluster_a/C.npy)" | tee -a $OUT/rms_variants.txt
python3 ../../scripts/gpu_variants/summary.py < $OUT/results.jsonl
