#!/bin/bash
# RMSNorm family points against Triton's RMSNorm at its best num_warps (helper ptx, issue 19 item 7 / issue 15).
# librms.so: `tilescope lower` of the points in kernels.txt (one file), compiled on the CPU machine with
# nvcc 13.0.88 -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC;
# bench/rmsnorm/bench_rms.py and codegen/gpu_harness.py copied beside it.
D=.dev/ptx
O=$OUT/ptx
mkdir -p "$O"
echo "start $(date -u +%FT%TZ)" > "$O/log.txt"
timeout 15 nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv < /dev/null >> "$O/log.txt" 2>&1
timeout 160 python3 "$D/bench_rms.py" "$D/librms.so" "$D/kernels.txt" "$O" 135 < /dev/null >> "$O/log.txt" 2>&1
echo "exit $? $(date -u +%FT%TZ)" >> "$O/log.txt"
