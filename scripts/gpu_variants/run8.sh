#!/bin/bash
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for v in mcA g64_fl6 b128x64s8; do
  timeout 90 ncu --clock-control none -k regex:"$v" --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats -c 1 python3 ../../codegen/bench.py --lib ./$v.so --kernel $v --args M=1024,N=1024,K=1024 --ref gemm_abt --reps 1 > $OUT/ncu_$v.log 2>&1
  echo "== $v"; grep -E "Duration|L2 Cache Throughput|Compute \(SM\)|DRAM Through|Memory Throughput|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Stall|Warp Cycles Per Issued" $OUT/ncu_$v.log | head -14
done
timeout 90 ncu --clock-control none -k regex:nvjet --section MemoryWorkloadAnalysis --section WarpStateStats -c 1 python3 mm.py > $OUT/ncu_cublas.log 2>&1
echo "== cublas"; grep -E "Duration|L2 Cache Throughput|Compute \(SM\)|DRAM Through|Memory Throughput|L2 Hit|Mem Busy|Max Bandwidth|Warp Cycles Per Issued" $OUT/ncu_cublas.log | head -14
