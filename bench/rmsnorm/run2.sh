#!/bin/bash
# Run 2 (helper ptx): the named points of kernels/rmsnorm_family.tile, and the same kernels
# with evict-first X loads / Y stores, against Triton's RMSNorm at its best num_warps.
# libplain.so / libef.so: `tilescope lower` of the points (plain.cu; ef.cu = plain.cu with
# the 16-byte X loads and Y stores made ld/st.global.L1::no_allocate.L2::cache_hint with an
# evict_first policy), compiled on the CPU machine with nvcc 13.0.88 -std=c++17 -O3
# -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC; the folder as
# bench/rmsnorm/build_run2.sh writes it (with bench_rms.py and codegen/gpu_harness.py).
D=.dev/ptx
O=$OUT/ptx
mkdir -p "$O"
echo "start $(date -u +%FT%TZ)" > "$O/log.txt"
timeout 15 nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv < /dev/null >> "$O/log.txt" 2>&1
timeout 160 python3 "$D/bench_rms.py" "$D/libplain.so" "$D/kernels.txt" "$O" 130 --ef "$D/libef.so" --sleep < /dev/null >> "$O/log.txt" 2>&1
echo "exit $? $(date -u +%FT%TZ)" >> "$O/log.txt"
