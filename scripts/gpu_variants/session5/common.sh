# Sourced by the session-5 run scripts (copies of them ran from gpu_run/var/ on the device):
# log to $OUT/NAME.log, print the GPU, and define
#   g LIB KERNEL ARGS REPS ROUND    time a GEMM library against cuBLAS (codegen/bench.py)
#   rn LIB KERNEL ARGS REPS ROUND   time an RMSNorm library against Triton
#   bits LIB KERNEL DUMP REF OUT    compare with a `tilescope sim --dump` folder bit for bit
cd "$(dirname "${BASH_SOURCE[1]}")"
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/$1.log) 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
B="python3 ../../codegen/bench.py"
p() { python3 -c "import json,sys; r=json.loads(sys.stdin.read()); b=r.get('cublas_ms', r.get('triton_ms')); print('$1 $2', 'ms %.5f base %.5f ratio %.3f ok %s err %.2e' % (r['ms'], b, r.get('ratio_vs_cublas', r.get('ratio_vs_triton')), r['ok'], r['rel_err']))"; }
g() { $B --lib ./$1.so --kernel $2 --args $3 --ref gemm_abt --reps $4 | p "$1 $3" $5; }
rn() { $B --lib ./$1.so --kernel $2 --args $3 --ref rmsnorm --scalars eps=1e-6 --reps $4 | p "$1 $3" $5; }
bits() { echo "bits $3 $($B --lib $1 --kernel $2 --args "$(cat $3/args)" --scalars eps=1e-6 --ref $4 --reps 3 --load $3/ --expect $3/$5.npy | python3 -c "import json,sys; r=json.loads(sys.stdin.read()); print(r['bit_identical'], 'of', r['compared'])")"; }
# ncu_time LIB KERNEL: the kernel's duration under ncu (one launch, 1024^3)
ncu_time() { timeout 120 ncu --clock-control none --section SpeedOfLight -k regex:"$2" --launch-count 1 $B --lib ./$1.so --kernel $2 --args M=1024,N=1024,K=1024 --ref gemm_abt --reps 1 2>&1 | grep -E "^  [a-z_0-9]+|Duration|Memory Through|Compute \(SM\)"; }
# rounds N "LIB KERNEL ARGS REPS" ...: N alternating rounds of the given GEMM timings
rounds() { local n=$1; shift; for round in $(seq $n); do for spec in "$@"; do g $spec $round; done; done; }
